// The plan of a chain-mode log, drawn again from its chain (audit.hpp).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "relsim/audit/audit.hpp"
#include "relsim/core/request_chain.hpp"

namespace relsim {

std::optional<Plan> plan_of_chain_log(const RequestLog& log, std::int64_t requests) {
  const auto it = log.header.find("chain");
  if (it == log.header.end()) return std::nullopt;
  const RequestChain chain(request_chain_from_json(*it, fmt::format("{}: line 1", log.where)));
  // Each task the log names, with the length its list needs.
  std::map<std::int64_t, std::int64_t> length;
  for (const RequestLine& r : log.requests) {
    std::int64_t& n = length.try_emplace(r.task, requests).first->second;
    n = std::max(n, r.index + 1);
  }
  for (const OutcomeReport& o : log.outcomes) length.try_emplace(o.task, requests);
  Plan plan;
  plan.header = Json{{"relsim_plan", 1}, {"source", "chain"}, {"b", 0}, {"g", 0}};
  plan.header.update(*it);
  const std::int64_t tasks = length.empty() ? 0 : length.rbegin()->first + 1;
  if (tasks > kMaxPlanTasks)
    throw InputError(fmt::format("{}: task {} is past the {} tasks a plan may hold", log.where, tasks - 1, kMaxPlanTasks));
  plan.header["tasks"] = tasks;
  plan.tasks.resize(static_cast<std::size_t>(tasks));
  for (std::int64_t t = 0; t < tasks; ++t) plan.tasks[static_cast<std::size_t>(t)].task = t;
  for (const auto& [task, n] : length) plan.tasks[static_cast<std::size_t>(task)].requests = chain.first(task, n);
  return plan;
}

}  // namespace relsim
