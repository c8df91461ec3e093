// A replay's answer from its recording (playback.hpp).
#include "server/playback.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "server/fault_steps.hpp"
#include "server/upstream_framing.hpp"
#include "server/whole_fault.hpp"

namespace relsim::mock {
namespace {

// Waits until `ms` (recorded, since the hop began) times the pace have
// passed since the request was read; false when the client went meanwhile.
net::awaitable<bool> play_until(Connection& conn, const Popped& p, double ms) {
  const double at = p.received_ms + ms * conn.state().config().replay_pace;
  const double wait = at - conn.state().now_ms();
  if (wait <= 0.0) co_return true;
  co_return co_await conn.delay(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(wait)));
}

std::optional<FaultKind> entry_fault(const Popped& p) {
  return p.entry.reply == Reply::fault && wire::streams(p.entry) ? std::optional<FaultKind>(p.entry.fault)
                                                                 : std::nullopt;
}

bool header_starts(const RecordedExchange& x, std::string_view name, std::string_view prefix) {
  for (const auto& [n, v] : x.response_headers)
    if (n == name) return std::string_view(v).substr(0, prefix.size()) == prefix;
  return false;
}

// A recorded event stream, event by event at its times, broken as the entry says.
net::awaitable<Outcome> play_events(Connection& conn, const RecordedExchange& x, std::int64_t task, const Popped& p,
                               bool keep) {
  const int status = *x.status;
  const Outcome gone{status, "client_gone", false};
  const bool breakable = status == 200;
  StreamFault fault(breakable ? entry_fault(p) : std::nullopt, p.dialect);
  const StreamInFlight flight(conn.state().metrics(), p.dialect, status == 200);
  std::string pending = framed_head(status, "", x.response_headers, keep, false);
  if (!co_await play_until(conn, p, x.headers_ms)) co_return gone;
  for (const auto& [ms, text] : x.events()) {
    if (!pending.empty() && conn.state().now_ms() < p.received_ms + ms * conn.state().config().replay_pace &&
        !co_await conn.write(std::exchange(pending, {})))
      co_return gone;
    if (!co_await play_until(conn, p, ms)) co_return gone;
    if (const std::optional<Outcome> ended =
            co_await send_steps(conn, fault.feed(text), pending, task, p, status, status == 200))
      co_return *ended;
    if (fault.done()) break;
  }
  if (!fault.done()) {
    if (const std::optional<Outcome> ended =
            co_await send_steps(conn, fault.finish(), pending, task, p, status, status == 200))
      co_return *ended;
  }
  if (!x.complete() && !fault.done()) {  // the upstream broke off here: so does the replay
    if (!co_await play_until(conn, p, x.end_ms())) co_return gone;
    if (!pending.empty()) co_await conn.write(std::exchange(pending, {}));
    conn.close_socket();
    co_return Outcome{status, "closed", false};
  }
  pending += wire::kLastChunk;
  if (!co_await conn.write(pending)) co_return gone;
  co_return Outcome{status, "complete", keep};
}

// A recorded body that is not an event stream: the head at its time, the
// body at the answer's end; a 200 JSON one broken whole as the entry says.
net::awaitable<Outcome> play_body(Connection& conn, const RecordedExchange& x, std::int64_t task, const Popped& p,
                             bool keep) {
  const int status = *x.status;
  const Outcome gone{status, "client_gone", false};
  if (!co_await play_until(conn, p, x.headers_ms)) co_return gone;
  if (!x.complete()) {  // it broke off: what came, chunked, then a close
    std::string out = framed_head(status, "", x.response_headers, keep, false);
    if (!x.body().empty()) out += wire::chunk(x.body());
    if (co_await play_until(conn, p, x.end_ms())) co_await conn.write(out);
    conn.close_socket();
    co_return Outcome{status, "closed", false};
  }
  const std::optional<FaultKind> kind =
      status == 200 && header_starts(x, "content-type", "application/json") ? entry_fault(p) : std::nullopt;
  const wire::WholeReply w = wire::break_whole(kind, p.dialect, x.body());
  const std::string head = framed_head(status, "", x.response_headers, keep, false, w.content_length);
  if (w.hold_before_body) {
    if (!co_await conn.write(head)) co_return gone;
    const HoldEnd h = co_await conn.hold(task, p.epoch, "");
    if (h != HoldEnd::released) co_return Outcome{status, end_of(h), false};
    if (!co_await conn.write(w.body)) co_return gone;
  } else {
    if (!co_await play_until(conn, p, x.end_ms())) co_return gone;
    if (!co_await conn.write(head + w.body)) co_return gone;
  }
  if (!w.clean_end) {
    conn.close_socket();
    co_return Outcome{status, "closed", false};
  }
  co_return Outcome{status, "complete", keep};
}

}  // namespace

net::awaitable<Outcome> play(Connection& conn, std::shared_ptr<const RecordedExchange> recorded, std::int64_t task,
                             const Popped& p, bool keep) {
  const RecordedExchange& x = *recorded;
  if (!x.status) {  // the upstream failed before its headers: the proxy's 502
    if (!co_await play_until(conn, p, x.headers_ms)) co_return Outcome{0, "client_gone", false};
    const bool ok = co_await conn.send_error(502, "api_error", x.error.empty() ? "the upstream failed" : x.error, keep,
                                             {}, p.dialect);
    co_return Outcome{502, ok ? "complete" : "client_gone", ok && keep};
  }
  if (x.event_stream()) co_return co_await play_events(conn, x, task, p, keep);
  co_return co_await play_body(conn, x, task, p, keep);
}

}  // namespace relsim::mock
