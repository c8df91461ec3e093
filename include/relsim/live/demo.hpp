#pragma once
// The reference experiment (docs/model.md, Reference experiment), as relsim
// demo runs it: p = 0.3, r = 2, n = 2 under the simple policy, for
// independent (q = 0.3) and bursty (q = 0.8) faults, each exactly, by
// simulation (and again over many tasks for a tight interval), and live over
// HTTP against the oracle.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/live/live.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim {

struct DemoConfig {
  std::int64_t tasks = 400;  // simulated (and live) tasks per model
  std::uint64_t seed = rng::kReferenceSeed;
  int threads = 0;                      // OpenMP threads of the simulation (0: OpenMP's default)
  std::int64_t tight_tasks = 1'000'000;  // also simulated, for a tight interval (0: none)
  bool live = true;                     // run the same tasks live
  int concurrency = LiveOptions{}.concurrency;  // live tasks in flight at once
  Dialect dialect = Dialect::anthropic;          // the API the live client speaks
};

// One model of the experiment; intervals are 95% Wilson.
struct DemoRow {
  std::string name;  // independent or bursty
  Model model;
  ExactResult exact;  // success, mean requests and fault share
  SimResult sim;
  Interval ci;
  std::optional<SimResult> tight;  // the same model over tight_tasks tasks
  Interval tight_ci;
  std::optional<LiveCheck> live;  // the same tasks live, the plan holding the simulation's draws
  Interval live_ci;
};

struct DemoRun {
  DemoConfig config;
  Policy policy;       // simple, r = 2, n = 2
  FaultWeights kinds;  // the kinds drawn: in-stream, uniform
  std::vector<DemoRow> rows;  // independent, then bursty
};

// Throws InputError as the engines do for a bad config.
DemoRun run_reference_experiment(const DemoConfig& config);

// Whether a live task differed from the oracle's prediction.
bool demo_mismatched(const DemoRun& run);

}  // namespace relsim
