// Simulation of every policy: against the exact engine on a seeded grid, and
// against the oracle run over a plan drawn for the same seed (same counts).
#include <gtest/gtest.h>

#include "relsim/exact/exact.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim {
namespace {

const char* kMixed = "cut=1,stall=1,slow_headers=2,http_529=1,overloaded=1,http_400=0.05,reset=0.5";

TEST(PolicySimulation, OracleOverAGeneratedPlanCountsWhatSimulateCounts) {
  for (auto kind : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted})
    for (auto chain : {ChainScope::fresh, ChainScope::continuous}) {
      Model model;
      model.p = 0.3;
      model.q = 0.8;
      model.b = 1;
      model.chain = chain;
      const Policy policy{.n = 3, .r = 2, .s = 2, .B = 4, .kind = kind};
      SimConfig config;
      config.tasks = 3000;
      config.seed = 99;
      config.lanes = 7;
      config.kinds = parse_fault_weights(kMixed);
      const SimResult sim = simulate(model, policy, config);
      // Through the file format, as `relsim plan` and `relsim oracle` do.
      const Plan plan = parse_plan(write_plan(generate_plan(model, policy, config)), "memory");
      const OracleResult oracle = run_oracle(policy, plan, ClientTiming{});
      const std::string what = std::string(to_string(kind)) + " " + std::string(to_string(chain));
      EXPECT_EQ(oracle.outcomes[0], sim.successes) << what;
      EXPECT_EQ(oracle.requests, sim.requests) << what;
      EXPECT_EQ(oracle.faults, sim.faults) << what;
      if (sim.outcomes_by_class) {
        EXPECT_EQ(oracle.outcomes, sim.outcomes) << what;
      }
      EXPECT_GT(sim.successes, 0) << what;
      EXPECT_LT(sim.successes, config.tasks) << what;
    }
}

TEST(PolicySimulation, EveryPolicyMatchesExactInside999PercentWilson) {
  int cases = 0, wrong_seen = 0;
  for (auto kind : {PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted})
    for (double q : {0.3, 0.8})
      for (int r : {1, 2})
        for (auto chain : {ChainScope::fresh, ChainScope::continuous}) {
          Model model;
          model.p = 0.25;
          model.q = q;
          model.g = r - 1;
          model.chain = chain;
          const Policy policy{.n = 2, .r = r, .s = 2, .B = 3, .kind = kind};
          SimConfig config;
          config.tasks = 20000;
          config.seed = 1000 + static_cast<std::uint64_t>(cases);
          config.kinds = parse_fault_weights(kMixed);
          const SimResult sim = simulate(model, policy, config);
          ExactOptions opt;
          opt.distribution = false;
          opt.kinds = config.kinds;
          const ExactResult ex = exact_matrix(model, policy, opt);
          const double d = chain == ChainScope::continuous ? sim.design_effect() : 1.0;
          const Interval ci = effective_interval(IntervalKind::wilson, sim.successes, sim.tasks, 0.999, d);
          EXPECT_TRUE(ci.covers(ex.success)) << to_string(kind) << " q=" << q << " r=" << r << " "
                                             << to_string(chain) << ": " << sim.successes << "/" << sim.tasks
                                             << " vs " << ex.success;
          // Each outcome class too (fresh scope: independent tasks).
          if (chain == ChainScope::fresh)
            for (int o = 1; o < kOutcomeClasses; ++o) {
              const Interval oc = binomial_interval(IntervalKind::wilson, sim.outcomes[static_cast<std::size_t>(o)],
                                                    sim.tasks, 0.999);
              EXPECT_TRUE(oc.covers(ex.outcomes[static_cast<std::size_t>(o)])) << outcome_class(o).name();
            }
          wrong_seen += kind == PolicyKind::naive && ex.wrong > 0.0 ? 1 : 0;
          ++cases;
        }
  EXPECT_EQ(cases, 24);
  EXPECT_EQ(wrong_seen, 8);  // naive always has wrong outcomes under this mix
}

TEST(PolicySimulation, SameSeedSameCountsForAnyThreadCount) {
  Model model;
  model.p = 0.3;
  model.q = 0.8;
  model.chain = ChainScope::continuous;
  SimConfig config;
  config.tasks = 5000;
  config.kinds = parse_fault_weights(kMixed);
  config.threads = 1;
  const SimResult one = simulate(model, Policy{.n = 2, .r = 2, .s = 2, .kind = PolicyKind::layered}, config);
  config.threads = 3;
  const SimResult three = simulate(model, Policy{.n = 2, .r = 2, .s = 2, .kind = PolicyKind::layered}, config);
  EXPECT_EQ(one.outcomes, three.outcomes);
  EXPECT_EQ(one.requests, three.requests);
  EXPECT_EQ(one.done_by_requests, three.done_by_requests);
  EXPECT_EQ(one.pairs_after, three.pairs_after);
}

}  // namespace
}  // namespace relsim
