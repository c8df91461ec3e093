#include "relsim/live/oracle.hpp"

#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

Prediction predict(const Policy& policy, const TaskPlan& task, const ClientTiming& timing) {
  Prediction p;
  p.task = task.task;
  TaskRunner runner(policy);
  double wait = 0.0;
  for (const PlannedRequest& r : task.requests) {
    const CallState before = runner.state();
    runner.feed(r);
    if (r == FaultKind::slow_headers) wait += timing.header_timeout;
    if (r == FaultKind::stall) wait += runner.outcome().outcome == Outcome::hang ? timing.task_timeout : timing.idle_timeout;
    if (runner.ended()) break;
    // The wait before the next request of the same call: backoff of the layer
    // that retries; before the next call's first: the pause between calls.
    const CallState& after = runner.state();
    if (after.used > 0) wait += timing.backoff_max(after.http > before.http ? before.http : after.stream - 1);
    else wait += timing.think();
  }
  if (!runner.ended())
    throw InputError(fmt::format("task {}: its plan ends after {} requests, before the {} policy ends the task",
                                 task.task, task.requests.size(), to_string(policy.kind)));
  p.outcome = runner.outcome();
  p.requests = runner.requests();
  p.max_wait_seconds = std::min(wait, timing.task_timeout);
  return p;
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

OracleResult run_oracle(const Policy& policy, const Plan& plan, const ClientTiming& timing) {
  validate(policy);
  validate(timing);
  OracleResult out;
  for (const TaskPlan& t : plan.tasks) {
    Prediction p = predict(policy, t, timing);
    ++out.outcomes[static_cast<std::size_t>(index_of(p.outcome))];
    out.requests += p.requests;
    if (is_wrong(p.outcome.outcome)) ++out.wrong;
    for (std::int64_t i = 0; i < p.requests; ++i)
      if (t.requests[static_cast<std::size_t>(i)]) ++out.faults[static_cast<std::size_t>(*t.requests[static_cast<std::size_t>(i)])];
    if (!std::isnan(t.seconds)) add_planned_time(t, p, out);
    out.tasks.push_back(p);
  }
  return out;
}

}  // namespace relsim
