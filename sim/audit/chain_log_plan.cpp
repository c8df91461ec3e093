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
  if (requests < 0 || requests > kMaxChainPlanRequests)
    throw InputError(fmt::format("{} requests per task is out of range for a plan drawn from the chain: at most {}",
                                 requests, kMaxChainPlanRequests));
  // Each task the log names, with the length its list needs.
  const auto task_in_range = [&](std::int64_t task, std::int64_t line) {
    if (task >= kMaxPlanTasks)
      throw InputError(fmt::format("{}:{}: task {} is past the {} tasks a plan drawn from the chain may hold",
                                   log.where, line, task, kMaxPlanTasks));
  };
  std::map<std::int64_t, std::int64_t> length;
  for (const RequestLine& r : log.requests) {
    task_in_range(r.task, r.line);
    if (r.index >= kMaxChainPlanRequests)
      throw InputError(fmt::format("{}:{}: request index {} is past the {} requests per task a plan drawn from the "
                                   "chain may hold",
                                   log.where, r.line, r.index, kMaxChainPlanRequests));
    std::int64_t& n = length.try_emplace(r.task, requests).first->second;
    n = std::max(n, r.index + 1);
  }
  for (const OutcomeReport& o : log.outcomes) {
    task_in_range(o.task, o.line);
    length.try_emplace(o.task, requests);
  }
  std::int64_t total = 0;
  for (const auto& [task, n] : length) total += n;
  if (total > kMaxChainPlanEntries)
    throw InputError(fmt::format("{}: the plan drawn from the chain would hold {} requests, more than {}: give a "
                                 "smaller --n, or audit against a plan file",
                                 log.where, total, kMaxChainPlanEntries));
  Plan plan;
  plan.header = Json{{"relsim_plan", 1}, {"source", "chain"}, {"b", 0}, {"g", 0}};
  plan.header.update(*it);
  const std::int64_t tasks = length.empty() ? 0 : length.rbegin()->first + 1;
  plan.header["tasks"] = tasks;
  plan.tasks.resize(static_cast<std::size_t>(tasks));
  for (std::int64_t t = 0; t < tasks; ++t) plan.tasks[static_cast<std::size_t>(t)].task = t;
  for (const auto& [task, n] : length) plan.tasks[static_cast<std::size_t>(task)].requests = chain.first(task, n);
  return plan;
}

}  // namespace relsim
