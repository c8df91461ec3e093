#pragma once
// Internal: simulate() through the general walk (walk_policy_task), for the
// naive, layered and budgeted policies, and for the simple policy when
// http_400 is in the mix (the chunk kernels know only the rule that every
// bad request is an attempt).
#include "relsim/montecarlo/simulate.hpp"
#include "montecarlo/fail_task_hook.hpp"

namespace relsim::detail {

// This rank's share of the run (SimConfig::share; simulate() sums the
// ranks): every task walked request by request through the policy's rules,
// counted in integers per thread and summed, so any thread count gives the
// same result.
SimResult simulate_policy(const Model& model, const Policy& policy, const SimConfig& config, const DrawScheme& s,
                          const FailTaskHook& hook);

}  // namespace relsim::detail
