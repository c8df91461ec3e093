// Answering a messages request from its script entry (replay.hpp).
#include "server/replay.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "relsim/core/parse.hpp"
#include "server/openai_wire.hpp"
#include "server/playback.hpp"
#include "server/upstream.hpp"

namespace relsim::mock {
namespace {

// A 200 event stream (`as` is ok or an in-stream fault kind), holding where
// the entry's stall or gate says.
net::awaitable<Outcome> stream(Connection& conn, std::int64_t task, const Popped& p, const ScriptEntry& as,
                               std::size_t body_bytes, bool keep, bool usage) {
  const Dialect dialect = p.dialect;
  const wire::StreamScript s = dialect == Dialect::openai
                                   ? wire::openai::stream_script(as, task, p.index, usage, body_bytes)
                                   : wire::stream_script(as, task, p.index, body_bytes);
  const Outcome gone{200, "client_gone", false};
  const StreamInFlight flight(conn.state().metrics(), dialect);
  // An entry that is not shaped goes out in as few writes as it can: the
  // head and every chunk up to a hold (or the end) in one. A shaped one
  // writes each chunk on its own, as its pacing says. The bytes are the same.
  const bool coalesce = !as.shaped();
  std::string pending = wire::stream_head(wire::request_id(task, p.index), keep, p.headers, dialect);
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
    if (i == 0) conn.mark_first_event();  // a coalesced event goes out with the next write, which does not wait
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

// The OpenAI dialect's reply to a request that does not stream: one
// chat.completion (or what its fault leaves of one), held at its gate and,
// for a stall, between the head and the body.
net::awaitable<Outcome> whole(Connection& conn, std::int64_t task, const Popped& p, const ScriptEntry& as,
                              std::size_t body_bytes, bool keep) {
  const wire::WholeReply w = wire::openai::whole_reply(as, task, p.index, body_bytes);
  const Outcome gone{200, "client_gone", false};
  const std::string head = wire::response_head(200, w.content_length, "application/json",
                                               wire::request_id(task, p.index), keep, p.headers, Dialect::openai);
  const bool waits = !as.gate.empty() || w.hold_before_body || as.shaped();
  if (!waits) {
    if (!co_await conn.write(head + w.body)) co_return gone;
  } else {
    if (!co_await conn.write(head)) co_return gone;
    if (!as.gate.empty()) {
      const HoldEnd h = co_await conn.hold(task, p.epoch, as.gate);
      if (h != HoldEnd::released) co_return Outcome{200, end_of(h), false};
    }
    if (w.hold_before_body) {
      const HoldEnd h = co_await conn.hold(task, p.epoch, "");
      if (h != HoldEnd::released) co_return Outcome{200, end_of(h), false};
    }
    if (as.chunk_delay_ms > 0 && !co_await conn.delay(std::chrono::milliseconds(as.chunk_delay_ms))) co_return gone;
    if (!co_await conn.paced_write(w.body, as)) co_return gone;
  }
  if (!w.clean_end) {
    conn.close_socket();
    co_return Outcome{200, "closed", false};
  }
  co_return Outcome{200, "complete", keep};
}

// An http_* fault kind: its status and an API error body. In the OpenAI
// dialect a 429 also says its limit is spent and when it resets, as
// OpenAI's x-ratelimit headers do (provider mode's headers say more).
net::awaitable<Outcome> error_status(Connection& conn, std::int64_t task, const Popped& p, bool keep,
                                     Dialect dialect) {
  const FaultKind kind = p.entry.fault;
  const wire::HttpError err = wire::http_error(kind);
  const ServerConfig& config = conn.state().config();
  wire::Headers extra = p.headers;
  if (kind == FaultKind::http_429) {
    extra.emplace_back("retry-after", config.retry_after);
    if (const std::string& ms = config.retry_after_ms; !ms.empty()) extra.emplace_back("retry-after-ms", ms);
    if (dialect == Dialect::openai && p.headers.empty()) {
      extra.emplace_back("x-ratelimit-remaining-requests", "0");
      const double wait = !config.retry_after_ms.empty() ? parse_number<double>(config.retry_after_ms).value_or(0) / 1000
                                                         : parse_number<double>(config.retry_after).value_or(0);
      extra.emplace_back("x-ratelimit-reset-requests", wire::openai::duration(wait));
    }
  }
  if (kind == FaultKind::http_529) extra.emplace_back("x-should-retry", "true");
  const bool ok = co_await conn.write(wire::json_response(err.status, wire::error_body(dialect, err.type, err.message),
                                                          wire::request_id(task, p.index), keep, extra, dialect));
  co_return Outcome{err.status, ok ? "complete" : "client_gone", ok && keep};
}

}  // namespace

net::awaitable<Outcome> replay(Connection& conn, std::int64_t task, const Popped& p, const Request& req, bool keep,
                               Json& upstream, const wire::Asked& asked,
                               std::shared_ptr<const RecordedExchange> recorded) {
  const Dialect dialect = p.dialect;
  const ScriptEntry& e = p.entry;
  const std::size_t body_bytes = req.body().size();
  const bool proxy = conn.state().config().upstream.has_value();
  if (wire::streams(e)) {
    if (recorded) co_return co_await play(conn, std::move(recorded), task, p, keep);
    if (proxy) co_return co_await forward(conn, req, task, p, keep, upstream);
    if (!asked.stream) co_return co_await whole(conn, task, p, e, body_bytes, keep);
    co_return co_await stream(conn, task, p, e, body_bytes, keep, asked.usage);
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
      if (recorded) co_return co_await play(conn, std::move(recorded), task, p, keep);
      if (proxy) co_return co_await forward(conn, req, task, p, keep, upstream);
      ScriptEntry as = e;
      as.reply = Reply::ok;
      if (!asked.stream) co_return co_await whole(conn, task, p, as, body_bytes, keep);
      co_return co_await stream(conn, task, p, as, body_bytes, keep, asked.usage);
    }
    default:
      co_return co_await error_status(conn, task, p, keep, dialect);
  }
}

}  // namespace relsim::mock
