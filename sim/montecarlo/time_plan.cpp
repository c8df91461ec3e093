// generate_time_plan (plan.hpp): a plan from the time-mode simulator's walk.
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/exact/report.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/trace_time.hpp"

namespace relsim {

Plan generate_time_plan(const TimeModel& time, const Json& chain, const Policy& policy, const SimConfig& config) {
  validate(config);
  if (config.tasks > kMaxPlanTasks)
    throw InputError(fmt::format("tasks = {} is out of range for a plan: it must be in [1, {}]", config.tasks,
                                 kMaxPlanTasks));
  Json model = chain;
  const Json fields = time_model_json(time);
  for (auto it = fields.begin(); it != fields.end(); ++it) model[it.key()] = it.value();
  Plan plan;
  plan.header = Json{{"relsim_plan", 1},
                     {"tasks", config.tasks},
                     {"source", "generated"},
                     {"seed", config.seed},
                     {"p", time.chain.bad_share()},
                     {"chain", std::string(to_string(time.scope))},
                     {"lanes", config.lanes},
                     {"policy", std::string(to_string(policy.kind))},
                     {"n", policy.n},
                     {"r", policy.r},
                     {"s", policy.s},
                     {"B", policy.B},
                     {"kinds", to_string(config.kinds)},
                     {"time", std::move(model)}};
  std::vector<TimeTaskTrace> traces = trace_time_tasks(time, policy, config);
  plan.tasks.reserve(traces.size());
  for (TimeTaskTrace& t : traces) {
    TaskPlan tp;
    tp.task = t.task;
    for (const TimedRequest& r : t.requests) {
      tp.requests.push_back(r.fault);
      tp.at_seconds.push_back(r.at_seconds);
    }
    tp.seconds = t.seconds;
    plan.tasks.push_back(std::move(tp));
  }
  return plan;
}

}  // namespace relsim
