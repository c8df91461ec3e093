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
// A plan with a fallback to a second provider (core/fallback.hpp) adds a
// second column: what request i of the task gets when it goes to the second
// provider (the server's /t/{task}/fallback/ path) instead of the first;
// both columns have one entry per request:
//   {"task": 0, "requests": ["http_529", "http_529", "ok"], "fallback": ["ok", "ok", "ok"]}
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
  // A fallback plan's second column (see above), as long as `requests`;
  // empty without a fallback.
  std::vector<PlannedRequest> fallback{};
  // Time-mode plans only (else empty and NaN): each request's start in
  // seconds from the task's first, and the task's wall time.
  std::vector<double> at_seconds{};
  double seconds = std::numeric_limits<double>::quiet_NaN();
};

struct Plan {
  Json header;  // context: how the plan was made
  std::vector<TaskPlan> tasks;
};

inline constexpr std::int64_t kMaxPlanTasks = 10'000'000;

std::string plan_name(const PlannedRequest& r);  // "ok" or the kind
// A fallback plan's K (its header's "fallback": {"after": K, ...}: a
// call's first K requests go to the first provider); 0 for a plan without.
int plan_fallback_after(const Plan& plan);
std::string write_plan(const Plan& plan);        // the JSON Lines text
// Strict: throws InputError naming the file, line and value for malformed
// JSON, a missing or wrong header, tasks out of order, unknown request names,
// or more than kMaxPlanTasks tasks; and for a header "fallback" whose
// "after" is not an integer in [1, kMaxRequestsPerCall], or a fallback
// column on some task lines but not on all, or on none when the header has
// a fallback.
Plan read_plan(const std::string& path);
Plan parse_plan(const std::string& text, const std::string& where);

}  // namespace relsim
