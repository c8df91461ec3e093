// relsim simulate's tool-call classes (montecarlo/tool_report.hpp).
#include "relsim/montecarlo/tool_report.hpp"

#include <fmt/format.h>

namespace relsim {

std::vector<ToolClassEstimate> tool_estimates(const ToolModel& tools, const SimResult& sim, const ExactResult& exact,
                                              IntervalKind kind, double confidence) {
  std::vector<ToolClassEstimate> out;
  for (int x = 0; x < kToolClasses; ++x) {
    const auto c = static_cast<ToolClass>(x);
    if (!can_end_in(tools.harness, c)) continue;
    ToolClassEstimate e;
    e.tool_class = c;
    e.count = sim.tool_outcomes[static_cast<std::size_t>(x)];
    e.rate = static_cast<double>(e.count) / static_cast<double>(sim.tasks);
    e.ci = binomial_interval(kind, e.count, sim.tasks, confidence);
    e.exact = exact.tool_outcomes[static_cast<std::size_t>(x)];
    e.covered = e.ci.covers(e.exact);
    out.push_back(e);
  }
  return out;
}

void add_tool_json(Json& j, const ToolModel& tools, const std::vector<ToolClassEstimate>& estimates) {
  j["tool_faults"] = to_string(tools.faults);
  j["harness"] = std::string(to_string(tools.harness));
  Json counts = Json::object(), rates = Json::object();
  for (const ToolClassEstimate& e : estimates) {
    const std::string name(to_string(e.tool_class));
    counts[name] = e.count;
    rates[name] = Json{{"rate", e.rate}, {"ci_low", e.ci.low}, {"ci_high", e.ci.high}, {"exact", e.exact},
                       {"covered", e.covered}};
  }
  j["tool_outcomes"] = std::move(counts);
  j["tool_outcome_rates"] = std::move(rates);
}

void tool_table_rows(const std::function<void(std::string_view, const std::string&)>& row, const ToolModel& tools,
                     const std::vector<ToolClassEstimate>& estimates) {
  row("tool calls", fmt::format("{} harness, {}", to_string(tools.harness), to_string(tools.faults)));
  for (const ToolClassEstimate& e : estimates)
    row(fmt::format("  {}", to_string(e.tool_class)),
        fmt::format("{} = {:.6g} [{:.6f}, {:.6f}], exact {:.6g}{}", e.count, e.rate, e.ci.low, e.ci.high, e.exact,
                    e.covered ? "" : " (not covered)"));
}

}  // namespace relsim
