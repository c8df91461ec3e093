#pragma once
// The oracle (docs/model.md, Live check): runs a policy's rules over a plan and predicts,
// without any network, each task's outcome, its request count and a bound on
// the time it waits.
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "relsim/core/policy.hpp"
#include "relsim/core/retry_throttle.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/client/timing.hpp"

namespace relsim {

struct Prediction {
  std::int64_t task = 0;
  OutcomeClass outcome;
  std::int64_t requests = 0;
  double max_wait_seconds = 0.0;  // timeouts and backoff the task can wait, at most
  // A time-mode plan's wall time for the task (TaskPlan::seconds); NaN otherwise.
  double planned_seconds = std::numeric_limits<double>::quiet_NaN();
  bool throttled = false;  // a retry throttle denied its retry (run_oracle with a throttle)
  std::int64_t fallback_requests = 0;  // of `requests`, those sent to the second provider
};

struct OracleResult {
  std::vector<Prediction> tasks;
  std::array<std::int64_t, kOutcomeClasses> outcomes{};  // by index_of(OutcomeClass)
  std::int64_t requests = 0;
  std::int64_t wrong = 0;  // crash, hang, partial_done
  std::array<std::int64_t, kFaultKinds> faults{};  // bad requests the tasks sent, by kind
  // A time-mode plan: the sum of its tasks' wall times, each rounded to the
  // microsecond (as simulate_time's total_microseconds); 0 otherwise.
  bool timed = false;
  std::int64_t planned_microseconds = 0;
  std::int64_t throttled = 0;  // tasks a retry throttle ended
  std::int64_t fallback_requests = 0;  // requests sent to the second provider
};

// Throws InputError when a task's plan ends before the policy ends the task,
// and, for a time-mode plan (TaskPlan::seconds given), when the policy ends a
// task before its plan's last request: the plan's times are for its own policy.
// With `throttle`, the tenant's throttle is told of every request and asked
// before every retry; a denied retry ends the task env_error with the fault
// it would have retried.
// With `fallback_after` > 0 (a fallback, ClientConfig::fallback_after) a
// call's requests from that one on take the plan's fallback column (throws
// InputError for a task without one); 0: the first column only.
Prediction predict(const Policy& policy, const TaskPlan& task, const ClientTiming& timing,
                   RetryThrottle* throttle = nullptr, int fallback_after = 0);
OracleResult run_oracle(const Policy& policy, const Plan& plan, const ClientTiming& timing, int fallback_after = 0);

// With a retry throttle (relsim live --throttle): the tasks run one after
// another in plan order, task t on tenant t mod tenants (1 for 0), each
// tenant with its own throttle, as relsim's client runs them with
// --concurrency 1. Throws InputError as above, and for tenants outside
// [0, kMaxTenants] (client.hpp).
OracleResult run_oracle(const Policy& policy, const Plan& plan, const ClientTiming& timing, const Throttle& throttle,
                        int tenants);

}  // namespace relsim
