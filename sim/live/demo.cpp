// The reference experiment, exactly, simulated and live (demo.hpp).
#include "relsim/live/demo.hpp"

#include <utility>

#include "relsim/montecarlo/plan_gen.hpp"

namespace relsim {
namespace {

// One model of the experiment: exact, simulated, and (with config.live) the
// same tasks live.
DemoRow run_demo_model(const char* name, double q, const Policy& policy, const DemoConfig& config) {
  DemoRow row;
  row.name = name;
  row.model.p = 0.3;
  row.model.q = q;
  validate(row.model);
  ExactOptions eopt;
  eopt.distribution = false;
  row.exact = exact_matrix(row.model, policy, eopt);  // success, mean requests and fault share
  SimConfig sc;
  sc.tasks = config.tasks;
  sc.seed = config.seed;
  sc.threads = config.threads;
  row.sim = simulate(row.model, policy, sc);
  row.ci = binomial_interval(IntervalKind::wilson, row.sim.successes, row.sim.tasks, 0.95);
  if (config.tight_tasks > 0) {
    SimConfig big = sc;
    big.tasks = config.tight_tasks;
    row.tight = simulate(row.model, policy, big);
    row.tight_ci = binomial_interval(IntervalKind::wilson, row.tight->successes, row.tight->tasks, 0.95);
  }
  if (config.live) {
    // The same tasks for real: the plan holds the simulator's draws, the
    // mock server serves them, the retrying client runs them.
    LiveOptions options;
    options.concurrency = config.concurrency;
    options.dialect = config.dialect;
    options.jitter_seed = config.seed;
    row.live = run_live_check(generate_plan(row.model, policy, sc), policy, live_timing(), options);
    row.live_ci = binomial_interval(IntervalKind::wilson, row.live->successes, sc.tasks, 0.95);
  }
  return row;
}

}  // namespace

DemoRun run_reference_experiment(const DemoConfig& config) {
  DemoRun run;
  run.config = config;
  run.policy = Policy{2, 2};
  for (const auto& [name, q] : {std::pair{"independent", 0.3}, std::pair{"bursty", 0.8}})
    run.rows.push_back(run_demo_model(name, q, run.policy, config));
  run.kinds = FaultWeights::in_stream_uniform();
  return run;
}

bool demo_mismatched(const DemoRun& run) {
  for (const DemoRow& row : run.rows)
    if (row.live && !row.live->mismatches.empty()) return true;
  return false;
}

}  // namespace relsim
