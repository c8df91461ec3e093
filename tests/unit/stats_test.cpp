// Binomial intervals against reference values computed here, independently
// of sim/stats.cpp: Wilson from its closed form with a hard-coded z,
// Clopper-Pearson from its closed forms at the ends and its defining tail
// property in the middle, Jeffreys from bisection on the beta cdf.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/special_functions/beta.hpp>

#include "relsim/core/error.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim {
namespace {

constexpr double kZ95 = 1.959963984540054;  // Phi^-1(0.975)

Interval wilson_closed_form(double k, double n, double z) {
  const double center = (k + z * z / 2.0) / (n + z * z);
  const double half = z / (n + z * z) * std::sqrt(k * (n - k) / n + z * z / 4.0);
  return {center - half, center + half};
}

// The x in (0, 1) where the regularized incomplete beta I_x(a, b) equals target.
double beta_quantile_by_bisection(double a, double b, double target) {
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (boost::math::ibeta(a, b, mid) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

TEST(Wilson, MatchesReferenceAt386Of400) {
  const Interval ci = binomial_interval(IntervalKind::wilson, 386, 400, 0.95);
  EXPECT_NEAR(ci.low, 0.9421, 5e-5);
  EXPECT_NEAR(ci.high, 0.9790, 5e-5);
}

TEST(Wilson, MatchesReferenceAt310Of400) {
  const Interval ci = binomial_interval(IntervalKind::wilson, 310, 400, 0.95);
  EXPECT_NEAR(ci.low, 0.7316, 5e-5);
  EXPECT_NEAR(ci.high, 0.8132, 5e-5);
}

TEST(Wilson, MatchesClosedFormAtZeroMiddleAndAll) {
  const double n = 50;
  for (const std::int64_t k : {0, 17, 50}) {
    const Interval want = wilson_closed_form(static_cast<double>(k), n, kZ95);
    const Interval got = binomial_interval(IntervalKind::wilson, k, 50, 0.95);
    EXPECT_NEAR(got.low, std::max(0.0, want.low), 1e-12) << "k = " << k;
    EXPECT_NEAR(got.high, std::min(1.0, want.high), 1e-12) << "k = " << k;
  }
  // At k = 0 the closed form's upper end is z^2 / (n + z^2).
  EXPECT_NEAR(binomial_interval(IntervalKind::wilson, 0, 50, 0.95).high, kZ95 * kZ95 / (n + kZ95 * kZ95), 1e-12);
  EXPECT_EQ(binomial_interval(IntervalKind::wilson, 0, 50, 0.95).low, 0.0);
  EXPECT_EQ(binomial_interval(IntervalKind::wilson, 50, 50, 0.95).high, 1.0);
}

TEST(ClopperPearson, EndsMatchClosedForms) {
  const double alpha = 0.05, n = 50;
  const Interval zero = binomial_interval(IntervalKind::clopper_pearson, 0, 50, 0.95);
  EXPECT_EQ(zero.low, 0.0);
  EXPECT_NEAR(zero.high, 1.0 - std::pow(alpha / 2.0, 1.0 / n), 1e-12);
  const Interval all = binomial_interval(IntervalKind::clopper_pearson, 50, 50, 0.95);
  EXPECT_NEAR(all.low, std::pow(alpha / 2.0, 1.0 / n), 1e-12);
  EXPECT_EQ(all.high, 1.0);
}

TEST(ClopperPearson, MiddleBoundsHaveTailProbabilityHalfAlpha) {
  const double alpha = 0.05;
  const std::int64_t k = 17, n = 50;
  const Interval ci = binomial_interval(IntervalKind::clopper_pearson, k, n, 1.0 - alpha);
  using boost::math::binomial_distribution;
  // P(X >= k | low) = alpha / 2 and P(X <= k | high) = alpha / 2.
  EXPECT_NEAR(1.0 - boost::math::cdf(binomial_distribution<double>(n, ci.low), static_cast<double>(k - 1)),
              alpha / 2.0, 1e-10);
  EXPECT_NEAR(boost::math::cdf(binomial_distribution<double>(n, ci.high), static_cast<double>(k)), alpha / 2.0,
              1e-10);
}

TEST(Jeffreys, EndsFollowBrownCaiDasGupta) {
  const double alpha = 0.05, n = 50;
  const Interval zero = binomial_interval(IntervalKind::jeffreys, 0, 50, 0.95);
  EXPECT_EQ(zero.low, 0.0);
  EXPECT_NEAR(zero.high, beta_quantile_by_bisection(0.5, n + 0.5, 1.0 - alpha / 2.0), 1e-10);
  const Interval all = binomial_interval(IntervalKind::jeffreys, 50, 50, 0.95);
  EXPECT_NEAR(all.low, beta_quantile_by_bisection(n + 0.5, 0.5, alpha / 2.0), 1e-10);
  EXPECT_EQ(all.high, 1.0);
}

TEST(Jeffreys, MiddleBoundsAreBetaQuantiles) {
  const double alpha = 0.05;
  const Interval ci = binomial_interval(IntervalKind::jeffreys, 17, 50, 0.95);
  EXPECT_NEAR(ci.low, beta_quantile_by_bisection(17.5, 33.5, alpha / 2.0), 1e-10);
  EXPECT_NEAR(ci.high, beta_quantile_by_bisection(17.5, 33.5, 1.0 - alpha / 2.0), 1e-10);
}

TEST(Intervals, AllKindsNestTheEstimateAndStayInUnitRange) {
  for (const auto kind : {IntervalKind::wilson, IntervalKind::clopper_pearson, IntervalKind::jeffreys})
    for (const std::int64_t k : {0, 1, 7, 199, 200}) {
      const Interval ci = binomial_interval(kind, k, 200, 0.99);
      EXPECT_LE(0.0, ci.low);
      EXPECT_LE(ci.high, 1.0);
      EXPECT_TRUE(ci.covers(static_cast<double>(k) / 200.0)) << to_string(kind) << " k = " << k;
    }
}

TEST(Intervals, ClopperPearsonIsWiderThanWilsonInTheMiddle) {
  const Interval w = binomial_interval(IntervalKind::wilson, 310, 400, 0.95);
  const Interval cp = binomial_interval(IntervalKind::clopper_pearson, 310, 400, 0.95);
  EXPECT_LT(cp.low, w.low);
  EXPECT_GT(cp.high, w.high);
}

TEST(Intervals, RejectInputsOutsideTheirRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(binomial_interval(IntervalKind::wilson, 0, 0, 0.95), InputError);
  EXPECT_THROW(binomial_interval(IntervalKind::wilson, -1, 10, 0.95), InputError);
  EXPECT_THROW(binomial_interval(IntervalKind::wilson, 11, 10, 0.95), InputError);
  for (const double c : {0.0, 1.0, 1.5, -0.2, nan})
    EXPECT_THROW(binomial_interval(IntervalKind::jeffreys, 3, 10, c), InputError) << c;
}

TEST(Intervals, ParseKnowsTheThreeNamesOnly) {
  EXPECT_EQ(parse_interval_kind("wilson"), IntervalKind::wilson);
  EXPECT_EQ(parse_interval_kind("clopper-pearson"), IntervalKind::clopper_pearson);
  EXPECT_EQ(parse_interval_kind("jeffreys"), IntervalKind::jeffreys);
  EXPECT_THROW(parse_interval_kind("foo"), InputError);
  EXPECT_THROW(parse_interval_kind(""), InputError);
  for (const auto kind : {IntervalKind::wilson, IntervalKind::clopper_pearson, IntervalKind::jeffreys})
    EXPECT_EQ(parse_interval_kind(to_string(kind)), kind);
}

TEST(EffectiveInterval, IsTheBinomialIntervalOfTheEffectiveSample) {
  const Interval plain = binomial_interval(IntervalKind::wilson, 400, 1000, 0.95);
  const Interval one = effective_interval(IntervalKind::wilson, 400, 1000, 0.95, 1.0);
  EXPECT_EQ(one.low, plain.low);
  EXPECT_EQ(one.high, plain.high);
  const Interval below_one = effective_interval(IntervalKind::wilson, 400, 1000, 0.95, 0.5);
  EXPECT_EQ(below_one.low, plain.low);
  const Interval four = effective_interval(IntervalKind::wilson, 400, 1000, 0.95, 4.0);
  const Interval quarter = binomial_interval(IntervalKind::wilson, 100, 250, 0.95);
  EXPECT_EQ(four.low, quarter.low);
  EXPECT_EQ(four.high, quarter.high);
  EXPECT_THROW(effective_interval(IntervalKind::wilson, 4, 10, 0.95, -1.0), InputError);
}

}  // namespace
}  // namespace relsim
