// trace_time_task and trace_time_tasks (trace_time.hpp): simulate_time's
// walk (montecarlo/time_walk.hpp) with its requests recorded.
#include "relsim/montecarlo/trace_time.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "montecarlo/time_walk.hpp"

namespace relsim {
namespace {

void check_trace(const TimeModel& time, const Policy& policy, const SimConfig& config) {
  validate(time);
  validate(policy);
  validate(config);
  if (config.fallback)
    throw InputError("fallback-after: a timed plan or trace follows one provider only yet (a fallback in seconds is "
                     "simulated, not played live)");
}

// Walks one task; `at` carries the chain between the tasks of a lane.
TimeTaskTrace walk_traced(const detail::TimeSimScheme& s, std::uint64_t seed, std::int64_t task, bool fresh,
                          detail::ChainPosition& at) {
  TimeTaskTrace out;
  out.task = task;
  std::array<std::int64_t, kFaultKinds> faults{};
  const detail::TimedTask walked =
      detail::walk_time_task(s, seed, static_cast<std::uint64_t>(task), fresh, true, at, faults, &out.requests);
  RELSIM_ASSERT(walked.runner.ended());
  RELSIM_ASSERT(static_cast<std::int64_t>(out.requests.size()) == walked.runner.requests());
  out.outcome = walked.runner.outcome();
  out.seconds = walked.seconds;
  out.microseconds = std::llround(walked.seconds * 1e6);  // as simulate_time rounds it
  return out;
}

}  // namespace

TimeTaskTrace trace_time_task(const TimeModel& time, const Policy& policy, const SimConfig& config, std::int64_t task) {
  check_trace(time, policy, config);
  if (task < 0 || task >= config.tasks)
    throw InputError(fmt::format("task = {} is out of range: task must be in [0, {}]", task, config.tasks - 1));
  const detail::TimeSimScheme s = detail::TimeSimScheme::make(time, policy, config.kinds);
  detail::ChainPosition at;
  if (time.scope == ChainScope::fresh) return walk_traced(s, config.seed, task, true, at);
  // Replay the lane's earlier tasks for the chain the task starts in.
  const std::int64_t first = task % config.lanes;
  for (std::int64_t t = first; t < task; t += config.lanes) walk_traced(s, config.seed, t, t == first, at);
  return walk_traced(s, config.seed, task, task == first, at);
}

std::vector<TimeTaskTrace> trace_time_tasks(const TimeModel& time, const Policy& policy, const SimConfig& config) {
  check_trace(time, policy, config);
  const detail::TimeSimScheme s = detail::TimeSimScheme::make(time, policy, config.kinds);
  std::vector<TimeTaskTrace> out(static_cast<std::size_t>(config.tasks));
  const bool fresh = time.scope == ChainScope::fresh;
  const std::int64_t lanes = fresh ? 1 : std::min<std::int64_t>(config.lanes, config.tasks);
  for (std::int64_t lane = 0; lane < lanes; ++lane) {
    detail::ChainPosition at;
    for (std::int64_t t = lane; t < config.tasks; t += fresh ? 1 : config.lanes)
      out[static_cast<std::size_t>(t)] = walk_traced(s, config.seed, t, fresh || t == lane, at);
  }
  return out;
}

}  // namespace relsim
