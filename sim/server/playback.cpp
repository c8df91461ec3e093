// A replay's answer from its recording (playback.hpp).
#include "server/playback.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/fault_steps.hpp"
#include "server/upstream_framing.hpp"
#include "server/whole_fault.hpp"

namespace relsim::mock {
namespace {

// The recorded times of one answer on the server's clock: `ms` after the
// hop began is base + ms times the pace, base the request's arrival, moved
// on by however long a hold (a stall) kept the answer.
class Schedule {
 public:
  Schedule(Connection& conn, const Popped& p) : conn_(conn), base_(p.received_ms) {}
  double at(double ms) const { return base_ + ms * conn_.state().config().replay_pace; }
  bool due(double ms) const { return conn_.state().now_ms() >= at(ms); }
  // Waits until `ms`; false when the client went meanwhile.
  net::awaitable<bool> until(double ms) {
    const double wait = at(ms) - conn_.state().now_ms();
    if (wait <= 0.0) co_return true;
    co_return co_await conn_.delay(
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(wait)));
  }
  // A hold that began at `since` (the server's clock) has just ended.
  void held_since(double since) { base_ += conn_.state().now_ms() - since; }

 private:
  Connection& conn_;
  double base_;
};

std::optional<FaultKind> entry_fault(const Popped& p) {
  return p.entry.reply == Reply::fault && wire::streams(p.entry) ? std::optional<FaultKind>(p.entry.fault)
                                                                 : std::nullopt;
}

bool header_starts(const RecordedExchange& x, std::string_view name, std::string_view prefix) {
  for (const auto& [n, v] : x.response_headers)
    if (n == name) return std::string_view(v).substr(0, prefix.size()) == prefix;
  return false;
}

// The recorded headers and the provider's rate-limit headers, when it has any.
std::vector<std::pair<std::string, std::string>> fields_of(const RecordedExchange& x, const Popped& p) {
  std::vector<std::pair<std::string, std::string>> out = x.response_headers;
  out.insert(out.end(), p.headers.begin(), p.headers.end());
  return out;
}

// A recorded event stream, event by event at its times, broken as the entry says.
net::awaitable<Outcome> play_events(Connection& conn, const RecordedExchange& x, std::int64_t task, const Popped& p,
                                    bool keep) {
  const int status = *x.status;
  const Outcome gone{status, "client_gone", false};
  const bool events = status == 200;
  StreamFault fault(events ? entry_fault(p) : std::nullopt, p.dialect);
  const StreamInFlight flight(conn.state().metrics(), p.dialect, events);
  Schedule when(conn, p);
  std::string pending = framed_head(status, "", fields_of(x, p), keep, false);
  if (!co_await when.until(x.headers_ms)) co_return gone;
  for (const auto& [ms, text] : x.events()) {
    // What is pending goes out before the replay waits for the next event's time.
    if (!pending.empty() && !when.due(ms) && !co_await conn.write(std::exchange(pending, {}))) co_return gone;
    if (!co_await when.until(ms)) co_return gone;
    std::vector<StreamFault::Step> steps = fault.feed(text);
    const bool holds = std::any_of(steps.begin(), steps.end(),
                                   [](const StreamFault::Step& s) { return s.then == StreamFault::Then::hold; });
    const double before = conn.state().now_ms();
    const std::optional<Outcome> ended = co_await send_steps(conn, std::move(steps), pending, task, p, status, events);
    if (ended) co_return *ended;
    if (holds) when.held_since(before);  // the rest keeps its gaps after the stall
    if (fault.done()) break;
  }
  const bool ended_by_fault = fault.done();  // an overloaded ends the reply cleanly before the recording's end
  if (!ended_by_fault) {
    const std::optional<Outcome> ended = co_await send_steps(conn, fault.finish(), pending, task, p, status, events);
    if (ended) co_return *ended;
  }
  if (!x.complete() && !ended_by_fault) {  // the upstream broke off here: so does the replay
    if (!co_await when.until(x.end_ms())) co_return gone;
    if (!pending.empty() && !co_await conn.write(std::exchange(pending, {}))) co_return gone;
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
  Schedule when(conn, p);
  if (!x.complete()) {  // it broke off: the head, what came, chunked, then a close
    if (!co_await when.until(x.headers_ms)) co_return gone;
    if (!co_await conn.write(framed_head(status, "", fields_of(x, p), keep, false))) co_return gone;
    if (!co_await when.until(x.end_ms())) co_return gone;
    if (!x.body().empty() && !co_await conn.write(wire::chunk(x.body()))) co_return gone;
    conn.close_socket();
    co_return Outcome{status, "closed", false};
  }
  const std::optional<FaultKind> kind =
      status == 200 && header_starts(x, "content-type", "application/json") ? entry_fault(p) : std::nullopt;
  const wire::WholeReply w = wire::break_whole(kind, p.dialect, x.body());
  if (!co_await when.until(x.headers_ms)) co_return gone;
  if (!co_await conn.write(framed_head(status, "", fields_of(x, p), keep, false, w.content_length))) co_return gone;
  if (w.hold_before_body) {
    const double before = conn.state().now_ms();
    const HoldEnd h = co_await conn.hold(task, p.epoch, "");
    if (h != HoldEnd::released) co_return Outcome{status, end_of(h), false};
    when.held_since(before);
  }
  if (!co_await when.until(x.end_ms())) co_return gone;
  if (!co_await conn.write(w.body)) co_return gone;
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
  // A gate holds the answer before its first byte.
  if (!p.entry.gate.empty()) {
    const HoldEnd h = co_await conn.hold(task, p.epoch, p.entry.gate);
    if (h != HoldEnd::released) co_return Outcome{0, end_of(h), false};
  }
  if (!x.status) {  // the upstream failed before its headers: the proxy's 502
    Schedule when(conn, p);
    if (!co_await when.until(x.headers_ms)) co_return Outcome{0, "client_gone", false};
    std::string why = x.error.empty() ? std::string("the upstream failed before its headers") : x.error;
    const bool ok = co_await conn.send_error(502, "api_error", std::move(why), keep, {}, p.dialect);
    co_return Outcome{502, ok ? "complete" : "client_gone", ok && keep};
  }
  const int status = *x.status;
  if (status / 100 == 1 || status == 204 || status == 304) {  // an answer without a body: its head is all of it
    Schedule when(conn, p);
    if (!co_await when.until(x.headers_ms)) co_return Outcome{status, "client_gone", false};
    const bool ok = co_await conn.write(framed_head(status, "", fields_of(x, p), keep, true));
    co_return Outcome{status, ok ? "complete" : "client_gone", ok && keep};
  }
  if (x.event_stream()) co_return co_await play_events(conn, x, task, p, keep);
  co_return co_await play_body(conn, x, task, p, keep);
}

}  // namespace relsim::mock
