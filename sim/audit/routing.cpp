// A fallback plan's audit (audit.hpp, routed_plan and infer_fallback;
// docs/audit.md, Two providers): the entries the client met on the paths it
// took, and the fallbacks that explain which path each request took.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/audit/audit.hpp"
#include "audit/accepting_runner.hpp"

namespace relsim {
namespace {

// The task's column as the client met it (see routed_plan).
TaskPlan routed_task(const TaskPlan& plan, const TaskObservation* obs, const Policy& policy, const Acceptance& accept,
                     int after) {
  TaskPlan out;
  out.task = plan.task;
  const std::size_t sent = obs ? obs->fallback.size() : 0;
  // Without a fallback (or past the policy's end) every further entry is the first provider's.
  std::optional<audit_detail::AcceptingRunner> runner;
  if (after > 0) runner.emplace(policy, accept);
  for (std::size_t i = 0; i < plan.requests.size(); ++i) {
    if (runner && runner->ended()) runner.reset();
    const bool second = i < sent ? obs->fallback[i] : runner && to_second_provider(runner->state().used, after);
    out.requests.push_back((second ? plan.fallback : plan.requests)[i]);
    if (runner) runner->feed(out.requests.back());
  }
  return out;
}

// Whether every request of the task among those both sent and expected went
// where the policy with a fallback after `after` sends it.
bool routed_as(const TaskPlan& routed, const TaskObservation& obs, const Policy& policy, const Acceptance& accept,
               int after) {
  audit_detail::AcceptingRunner runner(policy, accept);
  for (std::size_t i = 0; i < routed.requests.size() && i < obs.fallback.size() && !runner.ended(); ++i) {
    if (obs.fallback[i] != to_second_provider(runner.state().used, after)) return false;
    runner.feed(routed.requests[i]);
  }
  return true;
}

}  // namespace

Plan routed_plan(const Plan& plan, const Observations& obs, const Policy& policy, const Acceptance& accept, int after) {
  if (plan_fallback_after(plan) == 0)
    throw InputError("the plan has no fallback column: a client's two providers are audited over a plan made with "
                     "relsim plan --fallback-after");
  if (after < 0 || after > kMaxRequestsPerCall)
    throw InputError(fmt::format("fallback-after = {} is out of range: it must be in [0, {}] (0: no fallback)", after,
                                 kMaxRequestsPerCall));
  Plan out;
  out.header = plan.header;
  out.tasks.reserve(plan.tasks.size());
  std::vector<const TaskObservation*> seen(plan.tasks.size(), nullptr);
  for (const TaskObservation& o : obs.tasks) seen[static_cast<std::size_t>(o.task)] = &o;
  for (std::size_t t = 0; t < plan.tasks.size(); ++t)
    out.tasks.push_back(routed_task(plan.tasks[t], seen[t], policy, accept, after));
  return out;
}

std::vector<int> infer_fallback(const Plan& routed, const Observations& obs, const Policy& policy,
                                const Acceptance& accept) {
  std::vector<int> out;
  // A fallback after the call's last request never moves one: that is no fallback (0).
  for (int after = 0; after < policy.max_requests_per_call(); ++after) {
    const bool all = std::all_of(obs.tasks.begin(), obs.tasks.end(), [&](const TaskObservation& o) {
      return routed_as(routed.tasks[static_cast<std::size_t>(o.task)], o, policy, accept, after);
    });
    if (all) out.push_back(after);
  }
  return out;
}

std::string describe_fallbacks(const std::vector<int>& candidates) {
  if (candidates.empty()) return "no fallback after K explains every task";
  std::string out;
  std::size_t i = 0;
  if (candidates.front() == 0) {
    out = "no fallback";
    ++i;
  }
  while (i < candidates.size()) {
    std::size_t j = i;
    while (j + 1 < candidates.size() && candidates[j + 1] == candidates[j] + 1) ++j;
    out += out.empty() ? "" : ", or ";
    out += j == i ? fmt::format("after {}", candidates[i]) : fmt::format("after {} to {}", candidates[i], candidates[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace relsim
