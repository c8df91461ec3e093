// One task of the live check in time mode, reviewed from the server's log
// (live_time_review.hpp).
#include "live/live_time_review.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/client/client.hpp"
#include "relsim/client/retry_wait.hpp"

namespace relsim::live_time {
namespace {

std::optional<FaultKind> fault_of(const LoggedRequest& r) {
  if (r.entry && r.entry->reply == Reply::fault) return r.entry->fault;
  return std::nullopt;
}

void note(TimeLiveCheck& out, std::string text) {
  if (out.problems.size() < 10) out.problems.push_back(std::move(text));
}

// Each reply against the schedule at the request's received time.
void review_schedule(OutageSchedule& schedule, const TaskLog& log, const std::vector<LoggedRequest>& requests,
                     TimeLiveCheck& out) {
  const double scale = schedule.config().time_scale;
  for (const LoggedRequest& r : requests) {
    const double at = r.received_ms / 1000.0 / scale;
    const bool bad = schedule.bad_at(at);
    const auto fault = fault_of(r);
    if (fault) ++out.bad_requests;
    const bool agrees = bad ? fault == schedule.kind_of(log.task, r.index) : (r.entry && !fault);
    if (agrees) continue;
    ++out.off_schedule;
    note(out, fmt::format("task {} request {}: at {:.6f} model s the schedule is {}, the server answered {}", log.task,
                          r.index, at, bad ? to_string(schedule.kind_of(log.task, r.index)) : "good",
                          r.entry ? entry_name(*r.entry) : "nothing"));
  }
}

// The policy's rules over the replies; returns the call state before each
// request they account for.
std::vector<CallState> review_rules(const Policy& policy, const TaskLog& log,
                                    const std::vector<LoggedRequest>& requests, const LiveTask& live,
                                    TimeLiveCheck& out) {
  TaskRunner runner(policy);
  std::vector<CallState> before;
  for (const LoggedRequest& r : requests) {
    if (runner.ended()) break;
    before.push_back(runner.state());
    runner.feed(fault_of(r));
  }
  Prediction p;
  p.task = log.task;
  p.outcome = runner.outcome();
  p.requests = runner.requests();
  out.expected.push_back(p);
  const auto logged = static_cast<std::int64_t>(requests.size());
  const bool match = runner.ended() && p.requests == logged && live.requests == logged && live.text_ok &&
                     live.outcome == p.outcome;
  if (!match) {
    out.mismatches.push_back(log.task);
    note(out, fmt::format("task {}: live {} after {} requests ({} logged), the rules over its replies: {} after {}{}",
                          log.task, live.outcome.name(), live.requests, logged, p.outcome.name(), p.requests,
                          runner.ended() ? "" : " (not ended)"));
  }
  return before;
}

// The waits (retries) and steps (every request after the first).
void review_waits(const TimeModel& model, const TimeLiveConfig& c, const TaskLog& log,
                  const std::vector<LoggedRequest>& requests, const std::vector<CallState>& before, Sums& sums,
                  TimeLiveCheck& out) {
  const double scale = c.timing.time_scale, tol = c.wait_tolerance;
  TimeLiveWaits& w = out.waits;
  std::uint64_t draws = 0;  // the client's jitter draws so far: one per wait
  for (std::size_t i = 1; i < before.size(); ++i) {
    const LoggedRequest& prev = requests[i - 1];
    const LoggedRequest& cur = requests[i];
    const auto fault = fault_of(prev);
    double pause = c.timing.think();
    if (before[i].used > 0 && fault) {
      const RetryWait owed = retry_wait(c.timing, c.retry_after, before[i - 1], before[i], *fault);
      pause = owed.max * (1.0 - owed.jitter * jitter(c.seed, log.task, static_cast<std::int64_t>(draws++)));
      if (prev.finished_ms) {
        const double waited = (cur.received_ms - *prev.finished_ms) / 1000.0;
        w.min_margin = w.checked == 0 ? waited - owed.shortest() : std::min(w.min_margin, waited - owed.shortest());
        w.max_excess = w.checked == 0 ? waited - owed.max : std::max(w.max_excess, waited - owed.max);
        ++w.checked;
        w.max_residual = std::max(w.max_residual, std::abs(waited - pause));
        sums.residual += waited - pause;
        if (!owed.accepts(waited, tol, tol)) {
          ++w.outside;
          note(out, fmt::format("task {} request {}: waited {:.4f} s after a {} ({} retry {}), expected {:.4f} to "
                                "{:.4f} s",
                                log.task, cur.index, waited, to_string(*fault), owed.http ? "HTTP" : "stream",
                                owed.retry, owed.shortest() - tol, owed.max + tol));
        }
      }
    }
    const double step = (cur.received_ms - prev.received_ms) / 1000.0 - (model.seconds_of(fault) * scale + pause);
    ++w.steps;
    w.max_step_residual = std::max(w.max_step_residual, std::abs(step));
    sums.step += step;
  }
}

}  // namespace

void review_task(const TimeModel& model, OutageSchedule& schedule, const TaskLog& log, const LiveTask& live,
                 Sums& sums, TimeLiveCheck& out) {
  std::vector<LoggedRequest> requests = log.requests;
  std::sort(requests.begin(), requests.end(),
            [](const LoggedRequest& a, const LoggedRequest& b) { return a.index < b.index; });
  if (log.dropped > 0) note(out, fmt::format("task {}: {} requests not logged (a log cap)", log.task, log.dropped));
  review_schedule(schedule, log, requests, out);
  const std::vector<CallState> before = review_rules(out.config.policy, log, requests, live, out);
  review_waits(model, out.config, log, requests, before, sums, out);
}

}  // namespace relsim::live_time
