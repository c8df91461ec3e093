// The two headline numbers of SPEC section 3, from outside the code: the
// closed form (1 - p q^r)(1 - p0 q^r)^(n-1) evaluated here by hand.
#include <gtest/gtest.h>

#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"

namespace relsim {
namespace {

Model bursty(double p, double q) {
  Model m;
  m.p = p;
  m.q = q;
  return m;
}

TEST(Reference, IndependentIs0946729ByBothMethods) {
  const Policy pol{2, 2};
  EXPECT_NEAR(exact_matrix(bursty(0.3, 0.3), pol).success, 0.946729, 1e-12);
  EXPECT_NEAR(exact_enumerate(bursty(0.3, 0.3), pol).success, 0.946729, 1e-12);
}

TEST(Reference, BurstyIs0763675428571ByBothMethods) {
  // p0 = 0.3 * 0.2 / 0.7 = 3/35; (1 - 0.3*0.64)(1 - (3/35)*0.64) = 0.808 * (1 - 1.92/35)
  const double expected = 0.808 * (1.0 - 1.92 / 35.0);
  EXPECT_NEAR(expected, 0.763675428571428, 1e-12);
  const Policy pol{2, 2};
  EXPECT_NEAR(exact_matrix(bursty(0.3, 0.8), pol).success, expected, 1e-12);
  EXPECT_NEAR(exact_enumerate(bursty(0.3, 0.8), pol).success, expected, 1e-12);
}

}  // namespace
}  // namespace relsim
