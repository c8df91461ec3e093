#include "relsim/live/oracle.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/client/client.hpp"

namespace relsim {

namespace {

// predict(), telling on_request(r) of each request the task sends and what it got.
template <class OnRequest>
Prediction predict_task(const Policy& policy, const TaskPlan& task, const ClientTiming& timing,
                        RetryThrottle* throttle, int fallback_after, OnRequest&& on_request) {
  Prediction p;
  p.task = task.task;
  if (fallback_after > 0 && task.fallback.empty())
    throw InputError(fmt::format("task {}: the plan has no fallback column, and fallback-after = {} sends a call's "
                                 "later requests to the second provider: make the plan with relsim plan "
                                 "--fallback-after",
                                 task.task, fallback_after));
  TaskRunner runner(policy);
  double wait = 0.0, paid = 0.0;
  PlannedRequest last;  // the reply of the last request sent
  for (std::size_t i = 0; i < task.requests.size(); ++i) {
    const CallState before = runner.state();
    const bool second = to_second_provider(before.used, fallback_after);
    const PlannedRequest& r = (second ? task.fallback : task.requests)[i];
    p.fallback_requests += second ? 1 : 0;
    on_request(r);
    const bool retry = before.used > 0;
    if (throttle) throttle->sent(retry);
    const std::int64_t calls = runner.call();
    runner.feed(r);
    // A whole answer the call took is good to the throttle, as the client
    // tells it: a good one, or a content fault's the policy trusted.
    if (throttle) throttle->answered(retry, !r || runner.call() > calls, paid);
    last = r;
    paid = 0.0;  // what allow_retry takes below is the next request's
    if (r == FaultKind::slow_headers) wait += timing.header_timeout;
    if (r == FaultKind::stall || r == FaultKind::stall_first)
      wait += runner.outcome().outcome == Outcome::hang ? timing.task_timeout : timing.idle_timeout;
    if (runner.ended()) break;
    // The wait before the next request of the same call: backoff of the layer
    // that retries; before the next call's first: the pause between calls.
    const CallState& after = runner.state();
    if (after.used > 0 && throttle && !throttle->allow_retry(*r, paid)) {
      p.throttled = true;
      break;
    }
    if (after.used > 0) wait += timing.backoff_max(after.http > before.http ? before.http : after.stream - 1);
    else wait += timing.think();
  }
  if (!runner.ended() && !p.throttled)
    throw InputError(fmt::format("task {}: its plan ends after {} requests, before the {} policy ends the task",
                                 task.task, task.requests.size(), to_string(policy.kind)));
  // A denied retry: the fault it would have retried ends the task.
  p.outcome = p.throttled ? OutcomeClass{Outcome::env_error, last} : runner.outcome();
  p.requests = runner.requests();
  p.max_wait_seconds = std::min(wait, timing.task_timeout);
  return p;
}

}  // namespace

Prediction predict(const Policy& policy, const TaskPlan& task, const ClientTiming& timing, RetryThrottle* throttle,
                   int fallback_after) {
  return predict_task(policy, task, timing, throttle, fallback_after, [](const PlannedRequest&) {});
}

namespace {

// A time-mode plan lists exactly the requests its policy sends.
void add_planned_time(const TaskPlan& t, Prediction& p, OracleResult& out) {
  if (p.requests != static_cast<std::int64_t>(t.requests.size()))
    throw InputError(fmt::format("task {}: the policy ends it after {} of the time-mode plan's {} requests: the plan's "
                                 "times hold for the policy it was made for (its header's)",
                                 t.task, p.requests, t.requests.size()));
  p.planned_seconds = t.seconds;
  out.timed = true;
  out.planned_microseconds += std::llround(t.seconds * 1e6);
}

}  // namespace

namespace {

// Both oracles: each task predicted with `throttle_of(task)` (or none).
template <class ThrottleOf>
OracleResult oracle(const Policy& policy, const Plan& plan, const ClientTiming& timing, int fallback_after,
                    ThrottleOf throttle_of) {
  validate(policy);
  validate(timing);
  OracleResult out;
  for (const TaskPlan& t : plan.tasks) {
    Prediction p = predict_task(policy, t, timing, throttle_of(t.task), fallback_after, [&](const PlannedRequest& r) {
      if (r) ++out.faults[static_cast<std::size_t>(*r)];
    });
    if (p.throttled) ++out.throttled;
    ++out.outcomes[static_cast<std::size_t>(index_of(p.outcome))];
    out.requests += p.requests;
    out.fallback_requests += p.fallback_requests;
    if (is_wrong(p.outcome.outcome)) ++out.wrong;
    if (!std::isnan(t.seconds)) add_planned_time(t, p, out);
    out.tasks.push_back(p);
  }
  return out;
}

}  // namespace

OracleResult run_oracle(const Policy& policy, const Plan& plan, const ClientTiming& timing, int fallback_after) {
  return oracle(policy, plan, timing, fallback_after, [](std::int64_t) -> RetryThrottle* { return nullptr; });
}

OracleResult run_oracle(const Policy& policy, const Plan& plan, const ClientTiming& timing, const Throttle& throttle,
                        int tenants) {
  if (tenants < 0 || tenants > kMaxTenants)
    throw InputError(fmt::format("tenants = {} is out of range: it must be in [0, {}] (0: no key)", tenants, kMaxTenants));
  std::vector<RetryThrottle> throttles(static_cast<std::size_t>(std::max(tenants, 1)), RetryThrottle(throttle));
  return oracle(policy, plan, timing, 0, [&](std::int64_t task) {
    return &throttles[static_cast<std::size_t>(task % static_cast<std::int64_t>(throttles.size()))];
  });
}

}  // namespace relsim
