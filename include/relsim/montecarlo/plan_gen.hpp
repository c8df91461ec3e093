#pragma once
// Making fault plans (formats/plan.hpp): from the same draws as `simulate`
// for the same seed, so a live run over the plan can be checked task by task
// against the simulator and the oracle; or scripted, saying what a test wants
// ("stall once", "http_529 always").
#include <cstdint>
#include <string>
#include <string_view>

#include "relsim/core/faults.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/montecarlo/simulate.hpp"

namespace relsim {

// The requests simulate(model, policy, config) draws for each task: every
// request of each call the task reaches under `policy` (a call's run of bad
// requests is listed whole, up to the most a call can send). With
// config.fallback (in steps, fresh scope) each task has a fallback column
// too (formats/plan.hpp), walked request by request as simulate walks it:
// exactly the requests `policy` sends, each provider's reply to each, and
// the header has "fallback" (exact/fallback_report.hpp's fallback_json).
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

}  // namespace relsim
