// The fault chain (docs/model.md, Fault chain) as the engines see it (model.hpp): the
// silent-step matrices P^(1+b), P^(1+g) and the long-run (Cesaro)
// distribution used for the continuous scope, against the Gilbert chain's
// eigen-decomposition worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "relsim/core/model.hpp"

namespace relsim {
namespace {

TEST(Chain, SilentStepMatricesStayStochasticUpToABillionSteps) {
  // P^(1+b) and P^(1+g) must keep rows that sum to 1 and equal the
  // eigen-decomposition P^m[bad->bad] = p + (1-p) lam^m, P^m[good->bad] = p - p lam^m.
  for (std::int64_t steps : {0, 1, 7, 1'000, 1'000'000, 1'000'000'000}) {
    Model m;
    m.p = 0.3;
    m.q = 0.8;
    m.b = steps;
    m.g = steps;
    const Chain chain = gilbert_chain(m);
    const double lam = 0.8 - 3.0 / 35.0;
    const double lam_m = std::pow(lam, double(steps + 1));
    for (const Eigen::MatrixXd* t : {&chain.retry, &chain.gap}) {
      EXPECT_NEAR((*t)(0, 0) + (*t)(0, 1), 1.0, 1e-13) << "steps " << steps;
      EXPECT_NEAR((*t)(1, 0) + (*t)(1, 1), 1.0, 1e-13) << "steps " << steps;
      EXPECT_NEAR((*t)(1, 1), 0.3 + 0.7 * lam_m, 1e-13) << "steps " << steps;
      EXPECT_NEAR((*t)(0, 1), 0.3 - 0.3 * lam_m, 1e-13) << "steps " << steps;
    }
  }
}

TEST(Chain, LongRunDistributionIsFiniteWhenRowsSumAFewUlpsAboveOne) {
  // The continuous scope's task-to-task matrix K is built from computed
  // matrix powers, so its rows may sum to 1 + a few ulps. Its long-run
  // distribution must still be the stationary one, not NaN. Here K = P^6,
  // the gap matrix of p = 0.48764660441721203, q = 0.52312126894344324,
  // g = 5 (with r = 0, n = 1 a task is one request and K is exactly that).
  Model m;
  m.p = 0.48764660441721203;
  m.q = 0.52312126894344324;
  m.g = 5;
  const Chain chain = gilbert_chain(m);
  Eigen::MatrixXd K = chain.gap;
  const Eigen::RowVectorXd mu = long_run_distribution(K, chain.initial);
  ASSERT_TRUE(std::isfinite(mu(0)) && std::isfinite(mu(1))) << mu;
  EXPECT_NEAR(mu(1), m.p, 1e-12);  // P^6 has the chain's stationary distribution
  // The same with a hand-made matrix whose rows sum to 1 + 4.4e-16.
  Eigen::MatrixXd H(2, 2);
  H << 0.75, 0.25 + 4.4e-16, 0.5, 0.5 + 4.4e-16;
  const Eigen::RowVectorXd nu = long_run_distribution(H, Eigen::RowVectorXd::Unit(2, 0));
  ASSERT_TRUE(std::isfinite(nu(0)) && std::isfinite(nu(1))) << nu;
  EXPECT_NEAR(nu(0), 2.0 / 3.0, 1e-12);
}

TEST(Chain, LongRunDistributionIsTheCesaroLimitForReducibleAndPeriodicChains) {
  Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(2, 2);
  Eigen::RowVectorXd start(2);
  start << 0.7, 0.3;
  const Eigen::RowVectorXd a = long_run_distribution(identity, start);
  EXPECT_NEAR(a(0), 0.7, 1e-15);
  EXPECT_NEAR(a(1), 0.3, 1e-15);
  Eigen::MatrixXd flip(2, 2);
  flip << 0.0, 1.0, 1.0, 0.0;
  const Eigen::RowVectorXd b = long_run_distribution(flip, Eigen::RowVectorXd::Unit(2, 0));
  EXPECT_NEAR(b(0), 0.5, 1e-15);
  EXPECT_NEAR(b(1), 0.5, 1e-15);
}

TEST(Chain, GilbertChainHasTheSpecStartAndStep) {
  Model m;
  m.p = 0.3;
  m.q = 0.8;
  const Chain c = gilbert_chain(m);
  EXPECT_NEAR(m.p0(), 3.0 / 35.0, 1e-16);
  EXPECT_NEAR(c.initial(1), 0.3, 1e-16);
  EXPECT_NEAR(c.step(0, 1), 3.0 / 35.0, 1e-16);
  EXPECT_NEAR(c.step(1, 1), 0.8, 1e-16);
  EXPECT_EQ(c.bad(0), 0.0);
  EXPECT_EQ(c.bad(1), 1.0);
  EXPECT_TRUE(c.deterministic_emissions());
  // The stationary distribution is preserved by one step: p stays the bad fraction.
  EXPECT_NEAR((c.initial * c.step)(1), 0.3, 1e-15);
  EXPECT_NEAR(min_q_for(0.8), 0.75, 1e-15);
  EXPECT_EQ(min_q_for(0.5), 0.0);
  EXPECT_EQ(min_q_for(0.2), 0.0);
}

}  // namespace
}  // namespace relsim
