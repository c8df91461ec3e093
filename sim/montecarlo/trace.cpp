// trace_task (simulate.hpp): one task of simulate(), request by request,
// through the general walk (every policy's rules) over the same draws.
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "montecarlo/policy_walk.hpp"

namespace relsim {

TaskTrace trace_task(const Model& model, const Policy& policy, const SimConfig& config, std::int64_t task) {
  validate(model);
  validate(policy);
  validate(config);
  if (task < 0 || task >= config.tasks)
    throw InputError(fmt::format("task = {} is out of range: task must be in [0, {}]", task, config.tasks - 1));
  const DrawScheme s = DrawScheme::make(model, policy, config.kinds);
  TaskTrace trace;
  trace.task = task;
  if (model.chain == ChainScope::continuous) {
    // Replay the lane's earlier tasks for the state the chain carries in.
    const std::int64_t lanes = config.lanes;
    Entry entry = Entry::lane_start;
    for (std::int64_t t = task % lanes; t < task; t += lanes) {
      const TaskRunner run = detail::walk_policy_task(s, policy, config.seed, t, entry, [](const auto&, bool) {});
      entry = run.last_request_bad() ? Entry::after_bad : Entry::after_good;
    }
    trace.entry = entry;
  }
  // The general walk (every policy's rules), recording the requests sent.
  std::int64_t call = 0;
  int attempt = 0;
  const TaskRunner run = detail::walk_policy_task(
      s, policy, config.seed, task, trace.entry, [&](const std::optional<FaultKind>& r, bool sent) {
        if (!sent) return;
        trace.requests.push_back({call, attempt, r.has_value(), r.value_or(FaultKind::cut)});
        if (r) {
          ++attempt;
        } else {
          ++call;
          attempt = 0;
        }
      });
  trace.outcome = run.outcome().outcome;
  RELSIM_ASSERT(static_cast<std::int64_t>(trace.requests.size()) == run.requests());
  return trace;
}

}  // namespace relsim
