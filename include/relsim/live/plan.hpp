#pragma once
// Fault plans (docs/model.md, Live check): for each task, the sequence of its requests,
// each good ("ok") or a fault kind. A generated plan comes from the same
// draws as `simulate` for the same seed, so a live run over it can be checked
// task by task against the simulator and the oracle; a scripted plan says
// what a test wants ("stall once", "http_529 always", explicit lists).
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
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/montecarlo/simulate.hpp"

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

// The requests simulate(model, policy, config) draws for each task: every
// request of each call the task reaches under `policy` (a call's run of bad
// requests is listed whole, up to the most a call can send).
Plan generate_plan(const Model& model, const Policy& policy, const SimConfig& config);

// Time mode: the requests simulate_time(time, policy, config) sends for each
// task (trace_time.hpp), with their starts and each task's wall time. The
// header has the discrete plan's fields but p, q, b, g; "p" is the chain's
// stationary P(bad), and "time" is `chain` (the chain as given, such as
// {"t_good", "t_bad"}) with the time options (exact/report.hpp's
// time_model_json). Waits depend on the policy: the plan holds for its
// header's policy only.
Plan generate_time_plan(const TimeModel& time, const Json& chain, const Policy& policy, const SimConfig& config);

enum class Times { once, always };
Times parse_times(std::string_view word);  // throws InputError
std::string_view to_string(Times times);

// Every task: `kind` on its first request and good after ("once"), or on
// every request ("always"); as many requests as the policy's worst case.
Plan scripted_plan(std::int64_t tasks, FaultKind kind, Times times, const Policy& policy);

// A plan for auditing a client nobody here wrote (docs/audit.md): the
// same draws, but every task lists all n calls, each call's run of bad
// requests up to `max_requests` (a call with that many bad requests ends the
// list: every audited policy with at most that many requests per call fails
// there). So any policy whose calls send at most `max_requests` requests can
// be checked against it. `policy` is recorded in the header as the default
// the oracle uses; `max_requests` must be at least its requests per call.
// Audited plans need b = g = 0: a server cannot tell a retry from the next
// call, so it cannot place silent steps. The header gains "max_requests".
Plan generate_audit_plan(const Model& model, const Policy& policy, const SimConfig& config, int max_requests);
Plan scripted_audit_plan(std::int64_t tasks, FaultKind kind, Times times, const Policy& policy, int max_requests);

std::string plan_name(const PlannedRequest& r);  // "ok" or the kind
std::string write_plan(const Plan& plan);        // the JSON Lines text
// Strict: throws InputError naming the file, line and value for malformed
// JSON, a missing or wrong header, tasks out of order, unknown request names,
// or more than kMaxPlanTasks tasks.
Plan read_plan(const std::string& path);
Plan parse_plan(const std::string& text, const std::string& where);

}  // namespace relsim
