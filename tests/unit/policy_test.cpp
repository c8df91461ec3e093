// The policies (docs/model.md, Policies; docs/policies.md): pinned scenarios through the oracle, the
// exact engine's unrolling of the rules against those rules run over every
// kind-labelled request sequence, and layered == simple when every fault is
// in-stream. The rules themselves are checked against an independent
// re-implementation in policy_brute_force_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "relsim/core/error.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

Prediction run(const Policy& policy, std::vector<PlannedRequest> requests) {
  TaskPlan t;
  t.requests = std::move(requests);
  return predict(policy, t, ClientTiming{});
}

std::vector<PlannedRequest> always(FaultKind kind, std::size_t count = 64) { return {count, PlannedRequest(kind)}; }

std::vector<PlannedRequest> once(FaultKind kind) {
  std::vector<PlannedRequest> v(64, std::nullopt);
  v[0] = kind;
  return v;
}

TEST(Policies, PersistentSlowHeadersCostsNaiveNineRequestsAndCrashes) {
  const Prediction p = run(Policy{.n = 1, .r = 2, .kind = PolicyKind::naive}, always(FaultKind::slow_headers));
  EXPECT_EQ(p.requests, 9);
  EXPECT_EQ(p.outcome.name(), "crash:slow_headers");
}

TEST(Policies, PersistentSlowHeadersCostsLayeredThreeRequestsAsEnvError) {
  const Prediction p = run(Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}, always(FaultKind::slow_headers));
  EXPECT_EQ(p.requests, 3);
  EXPECT_EQ(p.outcome.name(), "env_error:slow_headers");
}

// Headers late s times, then a stall, every round.
std::vector<PlannedRequest> late_late_stall() {
  std::vector<PlannedRequest> v;
  for (int round = 0; round < 20; ++round)
    for (auto k : {FaultKind::slow_headers, FaultKind::slow_headers, FaultKind::stall}) v.push_back(k);
  return v;
}

TEST(Policies, MixedLateHeadersAndStallReachNineRequestsUnderLayered) {
  const Prediction p = run(Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}, late_late_stall());
  EXPECT_EQ(p.requests, 9);
  EXPECT_EQ(p.outcome.name(), "env_error:stall");
}

TEST(Policies, BudgetOfFourStopsTheMixedCaseAtFour) {
  const Prediction p = run(Policy{.n = 1, .r = 2, .B = 4, .kind = PolicyKind::budgeted}, late_late_stall());
  EXPECT_EQ(p.requests, 4);
  EXPECT_EQ(p.outcome.outcome, Outcome::env_error);
  EXPECT_EQ(p.outcome.name(), "env_error:slow_headers");  // the kind of its last fault
}

TEST(Policies, Persistent529EndsLayeredAsEnvErrorAfterThree) {
  const Prediction p = run(Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}, always(FaultKind::http_529));
  EXPECT_EQ(p.requests, 3);
  EXPECT_EQ(p.outcome.name(), "env_error:http_529");
}

TEST(Policies, Http400IsHarnessErrorAfterOneRequestUnderEveryPolicy) {
  for (auto kind : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted}) {
    const Prediction p = run(Policy{.n = 1, .r = 2, .B = 4, .kind = kind}, always(FaultKind::http_400));
    EXPECT_EQ(p.requests, 1) << to_string(kind);
    EXPECT_EQ(p.outcome.name(), "harness_error") << to_string(kind);
  }
}

TEST(Policies, OverloadedOnceCrashesNaiveButLayeredRetriesToDone) {
  const Prediction naive = run(Policy{.n = 1, .r = 2, .kind = PolicyKind::naive}, once(FaultKind::overloaded));
  EXPECT_EQ(naive.requests, 1);
  EXPECT_EQ(naive.outcome.name(), "crash:overloaded");
  const Prediction layered = run(Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}, once(FaultKind::overloaded));
  EXPECT_EQ(layered.requests, 2);
  EXPECT_EQ(layered.outcome.name(), "done");
}

TEST(Policies, EveryInStreamKindThreeTimesEndsLayeredAfterExactlyThree) {
  for (auto kind : {FaultKind::cut, FaultKind::no_stop, FaultKind::malformed, FaultKind::overloaded, FaultKind::stall}) {
    std::vector<PlannedRequest> v(3, kind);
    v.push_back(std::nullopt);  // a good fourth request is never sent
    const Prediction p = run(Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}, v);
    EXPECT_EQ(p.requests, 3) << to_string(kind);
    EXPECT_EQ(p.outcome.name(), "env_error:" + std::string(to_string(kind)));
  }
}

TEST(Policies, StallUnderNaiveHangs) {
  const Prediction p = run(Policy{.n = 1, .r = 2, .kind = PolicyKind::naive}, once(FaultKind::stall));
  EXPECT_EQ(p.requests, 1);
  EXPECT_EQ(p.outcome.name(), "hang");
}

TEST(Policies, ScriptedAlwaysPlanIsAsLongAsTheWorstCase) {
  const Plan plan =
      scripted_plan(3, FaultKind::cut, Times::always, Policy{.n = 2, .r = 2, .kind = PolicyKind::layered});
  ASSERT_EQ(plan.tasks.size(), 3u);
  EXPECT_EQ(plan.tasks[0].requests.size(), 18u);  // n (s+1)(r+1)
  const Plan reread = parse_plan(write_plan(plan), "memory");
  ASSERT_EQ(reread.tasks.size(), 3u);
  EXPECT_EQ(reread.tasks[2].requests, plan.tasks[2].requests);
}

TEST(Policies, OracleRefusesAPlanThatEndsBeforeTheTask) {
  EXPECT_THROW(run(Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}, {FaultKind::cut, FaultKind::cut}), InputError);
}

// Every sequence over {ok, kinds} of the policy's worst-case length, weighted
// by the two-state chain written out here, run through relsim's own rules
// (TaskRunner, i.e. `react`), and summed. The chain weighting and the request
// counts are independent of the engine; the outcomes are not: the transfer
// matrix calls the same `react`, so a wrong rule would pass here. What this
// checks is the engine's unrolling of the rules (its DP over call states,
// bins, mean), not the rules; policy_brute_force_test.cpp checks those.
// Sums in long double: 5^8 terms in double would lose ~1e-12 of their own.
struct SequenceBrute {
  std::map<std::string, long double> outcomes;
  std::map<std::pair<std::int64_t, int>, long double> bins;  // (requests, Outcome) -> probability
  long double mean = 0.0;
};

SequenceBrute brute_force_sequences(double p, double q, const Policy& policy,
                                    const std::vector<std::pair<FaultKind, double>>& kinds) {
  const double p0 = p * (1 - q) / (1 - p);
  const auto length = static_cast<int>(policy.max_requests());
  const int symbols = 1 + static_cast<int>(kinds.size());
  double total_w = 0.0;
  for (const auto& kw : kinds) total_w += kw.second;
  SequenceBrute out;
  std::vector<int> digits(static_cast<std::size_t>(length), 0);
  while (true) {
    double w = 1.0;
    bool prev_bad = false;
    std::vector<PlannedRequest> seq;
    for (int i = 0; i < length; ++i) {
      const int d = digits[static_cast<std::size_t>(i)];
      const bool bad = d > 0;
      const double pb = i == 0 ? p : (prev_bad ? q : p0);
      w *= bad ? pb * kinds[static_cast<std::size_t>(d - 1)].second / total_w : 1 - pb;
      seq.push_back(bad ? PlannedRequest(kinds[static_cast<std::size_t>(d - 1)].first) : std::nullopt);
      prev_bad = bad;
    }
    TaskRunner runner(policy);
    for (const auto& r : seq)
      if (!runner.feed(r)) break;
    EXPECT_TRUE(runner.ended());
    out.outcomes[runner.outcome().name()] += w;
    out.bins[{runner.requests(), static_cast<int>(runner.outcome().outcome)}] += w;
    out.mean += w * static_cast<double>(runner.requests());
    int i = length - 1;
    while (i >= 0 && ++digits[static_cast<std::size_t>(i)] == symbols) digits[static_cast<std::size_t>(i--)] = 0;
    if (i < 0) break;
  }
  return out;
}

TEST(PolicyExact, MatrixUnrollsTheRulesLikeTaskRunnerOverEveryKindLabelledSequence) {
  const std::vector<std::pair<FaultKind, double>> kinds = {
      {FaultKind::cut, 1.0}, {FaultKind::slow_headers, 2.0}, {FaultKind::http_529, 1.0}, {FaultKind::stall, 0.5}};
  FaultWeights weights;
  for (const auto& [k, w] : kinds) weights.weight[static_cast<std::size_t>(k)] = w;
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (auto kind : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted}) {
    for (int trial = 0; trial < 3; ++trial) {
      const double p = 0.05 + 0.4 * unit(gen);
      const double q = std::max(0.0, (2 * p - 1) / p) + (1 - std::max(0.0, (2 * p - 1) / p)) * unit(gen);
      const Policy policy{.n = trial == 2 ? 2 : 1, .r = 1, .s = 1, .B = 3, .kind = kind};
      Model model;
      model.p = p;
      model.q = q;
      ExactOptions opt;
      opt.kinds = weights;
      const ExactResult ex = exact_matrix(model, policy, opt);
      const SequenceBrute bf = brute_force_sequences(p, q, policy, kinds);
      for (int o = 0; o < kOutcomeClasses; ++o) {
        const std::string name = outcome_class(o).name();
        const double want = bf.outcomes.count(name) ? static_cast<double>(bf.outcomes.at(name)) : 0.0;
        EXPECT_NEAR(ex.outcomes[static_cast<std::size_t>(o)], want, 1e-12) << name << " " << to_string(kind);
      }
      double covered = 0.0;
      for (const auto& bin : ex.requests) {
        const auto key = std::pair{bin.requests, static_cast<int>(bin.outcome)};
        ASSERT_TRUE(bf.bins.count(key)) << bin.requests << " " << to_string(bin.outcome);
        EXPECT_NEAR(bin.probability, static_cast<double>(bf.bins.at(key)), 1e-12);
        covered += static_cast<double>(bf.bins.at(key));
      }
      EXPECT_NEAR(covered, 1.0, 1e-12);  // no brute-force bin is missing from the engine's list
      EXPECT_NEAR(ex.mean_requests, static_cast<double>(bf.mean), 1e-12);
    }
  }
}

TEST(PolicyExact, LayeredEqualsSimpleWhenEveryFaultIsInStream) {
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    Model model;
    model.p = 0.6 * unit(gen);
    model.q = std::max(0.0, (2 * model.p - 1) / model.p) + 0.9 * unit(gen) * (1 - std::max(0.0, (2 * model.p - 1) / model.p));
    model.b = trial % 3;
    model.g = trial % 2;
    model.chain = trial % 4 == 0 ? ChainScope::continuous : ChainScope::fresh;
    const int r = trial % 4;
    const std::int64_t n = 1 + trial % 5;
    const ExactResult simple = exact_matrix(model, Policy{.n = n, .r = r, .s = 0, .kind = PolicyKind::simple});
    const ExactResult layered = exact_matrix(model, Policy{.n = n, .r = r, .kind = PolicyKind::layered});
    EXPECT_EQ(simple.success, layered.success);
    EXPECT_EQ(simple.mean_requests, layered.mean_requests);
    EXPECT_EQ(simple.max_requests, layered.max_requests);
    EXPECT_EQ(simple.outcomes, layered.outcomes);
    EXPECT_LE(max_abs_diff(simple, layered), 0.0);
  }
}

TEST(PolicyExact, NaiveHasWrongOutcomesAndLayeredNone) {
  Model model;
  model.p = 0.3;
  model.q = 0.8;
  ExactOptions opt;
  opt.kinds = parse_fault_weights("cut=1,stall=1,slow_headers=1,http_529=1,overloaded=1");
  EXPECT_GT(exact_matrix(model, Policy{.n = 2, .r = 2, .kind = PolicyKind::naive}, opt).wrong, 0.1);
  EXPECT_EQ(exact_matrix(model, Policy{.n = 2, .r = 2, .kind = PolicyKind::layered}, opt).wrong, 0.0);
  EXPECT_EQ(exact_matrix(model, Policy{.n = 2, .r = 2, .B = 4, .kind = PolicyKind::budgeted}, opt).wrong, 0.0);
  // Worst cases: (s+1)(r+1) per call for layered, B per call for budgeted.
  EXPECT_EQ(exact_matrix(model, Policy{.n = 2, .r = 2, .kind = PolicyKind::layered}, opt).max_requests, 18);
  EXPECT_EQ(exact_matrix(model, Policy{.n = 2, .r = 2, .B = 4, .kind = PolicyKind::budgeted}, opt).max_requests, 8);
}

}  // namespace
}  // namespace relsim
