#pragma once
// relsim simulate with tool calls (docs/tool_model.md): each class a tool
// call can give, counted, with the interval the success gets and the exact
// value it should cover.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/json.hpp"
#include "relsim/core/tool_faults.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim {

struct ToolClassEstimate {
  ToolClass tool_class = ToolClass::exec;
  std::int64_t count = 0;
  double rate = 0.0;
  Interval ci;
  double exact = 0.0;
  bool covered = false;
};

// Every class the harness can give (can_end_in), in ToolClass order.
std::vector<ToolClassEstimate> tool_estimates(const ToolModel& tools, const SimResult& sim, const ExactResult& exact,
                                              IntervalKind kind, double confidence);

// Adds tool_faults, harness, tool_outcomes (class -> count) and
// tool_outcome_rates (class -> {rate, ci_low, ci_high, exact, covered}).
void add_tool_json(Json& j, const ToolModel& tools, const std::vector<ToolClassEstimate>& estimates);

// The table's rows: the tool model, then one row per class.
void tool_table_rows(const std::function<void(std::string_view, const std::string&)>& row, const ToolModel& tools,
                     const std::vector<ToolClassEstimate>& estimates);

}  // namespace relsim
