#include "relsim/montecarlo/plan_gen.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "relsim/core/error.hpp"
#include "relsim/exact/fallback_report.hpp"
#include "montecarlo/fallback_walk.hpp"
#include "montecarlo/policy_walk.hpp"

namespace relsim {

std::string_view to_string(Times times) { return times == Times::once ? "once" : "always"; }

Times parse_times(std::string_view word) {
  if (word == "once") return Times::once;
  if (word == "always") return Times::always;
  throw InputError(fmt::format("times = '{}' is not a choice: use once or always", word));
}

namespace {

struct DrawnTask {
  TaskPlan plan;
  bool ended_bad = false;  // its last request was bad: the next task's entry
};

// Every drawn request of each call the task reaches under the policy.
DrawnTask draw_task(const DrawScheme& s, const Policy& policy, std::uint64_t seed, std::int64_t task, Entry entry) {
  DrawnTask out;
  out.plan.task = task;
  const TaskRunner runner = detail::walk_policy_task(
      s, policy, seed, task, entry, [&](const PlannedRequest& r, bool) { out.plan.requests.push_back(r); });
  RELSIM_ASSERT(runner.ended());
  out.ended_bad = runner.last_request_bad();
  return out;
}

// A task with a fallback: each request's reply from the provider it went to
// and from the other, in the two columns.
TaskPlan draw_fallback_task(const detail::FallbackDraws& d, const Policy& policy, std::uint64_t seed,
                            std::int64_t task) {
  TaskPlan plan;
  plan.task = task;
  const TaskRunner runner = detail::walk_fallback_task(
      d, policy, seed, task,
      [&](const std::array<PlannedRequest, 2>& replies, int) {
        plan.requests.push_back(replies[0]);
        plan.fallback.push_back(replies[1]);
      },
      [](std::int64_t) { return true; });
  RELSIM_ASSERT(runner.ended());
  return plan;
}

void check_fallback_plan(const Model& model, const Fallback& fallback, const Policy& policy) {
  validate(fallback, policy);
  if (fallback.timed())
    throw InputError("a plan with a fallback is drawn in steps (--p2), not in seconds (--t-good2, --t-bad2) yet");
  if (model.chain == ChainScope::continuous)
    throw InputError("chain = continuous: a plan with a fallback (--fallback-after) covers the fresh scope only yet; "
                     "use --chain fresh");
}

}  // namespace

Plan generate_plan(const Model& model, const Policy& policy, const SimConfig& config) {
  validate(model);
  validate(policy);
  validate(config);
  if (config.tasks > kMaxPlanTasks)
    throw InputError(fmt::format("tasks = {} is out of range for a plan: it must be in [1, {}]", config.tasks,
                                 kMaxPlanTasks));
  const DrawScheme s = DrawScheme::make(model, policy, config.kinds);
  Plan plan;
  plan.header = Json{{"relsim_plan", 1},
                     {"tasks", config.tasks},
                     {"source", "generated"},
                     {"seed", config.seed},
                     {"p", model.p},
                     {"q", model.q},
                     {"b", model.b},
                     {"g", model.g},
                     {"chain", std::string(to_string(model.chain))},
                     {"lanes", config.lanes},
                     {"policy", std::string(to_string(policy.kind))},
                     {"n", policy.n},
                     {"r", policy.r},
                     {"s", policy.s},
                     {"B", policy.B},
                     {"kinds", to_string(config.kinds)}};
  plan.tasks.resize(static_cast<std::size_t>(config.tasks));
  if (config.fallback) {
    check_fallback_plan(model, *config.fallback, policy);
    plan.header["fallback"] = fallback_json(model.p, *config.fallback);
    const auto d = detail::FallbackDraws::make(model, *config.fallback, config.kinds);
    for (std::int64_t t = 0; t < config.tasks; ++t)
      plan.tasks[static_cast<std::size_t>(t)] = draw_fallback_task(d, policy, config.seed, t);
  } else if (model.chain == ChainScope::fresh) {
    for (std::int64_t t = 0; t < config.tasks; ++t)
      plan.tasks[static_cast<std::size_t>(t)] = draw_task(s, policy, config.seed, t, Entry::task_start).plan;
  } else {
    // Each lane carries its chain from task to task.
    for (std::int64_t lane = 0; lane < std::min<std::int64_t>(config.lanes, config.tasks); ++lane) {
      Entry entry = Entry::lane_start;
      for (std::int64_t t = lane; t < config.tasks; t += config.lanes) {
        DrawnTask d = draw_task(s, policy, config.seed, t, entry);
        entry = d.ended_bad ? Entry::after_bad : Entry::after_good;
        plan.tasks[static_cast<std::size_t>(t)] = std::move(d.plan);
      }
    }
  }
  return plan;
}

Plan scripted_plan(std::int64_t tasks, FaultKind kind, Times times, const Policy& policy) {
  validate(policy);
  if (tasks < 1 || tasks > kMaxPlanTasks)
    throw InputError(fmt::format("tasks = {} is out of range for a plan: it must be in [1, {}]", tasks, kMaxPlanTasks));
  Plan plan;
  plan.header = Json{{"relsim_plan", 1},
                     {"tasks", tasks},
                     {"source", "scripted"},
                     {"fault", std::string(to_string(kind))},
                     {"times", std::string(to_string(times))},
                     {"policy", std::string(to_string(policy.kind))},
                     {"n", policy.n},
                     {"r", policy.r},
                     {"s", policy.s},
                     {"B", policy.B}};
  const std::int64_t length = policy.max_requests();
  if (length > 10'000'000)
    throw InputError(fmt::format("a scripted plan of n x (requests per call) = {} requests per task is too long: "
                                 "at most 10000000",
                                 length));
  for (std::int64_t t = 0; t < tasks; ++t) {
    TaskPlan tp;
    tp.task = t;
    tp.requests.assign(static_cast<std::size_t>(length), times == Times::always ? PlannedRequest(kind) : std::nullopt);
    tp.requests[0] = kind;
    plan.tasks.push_back(std::move(tp));
  }
  return plan;
}

namespace {

// The policy whose walk lists what an audit plan holds: `simple` ends a task
// only at a call whose every request is bad, so with r = max_requests - 1
// every call up to that point is listed whole.
Policy audit_walker(const Policy& policy, int max_requests) {
  validate(policy);
  if (max_requests < 1 || max_requests > kMaxRequestsPerCall)
    throw InputError(fmt::format("max-requests = {} is out of range: it must be in [1, {}]", max_requests,
                                 kMaxRequestsPerCall));
  if (max_requests < policy.max_requests_per_call())
    throw InputError(fmt::format("max-requests = {} is below the {} policy's {} requests per call: the plan would "
                                 "run out before the policy ends a call",
                                 max_requests, to_string(policy.kind), policy.max_requests_per_call()));
  Policy walker;
  walker.kind = PolicyKind::simple;
  walker.n = policy.n;
  walker.r = max_requests - 1;
  return walker;
}

// The header says which policy the plan was meant for (the oracle's default),
// not the walker's.
void restore_policy(Json& header, const Policy& policy, int max_requests) {
  header["policy"] = std::string(to_string(policy.kind));
  header["r"] = policy.r;
  header["s"] = policy.s;
  header["B"] = policy.B;
  header["max_requests"] = max_requests;
}

}  // namespace

Plan generate_audit_plan(const Model& model, const Policy& policy, const SimConfig& config, int max_requests) {
  const Policy walker = audit_walker(policy, max_requests);
  if (model.b != 0 || model.g != 0)
    throw InputError(fmt::format("b = {}, g = {}: a plan for auditing needs b = g = 0 (a server cannot tell a retry "
                                 "from the next call, so it cannot place silent chain steps)",
                                 model.b, model.g));
  Plan plan = generate_plan(model, walker, config);
  restore_policy(plan.header, policy, max_requests);
  return plan;
}

Plan scripted_audit_plan(std::int64_t tasks, FaultKind kind, Times times, const Policy& policy, int max_requests) {
  Plan plan = scripted_plan(tasks, kind, times, audit_walker(policy, max_requests));
  restore_policy(plan.header, policy, max_requests);
  return plan;
}

}  // namespace relsim
