#pragma once
// The fault plan's format (docs/model.md, Live check): for each task, the
// sequence of its requests, each good ("ok") or a fault kind. Read by the
// mock server, the oracle, the audit and the fit; made by
// montecarlo/plan_gen.hpp (from the simulation's draws, or scripted).
//
// File format (JSON Lines): a header object
//   {"relsim_plan": 1, "tasks": N, "source": "generated"|"scripted", ...context}
// then one object per task, in task order:
//   {"task": 0, "requests": ["ok", "cut", "ok"]}
// A time-mode plan (generate_time_plan) adds to each task line its requests'
// planned starts and its wall time, which readers of the discrete format
// ignore:
//   {"task": 0, "requests": ["ok", "cut", "ok"], "at_seconds": [0, 1.2, 2.9], "seconds": 3.6}
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/faults.hpp"
#include "relsim/core/json.hpp"

namespace relsim {

using PlannedRequest = std::optional<FaultKind>;  // nullopt: a good request

struct TaskPlan {
  std::int64_t task = 0;
  std::vector<PlannedRequest> requests;
  // Time-mode plans only (else empty and NaN): each request's start in
  // seconds from the task's first, and the task's wall time.
  std::vector<double> at_seconds;
  double seconds = std::numeric_limits<double>::quiet_NaN();
};

struct Plan {
  Json header;  // context: how the plan was made
  std::vector<TaskPlan> tasks;
};

inline constexpr std::int64_t kMaxPlanTasks = 10'000'000;

std::string plan_name(const PlannedRequest& r);  // "ok" or the kind
std::string write_plan(const Plan& plan);        // the JSON Lines text
// Strict: throws InputError naming the file, line and value for malformed
// JSON, a missing or wrong header, tasks out of order, unknown request names,
// or more than kMaxPlanTasks tasks.
Plan read_plan(const std::string& path);
Plan parse_plan(const std::string& text, const std::string& where);

}  // namespace relsim
