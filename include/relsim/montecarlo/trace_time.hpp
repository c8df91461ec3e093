#pragma once
// One task of simulate_time (simulate_time.hpp) request by request: what a
// time-mode plan (formats/plan.hpp) writes. The same walk as the simulator
// (montecarlo/time_walk.hpp) over the same draws, so the traces of every
// task of a run sum to simulate_time's counts and total_microseconds for the
// same time model, policy and config.
#include <cstdint>
#include <optional>
#include <vector>

#include "relsim/core/faults.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/montecarlo/simulate.hpp"

namespace relsim {

// A request the task sent: its fault (nullopt: good) and its start, in
// seconds from the task's first request.
struct TimedRequest {
  std::optional<FaultKind> fault;
  double at_seconds = 0.0;
};

struct TimeTaskTrace {
  std::int64_t task = 0;
  std::vector<TimedRequest> requests;  // every request sent, in order
  OutcomeClass outcome;
  double seconds = 0.0;            // wall time: the first request's start to the last one's end
  std::int64_t microseconds = 0;   // seconds rounded to the microsecond, as simulate_time sums them
};

// Task `task` of simulate_time(time, policy, config). In the continuous scope
// the lane's earlier tasks are walked first for the chain they carry in.
// Throws InputError for an invalid model, policy or config, or task outside
// [0, tasks).
TimeTaskTrace trace_time_task(const TimeModel& time, const Policy& policy, const SimConfig& config, std::int64_t task);

// Every task of the run, in task order (each lane walked once).
std::vector<TimeTaskTrace> trace_time_tasks(const TimeModel& time, const Policy& policy, const SimConfig& config);

}  // namespace relsim
