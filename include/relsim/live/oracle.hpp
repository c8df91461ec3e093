#pragma once
// The oracle (docs/model.md, Live check): runs a policy's rules over a plan and predicts,
// without any network, each task's outcome, its request count and a bound on
// the time it waits.
#include <array>
#include <cstdint>
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
};

struct OracleResult {
  std::vector<Prediction> tasks;
  std::array<std::int64_t, kOutcomeClasses> outcomes{};  // by index_of(OutcomeClass)
  std::int64_t requests = 0;
  std::int64_t wrong = 0;  // crash, hang, partial_done
  std::array<std::int64_t, kFaultKinds> faults{};  // bad requests the tasks sent, by kind
};

// Throws InputError when a task's plan ends before the policy ends the task.
Prediction predict(const Policy& policy, const TaskPlan& task, const ClientTiming& timing);
OracleResult run_oracle(const Policy& policy, const Plan& plan, const ClientTiming& timing);

}  // namespace relsim
