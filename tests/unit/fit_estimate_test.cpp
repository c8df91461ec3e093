// relsim fit's counts and estimates (docs/fit.md) against values from outside
// the code: the closed form of the independent case, a likelihood worked out
// sequence by sequence, a brute-force grid of the likelihood written here,
// and coverage of the intervals on sequences drawn by a sampler of this file.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/fit/counts.hpp"
#include "relsim/fit/estimate.hpp"
#include "relsim/fit/predict.hpp"

namespace relsim::fit {
namespace {

using Seq = std::vector<int>;  // 1 = bad

ChainCounts count(const std::vector<Seq>& tasks) {
  ChainCounter counter;
  for (std::size_t t = 0; t < tasks.size(); ++t)
    for (std::size_t i = 0; i < tasks[t].size(); ++i)
      counter.add({std::to_string(t), std::int64_t(i), tasks[t][i] == 1, tasks[t][i] == 1 ? "cut" : ""});
  return counter.counts();
}

// The model's sampler (docs/model.md, Fault chain), written again here.
std::vector<Seq> sample(double p, double q, int tasks, int length, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double p0 = p * (1.0 - q) / (1.0 - p);
  std::vector<Seq> out(static_cast<std::size_t>(tasks));
  for (Seq& s : out) {
    int state = u(rng) < p ? 1 : 0;
    s.push_back(state);
    for (int i = 1; i < length; ++i) {
      state = u(rng) < (state == 1 ? q : p0) ? 1 : 0;
      s.push_back(state);
    }
  }
  return out;
}

// The likelihood as a product over each task's requests, independent of
// the counts: P(first) * prod P(next | previous).
double sequence_log_likelihood(const std::vector<Seq>& tasks, double p, double q) {
  const double p0 = p * (1.0 - q) / (1.0 - p);
  double l = 0.0;
  for (const Seq& s : tasks) {
    l += std::log(s[0] == 1 ? p : 1.0 - p);
    for (std::size_t i = 1; i < s.size(); ++i) {
      const double bad = s[i - 1] == 1 ? q : p0;
      l += std::log(s[i] == 1 ? bad : 1.0 - bad);
    }
  }
  return l;
}

TEST(FitCounts, HandMadeSequences) {
  const std::vector<Seq> tasks = {{1, 1, 0}, {0, 1}, {0, 0, 0, 1}, {1}};
  const ChainCounts c = count(tasks);
  EXPECT_EQ(c.records, 10);
  EXPECT_EQ(c.tasks, 4);
  EXPECT_EQ(c.first[1], 2);
  EXPECT_EQ(c.first[0], 2);
  EXPECT_EQ(c.transitions[1][1], 1);
  EXPECT_EQ(c.transitions[1][0], 1);
  EXPECT_EQ(c.transitions[0][1], 2);
  EXPECT_EQ(c.transitions[0][0], 2);
  EXPECT_EQ(c.triplets[1][1][0], 1);
  EXPECT_EQ(c.triplets[0][0][0], 1);
  EXPECT_EQ(c.triplets[0][0][1], 1);
  EXPECT_EQ(c.completed[1].at(2), 1);  // 1 1 | 0
  EXPECT_EQ(c.completed[0].at(1), 1);  // 0 | 1
  EXPECT_EQ(c.completed[0].at(3), 1);  // 0 0 0 | 1
  EXPECT_EQ(c.completed[1].total() + c.completed[0].total(), 3);  // open runs at task ends are not completed
  EXPECT_EQ(c.continued[0].at(1), 1);
  EXPECT_EQ(c.continued[0].at(2), 1);
  EXPECT_EQ(c.kinds.at("cut"), 5);
}

TEST(FitLikelihood, MatchesTheProductOverEachSequence) {
  const std::vector<Seq> tasks = {{1, 1, 0}, {0, 1}, {0, 0, 0, 1}, {1}};
  const ChainCounts c = count(tasks);
  // By hand at p = 0.4, q = 0.6 (p0 = 4/15): .4*.6*.4 * .6*(4/15) * .6*(11/15)^2*(4/15) * .4
  const double by_hand = std::log(0.4 * 0.6 * 0.4 * 0.6 * (4.0 / 15) * 0.6 * (11.0 / 15) * (11.0 / 15) * (4.0 / 15) * 0.4);
  EXPECT_NEAR(log_likelihood(c, 0.4, 0.6), by_hand, 1e-12);
  for (double p : {0.1, 0.3, 0.6})
    for (double q : {0.3, 0.7, 0.95})
      if (q >= (2 * p - 1) / p) { EXPECT_NEAR(log_likelihood(c, p, q), sequence_log_likelihood(tasks, p, q), 1e-10); }
  EXPECT_EQ(log_likelihood(c, 0.7, 0.5), -INFINITY);  // q below (2p-1)/p
}

TEST(FitEstimate, IndependentCaseIsTheBadFraction) {
  // Every empirical transition frequency is 1/4, so the free MLE is q = p =
  // 1/4 (the bad fraction), and the LR statistic for q = p is 0.
  ChainCounts c;
  c.first[1] = 25, c.first[0] = 75;
  c.transitions[1][1] = 100, c.transitions[1][0] = 300, c.transitions[0][1] = 300, c.transitions[0][0] = 900;
  c.records = 100 + 1600;
  c.tasks = 100;
  const ChainFit f = estimate(c);
  EXPECT_NEAR(f.p, 0.25, 1e-7);
  EXPECT_NEAR(f.q, 0.25, 1e-6);
  EXPECT_NEAR(f.independence.statistic, 0.0, 1e-6);
  // Under q = p the likelihood is binomial: maximal at the bad fraction, with that value.
  const double pbar = double(c.bad()) / double(c.records);
  EXPECT_NEAR(log_likelihood(c, pbar, pbar), double(c.bad()) * std::log(pbar) + double(c.good()) * std::log(1 - pbar),
              1e-9);
}

TEST(FitEstimate, ProfileIntervalsAgreeWithABruteForceGrid) {
  const std::vector<Seq> tasks = sample(0.3, 0.8, 150, 10, 11);
  const ChainCounts c = count(tasks);
  const ChainFit f = estimate(c);
  // Brute force: the likelihood on a fine grid, profiled by taking maxima.
  constexpr int kN = 300;
  const double p_lo = 0.1, p_hi = 0.55, q_lo = 0.55, q_hi = 0.95;
  std::vector<double> prof_p(kN + 1, -INFINITY), prof_q(kN + 1, -INFINITY);
  double l_max = -INFINITY;
  for (int i = 0; i <= kN; ++i)
    for (int j = 0; j <= kN; ++j) {
      const double p = p_lo + (p_hi - p_lo) * i / kN, q = q_lo + (q_hi - q_lo) * j / kN;
      const double l = sequence_log_likelihood(tasks, p, q);
      prof_p[i] = std::max(prof_p[i], l), prof_q[j] = std::max(prof_q[j], l), l_max = std::max(l_max, l);
    }
  const auto ends = [&](const std::vector<double>& prof, double lo, double hi) {
    double a = INFINITY, b = -INFINITY;
    for (int i = 0; i <= kN; ++i)
      if (2 * (l_max - prof[i]) <= 3.841458820694124) a = std::min(a, lo + (hi - lo) * i / kN), b = lo + (hi - lo) * i / kN;
    return std::pair{a, b};
  };
  const auto [pa, pb] = ends(prof_p, p_lo, p_hi);
  const auto [qa, qb] = ends(prof_q, q_lo, q_hi);
  EXPECT_NEAR(l_max, f.mle.log_likelihood, 0.01);
  const double step_p = (p_hi - p_lo) / kN * 2, step_q = (q_hi - q_lo) / kN * 2;
  EXPECT_NEAR(f.p_ci.low, pa, step_p);
  EXPECT_NEAR(f.p_ci.high, pb, step_p);
  EXPECT_NEAR(f.q_ci.low, qa, step_q);
  EXPECT_NEAR(f.q_ci.high, qb, step_q);
  EXPECT_GT(pa, p_lo);  // the grid's box holds the whole interval
  EXPECT_LT(qb, q_hi);
}

struct FitPoint {
  double p, q;
};

TEST(FitEstimate, IntervalsCoverTheTruthOnSimulatedLogs) {
  for (const FitPoint truth : {FitPoint{0.3, 0.3}, FitPoint{0.3, 0.8}, FitPoint{0.02, 0.9}}) {
    constexpr int kReplicates = 200;
    int cover_p = 0, cover_q = 0, alarms = 0;
    for (int rep = 0; rep < kReplicates; ++rep) {
      const ChainFit f = estimate(count(sample(truth.p, truth.q, 1000, 12, 1000 * std::uint64_t(rep) + 17)));
      cover_p += f.p_ci.low <= truth.p && truth.p <= f.p_ci.high;
      cover_q += f.q_ci.low <= truth.q && truth.q <= f.q_ci.high;
      alarms += f.independence.p_value < 0.05;
    }
    const double cp = double(cover_p) / kReplicates, cq = double(cover_q) / kReplicates;
    SCOPED_TRACE(::testing::Message() << "p = " << truth.p << ", q = " << truth.q << ": coverage p " << cp << ", q "
                                      << cq << ", LR rejections " << alarms);
    std::cout << "p = " << truth.p << ", q = " << truth.q << ": coverage p " << cp << ", q " << cq
              << ", LR rejections " << alarms << " of " << kReplicates << "\n";
    EXPECT_GE(cp, 0.90);
    EXPECT_LE(cp, 0.99);
    EXPECT_GE(cq, 0.90);
    EXPECT_LE(cq, 0.99);
    if (truth.p == truth.q) {
      EXPECT_GE(alarms / double(kReplicates), 0.02);
      EXPECT_LE(alarms / double(kReplicates), 0.09);
    } else {
      EXPECT_EQ(alarms, kReplicates);  // bursts this strong never pass for independent faults
    }
  }
}

TEST(FitEstimate, NoFaultsGivesAnUpperBoundAndNoQ) {
  const ChainFit f = estimate(count(std::vector<Seq>(200, Seq{0, 0, 0})));
  EXPECT_EQ(f.p, 0.0);
  EXPECT_FALSE(f.q_identified);
  EXPECT_TRUE(std::isnan(f.q));
  EXPECT_TRUE(std::isnan(f.q_ci.low));
  EXPECT_NEAR(f.p_ci.high, 1.0 - std::pow(0.05, 1.0 / 200), 1e-15);  // (1 - u)^200 = 0.05
  const ChainFit all = estimate(count(std::vector<Seq>(100, Seq{1, 1})));
  EXPECT_EQ(all.p, 1.0);
  EXPECT_NEAR(all.p_ci.low, std::pow(0.05, 1.0 / 100), 1e-15);
}

TEST(FitEstimate, Order2AndRunsTestsAcceptTheChainAndOrder2RejectsAnOrder2Process) {
  const ChainFit f = estimate(count(sample(0.3, 0.8, 3000, 12, 5)));
  EXPECT_GT(f.order2.p_value, 0.001);
  EXPECT_GT(f.runs.p_value, 0.001);
  EXPECT_GT(f.runs.df, 4.0);
  // Order 2: bad after two bads with probability 0.95, after good-bad 0.3.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Seq> tasks(2000);
  for (Seq& s : tasks) {
    s = {u(rng) < 0.3 ? 1 : 0, u(rng) < 0.3 ? 1 : 0};
    for (int i = 2; i < 12; ++i) {
      const double bad = s[i - 1] == 0 ? 0.1 : (s[i - 2] == 1 ? 0.95 : 0.3);
      s.push_back(u(rng) < bad ? 1 : 0);
    }
  }
  EXPECT_LT(estimate(count(tasks)).order2.p_value, 1e-6);
}

TEST(FitCounts, TimestampsOutOfOrderAreRefused) {
  ChainCounter counter;
  counter.add({"a", 5, false, ""});
  counter.add({"b", 1, false, ""});
  EXPECT_THROW(counter.add({"a", 4, true, "cut"}, "log.csv"), InputError);
}

TEST(FitKinds, KindsStringHoldsRelsimKindsOnly) {
  ChainCounts c;
  c.kinds = {{"stall", 3}, {"cut", 1}, {"http_502", 2}, {"APITimeoutError", 2}};
  const KindMix k = kind_mix(c);
  EXPECT_EQ(k.kinds_option, "cut=1,stall=3");
  EXPECT_EQ(k.other, (std::vector<std::string>{"APITimeoutError", "http_502"}));
  EXPECT_DOUBLE_EQ(k.shares.at("stall"), 3.0 / 8.0);
}

TEST(FitPredict, SpecIsParsedStrictly) {
  const PredictSpec s = parse_predict("policy=layered,s=2,r=3,n=10");
  EXPECT_EQ(s.policy.kind, PolicyKind::layered);
  EXPECT_EQ(s.policy.r, 3);
  EXPECT_EQ(s.policy.n, 10);
  EXPECT_EQ(parse_predict("policy=budgeted,r=3,n=10,B=4").policy.B, 4);
  for (const char* bad : {"policy=layered,r=3", "policy=layered,r=3,n=10,x=1", "policy=layered,r=3,n=1.5",
                          "policy=layered,r=3,r=3,n=2", "policy=odd,r=1,n=1", "policy=layered,r=3,n=10,",
                          "policy=layered,r=3,n=10,B=4", "policy=simple,s=1,r=1,n=1", ""})
    EXPECT_THROW(parse_predict(bad), InputError) << bad;
}

TEST(FitPredict, TheBandHoldsThePointAndTheSimpleClosedForm) {
  const ChainCounts c = count(sample(0.3, 0.8, 500, 12, 9));
  const ChainFit f = estimate(c);
  const Prediction pr = predict(c, f, parse_predict("policy=simple,r=2,n=3"));
  // docs/model.md, closed form: (1 - p q^r)(1 - p0 q^r)^(n-1).
  const double p0 = f.p * (1 - f.q) / (1 - f.p);
  EXPECT_NEAR(pr.success, (1 - f.p * f.q * f.q) * std::pow(1 - p0 * f.q * f.q, 2), 1e-12);
  EXPECT_LE(pr.success_band.low, pr.success);
  EXPECT_GE(pr.success_band.high, pr.success);
  EXPECT_LT(pr.success_band.low, pr.success);
  EXPECT_GT(pr.region_points, 100);
  EXPECT_NE(pr.netem_command.find("netem loss gemodel"), std::string::npos);
}

}  // namespace
}  // namespace relsim::fit
