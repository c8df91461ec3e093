// The headline numbers of docs/model.md, "Reference experiment" (r = 2, n = 2, fresh chain unless
// said), checked against literals worked out by hand below, never against
// arithmetic done in the test. scripts/known_values.py derives the same
// values with exact fractions (data/known_values.csv, rows p = 0.3).
#include <gtest/gtest.h>

#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

// Independent faults, p = q = 0.3: a call fails when its 3 requests are all
// bad, 0.3^3 = 0.027, so success = (1 - 0.027)^2 = 0.973^2 = 0.946729
// exactly (known_values.py: 946729/1000000).
TEST(Reference, IndependentIs0946729ByBothMethods) {
  const Policy pol{2, 2};
  EXPECT_NEAR(exact_matrix(Model{.p = 0.3, .q = 0.3}, pol).success, 0.946729, 1e-12);
  EXPECT_NEAR(exact_enumerate(Model{.p = 0.3, .q = 0.3}, pol).success, 0.946729, 1e-12);
}

// Bursty, p = 0.3, q = 0.8: p0 = p(1 - q)/(1 - p) = 0.06/0.7 = 3/35.
// Call 1 fails w.p. p q^2 = 0.3 * 0.64 = 0.192; call 2 starts after a good
// request and fails w.p. p0 q^2 = (3/35) * 0.64 = 1.92/35. Success =
// 0.808 * (35 - 1.92)/35 = 0.808 * 33.08/35 = 26.72864/35
// = 0.763675428571428571... (= 83527/109375, known_values.py).
TEST(Reference, BurstyIs0763675428571ByBothMethods) {
  const Policy pol{2, 2};
  EXPECT_NEAR(exact_matrix(Model{.p = 0.3, .q = 0.8}, pol).success, 0.76367542857142857, 1e-12);
  EXPECT_NEAR(exact_enumerate(Model{.p = 0.3, .q = 0.8}, pol).success, 0.76367542857142857, 1e-12);
}

// Continuous chain, p = 0.3, q = 0.8: a task after a done task starts after a
// good request, S_g = (1 - p0 q^2)^2 = (827/875)^2 = 683929/765625; after an
// env_error task it starts after a bad one, S_b = (1 - q^3)(1 - p0 q^2) =
// 0.488 * 827/875 = 50447/109375. Long run: S_b / (1 - S_g + S_b) =
// (50447/109375) / (17393/30625) = 353129/434825 = 0.812117518541942160...
// (data/known_values.csv: 0.81211751854194214).
TEST(Reference, BurstyContinuousIs0812117518542ByBothMethods) {
  const Policy pol{2, 2};
  const Model m{.p = 0.3, .q = 0.8, .chain = ChainScope::continuous};
  EXPECT_NEAR(exact_matrix(m, pol).success, 0.81211751854194216, 1e-12);
  EXPECT_NEAR(exact_enumerate(m, pol).success, 0.81211751854194216, 1e-12);
}

}  // namespace
}  // namespace relsim
