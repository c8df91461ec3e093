// Simulation of every policy: against the exact engine on a seeded grid, and
// against the oracle run over a plan drawn for the same seed (same counts).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "relsim/exact/exact.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim {
namespace {

const char* kMixed = "cut=1,stall=1,slow_headers=2,http_529=1,overloaded=1,http_400=0.05,reset=0.5";

TEST(PolicySimulation, OracleOverAGeneratedPlanCountsWhatSimulateCounts) {
  // The mixed kinds, and the content faults (a call that takes one ends on a bad request).
  for (const char* mix : {kMixed, "max_tokens=1,duplicate_event=1,bad_tool_args=1,cut=1,http_529=1"})
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
        config.kinds = parse_fault_weights(mix);
        const SimResult sim = simulate(model, policy, config);
        // Through the file format, as `relsim plan` and `relsim oracle` do.
        const Plan plan = parse_plan(write_plan(generate_plan(model, policy, config)), "memory");
        const OracleResult oracle = run_oracle(policy, plan, ClientTiming{});
        const std::string what = std::string(to_string(kind)) + " " + std::string(to_string(chain)) + " " + mix;
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

// The content faults with others: done, partial_done (what a loop took
// that it should not have) and the mean requests within 5 standard errors
// of the exact engine's, under every policy and both scopes.
TEST(PolicySimulation, ContentFaultsMatchExactWithinFiveStandardErrors) {
  const FaultWeights kinds = parse_fault_weights("max_tokens=1,bad_tool_args=1,duplicate_event=1,stall_first=1,cut=1,http_529=1");
  int cases = 0, partial_seen = 0;
  for (auto kind : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted})
    for (auto chain : {ChainScope::fresh, ChainScope::continuous}) {
      Model model;
      model.p = 0.2;
      model.q = 0.7;
      model.b = 1;  // a retry and a next call step the chain apart
      model.g = 2;
      model.chain = chain;
      const Policy policy{.n = 3, .r = 2, .s = 1, .B = 3, .kind = kind};
      SimConfig config;
      config.tasks = 40000;
      config.seed = 4400 + static_cast<std::uint64_t>(cases++);
      config.kinds = kinds;
      const SimResult sim = simulate(model, policy, config);
      ExactOptions opt;
      opt.kinds = kinds;
      const ExactResult ex = exact_matrix(model, policy, opt);
      const double design = chain == ChainScope::continuous ? sim.design_effect() : 1.0;
      const auto tasks = static_cast<double>(sim.tasks);
      const auto within = [&](std::int64_t count, double p, const std::string& what) {
        const double se = std::sqrt(std::max(p * (1.0 - p), 1e-12) * design / tasks);
        EXPECT_LE(std::abs(static_cast<double>(count) / tasks - p), 5.0 * se)
            << to_string(kind) << " " << to_string(chain) << " " << what << ": " << count << "/" << sim.tasks << " vs " << p;
      };
      within(sim.successes, ex.success, "done");
      const auto partial = static_cast<std::size_t>(index_of(OutcomeClass{Outcome::partial_done, std::nullopt}));
      within(sim.outcomes[partial], ex.outcomes[partial], "partial_done");
      partial_seen += ex.outcomes[partial] > 0.0 ? 1 : 0;
      if (chain == ChainScope::fresh) {
        double m2 = 0.0;
        for (const RequestBin& b : ex.requests) m2 += b.probability * static_cast<double>(b.requests * b.requests);
        const double sd = std::sqrt(std::max(0.0, m2 - ex.mean_requests * ex.mean_requests));
        EXPECT_LE(std::abs(static_cast<double>(sim.requests) / tasks - ex.mean_requests), 5.0 * sd / std::sqrt(tasks))
            << to_string(kind) << " mean requests";
      }
    }
  // naive (partial_done from each content kind) and layered and budgeted (from the duplicate), both scopes.
  EXPECT_EQ(partial_seen, 6);
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
