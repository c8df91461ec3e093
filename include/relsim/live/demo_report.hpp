#pragma once
// What relsim demo prints of the reference experiment (demo.hpp): one JSON
// object (--json), or the exact and simulated table with the faults
// injected by kind, then the live table.
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/live/demo.hpp"

namespace relsim {

// {"p", "r", "n", "tasks", "seed", "kinds", and per model ("independent",
// "bursty"): {"q", "exact", "successes", "tasks", "rate", "ci_low",
// "ci_high", "covered", "requests", "exact_mean_requests", "fault_share",
// "exact_fault_share", "faults" by drawn kind, "tight": {...} and "live":
// {...} when run}}.
Json demo_json(const DemoRun& run);

// The exact and simulated results, the faults injected by kind, then the
// live results when the run has them.
std::string demo_table(const DemoRun& run);

}  // namespace relsim
