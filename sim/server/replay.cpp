// Answering a messages request from its script entry (replay.hpp).
#include "server/replay.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "server/upstream.hpp"

namespace relsim::mock {
namespace {

// A 200 event stream (`as` is ok or an in-stream fault kind), holding where
// the entry's stall or gate says.
net::awaitable<Outcome> stream(Connection& conn, std::int64_t task, const Popped& p, const ScriptEntry& as,
                               std::size_t body_bytes, bool keep) {
  const wire::StreamScript s = wire::stream_script(as, task, p.index, body_bytes);
  const Outcome gone{200, "client_gone", false};
  // An entry that is not shaped goes out in as few writes as it can: the
  // head and every chunk up to a hold (or the end) in one. A shaped one
  // writes each chunk on its own, as its pacing says. The bytes are the same.
  const bool coalesce = !as.shaped();
  std::string pending = wire::stream_head(wire::request_id(task, p.index), keep, p.headers);
  if (!coalesce && !co_await conn.write(std::exchange(pending, {}))) co_return gone;
  for (std::size_t i = 0; i <= s.events.size(); ++i) {
    if (i == s.gate_at && !as.gate.empty()) {
      const HoldEnd h = co_await conn.hold(task, p.epoch, as.gate);
      if (h != HoldEnd::released) co_return Outcome{200, end_of(h), false};
    }
    if (i == s.hold_at) {
      if (!pending.empty() && !co_await conn.write(std::exchange(pending, {}))) co_return gone;
      const HoldEnd h = co_await conn.hold(task, p.epoch, "");
      if (h != HoldEnd::released) co_return Outcome{200, end_of(h), false};
    }
    if (i == s.events.size()) break;
    if (coalesce) {
      wire::append_chunk(pending, s.events[i]);
      continue;
    }
    if (as.chunk_delay_ms > 0 && !co_await conn.delay(std::chrono::milliseconds(as.chunk_delay_ms))) co_return gone;
    if (!co_await conn.paced_write(wire::chunk(s.events[i]), as)) co_return gone;
  }
  if (!s.clean_end) {
    if (!pending.empty() && !co_await conn.write(std::exchange(pending, {}))) co_return gone;
    conn.close_socket();
    co_return Outcome{200, "closed", false};
  }
  if (coalesce) {
    pending += wire::kLastChunk;
    if (!co_await conn.write(std::exchange(pending, {}))) co_return gone;
  } else if (!co_await conn.paced_write(wire::kLastChunk, as)) {
    co_return gone;
  }
  co_return Outcome{200, "complete", keep};
}

// An http_* fault kind: its status and an API error body.
net::awaitable<Outcome> error_status(Connection& conn, std::int64_t task, const Popped& p, bool keep) {
  const FaultKind kind = p.entry.fault;
  const wire::HttpError err = wire::http_error(kind);
  wire::Headers extra = p.headers;
  if (kind == FaultKind::http_429) {
    extra.emplace_back("retry-after", conn.state().config().retry_after);
    if (const std::string& ms = conn.state().config().retry_after_ms; !ms.empty()) extra.emplace_back("retry-after-ms", ms);
  }
  if (kind == FaultKind::http_529) extra.emplace_back("x-should-retry", "true");
  const bool ok = co_await conn.write(wire::json_response(err.status, wire::error_body(err.type, err.message),
                                                          wire::request_id(task, p.index), keep, extra));
  co_return Outcome{err.status, ok ? "complete" : "client_gone", ok && keep};
}

}  // namespace

net::awaitable<Outcome> replay(Connection& conn, std::int64_t task, const Popped& p, const Request& req, bool keep,
                               Json& upstream) {
  const ScriptEntry& e = p.entry;
  const std::size_t body_bytes = req.body().size();
  const bool proxy = conn.state().config().upstream.has_value();
  if (wire::streams(e)) {
    if (proxy) co_return co_await forward(conn, req, task, p, keep, upstream);
    co_return co_await stream(conn, task, p, e, body_bytes, keep);
  }
  // A reply that does not stream waits at its gate before its first byte.
  if (!e.gate.empty()) {
    const HoldEnd h = co_await conn.hold(task, p.epoch, e.gate);
    if (h != HoldEnd::released) co_return Outcome{0, end_of(h), false};
  }
  if (e.reply == Reply::empty) {
    conn.close_socket();
    co_return Outcome{0, "closed", false};
  }
  if (e.reply == Reply::garbage) {
    const bool ok = co_await conn.write(wire::garbage(task, p.index));
    conn.close_socket();
    co_return Outcome{0, ok ? "closed" : "client_gone", false};
  }
  switch (e.fault) {
    case FaultKind::reset:
      conn.reset_socket();
      co_return Outcome{0, "reset", false};
    case FaultKind::slow_headers: {
      const HoldEnd h = co_await conn.hold(task, p.epoch, "");
      if (h != HoldEnd::released) co_return Outcome{0, end_of(h), false};
      if (proxy) co_return co_await forward(conn, req, task, p, keep, upstream);
      ScriptEntry as = e;
      as.reply = Reply::ok;
      co_return co_await stream(conn, task, p, as, body_bytes, keep);
    }
    default:
      co_return co_await error_status(conn, task, p, keep);
  }
}

}  // namespace relsim::mock
