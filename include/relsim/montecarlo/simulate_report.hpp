#pragma once
// relsim simulate's run and what it prints: the simulation of any policy
// (discrete, in seconds, or with tool calls), the exact value its interval
// is checked against, and the two as one JSON object (--json) or a table.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/faults.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/thresholds.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/simulate_time.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "relsim/montecarlo/tool_report.hpp"

namespace relsim {

// What to run: the model, the policy, the simulation's configuration (its
// tools, kinds and ranks included) and the interval.
struct SimulateSetup {
  Model model;                    // discrete mode
  std::optional<TimeModel> time;  // time mode
  Json chain_json;                // time mode: the chain as given, as JSON fields
  std::string chain_words;        // and in words
  Policy policy;
  SimConfig config;
  IntervalKind interval = IntervalKind::wilson;
  double confidence = 0.95;
};

// With prices: the simulated cost per task (USD) against the exact one.
struct CostEstimate {
  double mean = 0.0, sd = 0.0;  // over all tasks
  Interval interval;            // the mean's: normal, at the run's confidence
  double mean_done = std::numeric_limits<double>::quiet_NaN();  // NaN when no task ended done
  double p50 = 0.0, p90 = 0.0, p99 = 0.0;                      // over all tasks
  double exact_mean = 0.0;
  double exact_mean_done = std::numeric_limits<double>::quiet_NaN();
};

// What the run found: the simulation, the exact value and the interval.
struct SimulateCheck {
  SimResult sim;
  std::optional<TimeSimResult> timed;  // time mode
  double exact_mean_seconds = 0.0;     // time mode
  double exact = 0.0;
  double exact_fault_share = 0.0;
  double design_effect = 1.0;
  Interval ci;
  bool covered = false;
  std::vector<ToolClassEstimate> tools;  // with tool calls
  std::optional<CostEstimate> cost;      // with prices

  double rate() const { return static_cast<double>(sim.successes) / static_cast<double>(sim.tasks); }
  // A count's share of the requests sent.
  double share(std::int64_t count) const {
    return sim.requests > 0 ? static_cast<double>(count) / static_cast<double>(sim.requests) : 0.0;
  }
};

// The run, on every rank alike (setup.config.share): the simulation, then
// `simulated` (where a progress display ends), then the exact value without
// its distribution, and the interval widened by the design effect for the
// continuous scope. Throws InputError as simulate, simulate_time and the
// exact engine do.
SimulateCheck simulate_and_check(const SimulateSetup& setup, const std::function<void()>& simulated = {});

// The `relsim simulate --json` object: model_json's fields (time mode:
// time_head_json's), lanes, policy, s, B, seed, tasks, successes,
// env_errors, rate, the interval and its coverage of exact, requests,
// outcomes, wrong, the tool classes (add_tool_json), bad_requests, the fault
// shares simulated and exact, the burst shape, requests_quantiles (null with
// a note when a task can outrun the kept counts), kinds, faults and
// fault_shares by drawn kind; time mode adds the wall time's mean and
// quantiles with their intervals.
Json simulate_json(const SimulateSetup& setup, const SimulateCheck& check);

// The `relsim simulate` table.
std::string simulate_table(const SimulateSetup& setup, const SimulateCheck& check);

// The metrics --require may name (thresholds.hpp) and their values in a run:
// point estimates, and success_low, the low end of the success interval, for
// a gate that holds with the run's confidence.
extern const std::vector<std::string> kSimulateMetrics;
Measured simulate_measured(const SimulateCheck& check);

}  // namespace relsim
