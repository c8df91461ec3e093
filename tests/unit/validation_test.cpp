// Checks at the edges, assertions inside (docs/model.md, "Valid parameters"):
// every invalid Model or Policy is an InputError whose message names the
// bad value and the range it must lie in.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"
#include "support/input_error.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

using relsim::test::input_error;

using relsim::test::expect_mentions;

TEST(Validation, PAboveOneNamesTheValueAndRange) {
  expect_mentions(input_error([] { validate(Model{.p = 1.2, .q = 0.5}); }), {"p = 1.2", "[0, 1]"});
}

TEST(Validation, NegativePNamesTheValueAndRange) {
  expect_mentions(input_error([] { validate(Model{.p = -0.1, .q = 0.5}); }), {"p = -0.1", "[0, 1]"});
}

TEST(Validation, NaNPIsRejected) {
  expect_mentions(input_error([] { validate(Model{.p = std::nan(""), .q = 0.5}); }), {"p = nan", "[0, 1]"});
  expect_mentions(input_error([] { validate(Model{.p = 0.3, .q = std::nan("")}); }), {"q = nan", "[0, 1]"});
  expect_mentions(input_error([] { validate(Model{.p = std::numeric_limits<double>::infinity(), .q = 0.5}); }),
                  {"p = inf"});
}

TEST(Validation, QAboveOneNamesTheValueAndRange) {
  expect_mentions(input_error([] { validate(Model{.p = 0.3, .q = 1.5}); }), {"q = 1.5", "[0, 1]"});
  expect_mentions(input_error([] { validate(Model{.p = 0.3, .q = -0.2}); }), {"q = -0.2"});
}

TEST(Validation, QTooSmallForPNamesTheLowerBoundOfQ) {
  // p = 0.8: p0 = p(1-q)/(1-p) <= 1 needs q >= (2p-1)/p = 0.75.
  expect_mentions(input_error([] { validate(Model{.p = 0.8, .q = 0.1}); }), {"q = 0.1", "p = 0.8", "0.75", "1]"});
  // p = 0.9: q >= 0.888...
  expect_mentions(input_error([] { validate(Model{.p = 0.9, .q = 0.5}); }), {"q = 0.5", "0.888"});
}

TEST(Validation, QAtItsLowerBoundIsAccepted) {
  EXPECT_NO_THROW(validate(Model{.p = 0.8, .q = 0.75}));
  EXPECT_NO_THROW(validate(Model{.p = 0.9, .q = (2 * 0.9 - 1) / 0.9}));
  EXPECT_NO_THROW(validate(Model{.p = 0.9, .q = 0.88888888888888884}));  // printed with 17 digits
  EXPECT_NO_THROW(validate(Model{.p = 0.5, .q = 0.0}));
  EXPECT_NEAR((Model{.p = 0.8, .q = 0.75}.p0()), 1.0, 1e-12);
  EXPECT_LE((Model{.p = 0.9, .q = 0.88888888888888884}.p0()), 1.0);
}

TEST(Validation, POneNeedsQOne) {
  expect_mentions(input_error([] { validate(Model{.p = 1.0, .q = 0.5}); }), {"q = 0.5", "p = 1", "must be 1"});
  EXPECT_NO_THROW(validate(Model{.p = 1.0, .q = 1.0}));
}

TEST(Validation, NegativeSilentStepsNameTheValueAndRange) {
  expect_mentions(input_error([] { validate(Model{.p = 0.3, .q = 0.8, .b = -1}); }), {"b = -1", "[0, 1000000000]"});
  expect_mentions(input_error([] { validate(Model{.p = 0.3, .q = 0.8, .g = -3}); }), {"g = -3", "[0, 1000000000]"});
  expect_mentions(input_error([] { validate(Model{.p = 0.3, .q = 0.8, .b = kMaxSilentSteps + 1}); }),
                  {"b = 1000000001"});
}

TEST(Validation, NZeroNamesTheValueAndRange) {
  expect_mentions(input_error([] { validate(Policy{0, 2}); }), {"n = 0", "[1, 100000000]"});
  expect_mentions(input_error([] { validate(Policy{-5, 2}); }), {"n = -5"});
  expect_mentions(input_error([] { validate(Policy{kMaxCalls + 1, 2}); }), {"n = 100000001"});
}

TEST(Validation, RNegativeOrAbove1000NamesTheValueAndRange) {
  expect_mentions(input_error([] { validate(Policy{2, -1}); }), {"r = -1", "[0, 1000]"});
  expect_mentions(input_error([] { validate(Policy{2, 1001}); }), {"r = 1001", "[0, 1000]"});
  EXPECT_NO_THROW(validate(Policy{2, 1000}));
}

TEST(Validation, UnknownChainWordNamesTheWordAndTheChoices) {
  expect_mentions(input_error([] { parse_chain_scope("warm"); }), {"'warm'", "fresh", "continuous"});
  expect_mentions(input_error([] { parse_chain_scope("Fresh"); }), {"'Fresh'"});
  EXPECT_EQ(parse_chain_scope("fresh"), ChainScope::fresh);
  EXPECT_EQ(parse_chain_scope("continuous"), ChainScope::continuous);
}

TEST(Validation, EnginesRejectInvalidInputBeforeComputing) {
  const Policy ok{2, 2};
  for (const Model& bad : {Model{.p = 1.2, .q = 0.5}, Model{.p = 0.8, .q = 0.1}, Model{.p = 1.0, .q = 0.9},
                           Model{.p = 0.3, .q = 0.8, .b = -1}}) {
    EXPECT_THROW(exact_matrix(bad, ok), InputError);
    EXPECT_THROW(exact_enumerate(bad, ok), InputError);
    EXPECT_THROW(exact_enumerate_naive(bad, ok), InputError);
  }
  for (const Policy& bad : {Policy{0, 2}, Policy{2, -1}, Policy{2, 1001}}) {
    EXPECT_THROW(exact_matrix(Model{.p = 0.3, .q = 0.8}, bad), InputError);
    EXPECT_THROW(exact_enumerate(Model{.p = 0.3, .q = 0.8}, bad), InputError);
  }
}

}  // namespace
}  // namespace relsim
