#pragma once
// What relsim fleet prints of a simulated fleet (fleet.hpp): one JSON object
// (--json) or a table, and the time series as CSV (--csv).
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/fleet/fleet.hpp"
#include "relsim/fleet/scenario.hpp"

namespace relsim::fleet {

// {"tasks", "successes", "success_rate", "ci_low", "ci_high" (95% Wilson),
// "requests", "rate_429", "rate_529", "amplification", "latency_p50",
// "latency_p99", "pool_wait_p99", "short_pool_wait_p99", "seed",
// "replicates", "good", "r429", "r529", "timeouts", "wasted", "denied",
// "events", "outcomes" (class -> tasks), "scenario": {the scenario's fields,
// its policy described}}. A figure with nothing to divide by is NaN.
Json fleet_json(const Scenario& scenario, const RunConfig& config, const FleetResult& result);

// The readable table of fleet_json's figures.
std::string fleet_table(const Scenario& scenario, const RunConfig& config, const FleetResult& result);

// t,sent,good,r429,r529,timeouts,started,finished,successes,goodput: one row
// per bin, counts over every replicate, goodput per second per replicate.
std::string series_csv(const FleetResult& result);
// The same series as columns (fleet --json --series; the workbench's fleet
// panel): bin_seconds, and t, sent, good, r429, r529, timeouts and goodput,
// one number a bin each.
Json series_json(const FleetResult& result);

}  // namespace relsim::fleet
