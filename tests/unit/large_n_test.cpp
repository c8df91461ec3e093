// Long tasks (docs/model.md, Exact answers: any n, 10^6 calls well under a second): log10 of a
// success probability far below the smallest double, and the requests
// distribution's bookkeeping.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "relsim/exact/exact.hpp"
#include "support/closed_form.hpp"

namespace relsim {
namespace {

using relsim_test::Case;

double distribution_sum(const ExactResult& r) {
  double s = 0.0;
  for (const auto& bin : r.requests) s += bin.probability;
  return s;
}

TEST(LargeN, Log10SuccessAtN100000MatchesClosedFormAndSuccessIsZero) {
  const double p = 0.3, q = 0.8, p0 = p * (1 - q) / (1 - p);
  const std::int64_t n = 100000;
  // log10[(1 - p q^r)(1 - p0 q^r)^(n-1)], each factor through log1p.
  const double expected = (std::log1p(-p * q * q) + double(n - 1) * std::log1p(-p0 * q * q)) / std::log(10.0);
  EXPECT_NEAR(expected, -2450.32, 0.01);
  Model m;
  m.p = p;
  m.q = q;
  ExactOptions opt;
  opt.distribution = false;
  const ExactResult r = exact_matrix(m, Policy{n, 2}, opt);
  EXPECT_NEAR(r.log10_success, expected, 1e-9 * std::abs(expected));
  EXPECT_EQ(r.success, 0.0);  // 10^-2450 is 0 in a double, not a denormal
  EXPECT_EQ(std::fpclassify(r.success), FP_ZERO);
  EXPECT_NEAR(r.env_error, 1.0, 1e-12);
  EXPECT_NEAR(r.mean_requests, relsim_test::closed_mean({p, q, 2, n, 0, 0, false}), 1e-9);
}

TEST(LargeN, SuccessNearTheBottomOfTheDoubleRangeIsConsistentWithLog10) {
  // log10 from -294 to -319: normal, then subnormal doubles. The success
  // must be the double nearest 10^log10 (to the precision left there).
  Model m;
  m.p = 0.3;
  m.q = 0.8;
  for (std::int64_t n : {12000, 12250, 12500, 12700, 12900, 13000}) {
    ExactOptions opt;
    opt.distribution = false;
    const ExactResult r = exact_matrix(m, Policy{n, 2}, opt);
    const double closed = std::log10(1 - 0.3 * 0.64) + double(n - 1) * std::log10(1 - 0.64 * 3.0 / 35.0);
    EXPECT_NEAR(r.log10_success, closed, 1e-9 * std::abs(closed)) << n;
    const double value = std::pow(10.0, closed);
    EXPECT_NEAR(r.success, value, 1e-8 * value + 1e-322) << n;
  }
}

TEST(LargeN, MillionCallsWithTenRetriesGivesFiniteExactTotals) {
  const Case c{0.3, 0.8, 10, 1'000'000, 0, 0, false};
  const ExactResult r = exact_matrix(c.model(), c.policy());
  ASSERT_TRUE(std::isfinite(r.log10_success));
  ASSERT_TRUE(std::isfinite(r.mean_requests));
  const double k = 0.3 * std::pow(0.8, 10), k0 = (3.0 / 35.0) * std::pow(0.8, 10);
  const double closed = (std::log1p(-k) + double(c.n - 1) * std::log1p(-k0)) / std::log(10.0);
  EXPECT_NEAR(r.log10_success, closed, 1e-9 * std::abs(closed));
  EXPECT_NEAR(r.mean_requests, relsim_test::closed_mean(c), 1e-9 * relsim_test::closed_mean(c));
  EXPECT_NEAR(r.success + r.env_error, 1.0, 1e-12);
  EXPECT_EQ(r.max_requests, c.length());
  if (r.distribution_complete) {
    EXPECT_NEAR(distribution_sum(r) + r.pruned_mass, 1.0, 1e-12);
  } else {
    EXPECT_TRUE(r.requests.empty());
  }
}

TEST(LargeN, ContinuousMillionCallsWithSilentStepsMatchesClosedForm) {
  const Case c{0.05, 0.9, 10, 1'000'000, 2, 3, true};
  ExactOptions opt;
  opt.distribution = false;
  const ExactResult r = exact_matrix(c.model(), c.policy(), opt);
  const double expected = relsim_test::closed_log10_success(c);
  EXPECT_LT(expected, -300.0);
  EXPECT_NEAR(r.log10_success, expected, 1e-9 * std::abs(expected));
  EXPECT_NEAR(r.mean_requests, relsim_test::closed_mean(c), 1e-9 * relsim_test::closed_mean(c));
}

TEST(LargeN, FiftyAndAThousandRetriesAreAccepted) {
  for (const Case& c : {Case{0.3, 0.8, 50, 1'000'000, 0, 0, false}, Case{0.3, 0.8, 50, 1000, 1, 1, true},
                        Case{0.5, 0.99, 1000, 100, 0, 0, false}}) {
    const ExactResult r = exact_matrix(c.model(), c.policy());
    EXPECT_TRUE(std::isfinite(r.log10_success)) << c.str();
    EXPECT_NEAR(r.success, relsim_test::closed_success(c), 1e-12) << c.str();
    EXPECT_NEAR(r.mean_requests, relsim_test::closed_mean(c), 1e-9 * relsim_test::closed_mean(c)) << c.str();
    if (r.distribution_complete) {
      EXPECT_NEAR(distribution_sum(r) + r.pruned_mass, 1.0, 1e-12) << c.str();
    }
  }
}

TEST(Distribution, SumsToOneMinusPrunedMassWhereComplete) {
  int complete = 0, pruned = 0;
  for (const Case& c : {Case{0.3, 0.8, 2, 2, 0, 0, false}, Case{0.3, 0.8, 3, 1000, 0, 0, false},
                        Case{0.3, 0.8, 2, 20000, 1, 2, true}, Case{0.01, 0.5, 5, 5000, 0, 0, false},
                        Case{0.6, 0.9, 4, 3000, 0, 0, true}, Case{0.3, 0.3, 1, 100000, 0, 0, false}}) {
    const ExactResult r = exact_matrix(c.model(), c.policy());
    if (!r.distribution_complete) {
      EXPECT_TRUE(r.requests.empty()) << c.str();
      continue;
    }
    ++complete;
    pruned += r.pruned_mass > 0.0;
    EXPECT_GE(r.pruned_mass, 0.0) << c.str();
    EXPECT_LT(r.pruned_mass, 1e-290) << c.str();
    EXPECT_NEAR(distribution_sum(r), 1.0 - r.pruned_mass, 1e-12) << c.str();
    double done = 0.0, env = 0.0, mean = 0.0;
    for (const auto& bin : r.requests) {
      (bin.outcome == Outcome::done ? done : env) += bin.probability;
      mean += bin.probability * double(bin.requests);
      EXPECT_GT(bin.probability, 0.0);
      EXPECT_GE(bin.requests, bin.outcome == Outcome::done ? c.n : c.r + 1);
      EXPECT_LE(bin.requests, c.length());
    }
    EXPECT_NEAR(done, r.success, 1e-12) << c.str();
    EXPECT_NEAR(env, r.env_error, 1e-12) << c.str();
    EXPECT_NEAR(mean, r.mean_requests, 1e-12 * r.mean_requests) << c.str();
  }
  EXPECT_GE(complete, 4);
  EXPECT_GE(pruned, 1);
}

TEST(Distribution, WorkCapLeavesTheDistributionOutButKeepsTheTotals) {
  const Case c{0.3, 0.8, 3, 1000, 0, 0, false};
  ExactOptions capped;
  capped.max_distribution_work = 1000;
  const ExactResult r = exact_matrix(c.model(), c.policy(), capped);
  const ExactResult full = exact_matrix(c.model(), c.policy());
  EXPECT_FALSE(r.distribution_complete);
  EXPECT_TRUE(r.requests.empty());
  EXPECT_TRUE(full.distribution_complete);
  EXPECT_EQ(r.success, full.success);
  EXPECT_EQ(r.log10_success, full.log10_success);
  EXPECT_EQ(r.mean_requests, full.mean_requests);
  EXPECT_EQ(r.max_requests, full.max_requests);
}

}  // namespace
}  // namespace relsim
