#pragma once
// The oracle (docs/model.md, Live check): runs a policy's rules over a plan and predicts,
// without any network, each task's outcome, its request count and a bound on
// the time it waits.
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "relsim/core/policy.hpp"
#include "relsim/live/plan.hpp"
#include "relsim/live/timing.hpp"

namespace relsim {

struct Prediction {
  std::int64_t task = 0;
  OutcomeClass outcome;
  std::int64_t requests = 0;
  double max_wait_seconds = 0.0;  // timeouts and backoff the task can wait, at most
  // A time-mode plan's wall time for the task (TaskPlan::seconds); NaN otherwise.
  double planned_seconds = std::numeric_limits<double>::quiet_NaN();
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
};

// Throws InputError when a task's plan ends before the policy ends the task,
// and, for a time-mode plan (TaskPlan::seconds given), when the policy ends a
// task before its plan's last request: the plan's times are for its own policy.
Prediction predict(const Policy& policy, const TaskPlan& task, const ClientTiming& timing);
OracleResult run_oracle(const Policy& policy, const Plan& plan, const ClientTiming& timing);

}  // namespace relsim
