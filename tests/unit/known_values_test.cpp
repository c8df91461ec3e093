// data/known_values.csv (made by scripts/known_values.py in exact rational
// arithmetic) read through the library's reader and held against three
// things: the double closed form of this suite, the transfer matrix and,
// where short enough, enumeration.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/sweep/known_values.hpp"
#include "support/closed_form.hpp"

namespace relsim {
namespace {

const std::string kFile = std::string(RELSIM_SOURCE_DIR) + "/data/known_values.csv";

relsim_test::Case to_case(const KnownValue& kv) {
  return {kv.model.p, kv.model.q, kv.policy.r, kv.policy.n, kv.model.b, kv.model.g,
          kv.model.chain == ChainScope::continuous};
}

TEST(KnownValues, FileCoversTheCasesItPromises) {
  const auto rows = read_known_values(kFile);
  EXPECT_GE(rows.size(), 30u);
  std::set<std::string> kinds;
  for (const auto& kv : rows) {
    const auto c = to_case(kv);
    if (kv.source == "reference experiment (docs/model.md)") kinds.insert("reference");
    if (c.q == c.p) kinds.insert("independent");
    if (c.b > 0 || c.g > 0) kinds.insert("silent");
    if (c.continuous) kinds.insert("continuous");
    if (c.p == 0.0) kinds.insert("p=0");
    if (c.p == 1.0 && c.q == 1.0) kinds.insert("p=1");
    if (c.p > 0.5 && c.p < 1.0 && std::abs(c.q - relsim_test::min_q_for(c.p)) < 1e-12) kinds.insert("q at bound");
    if (c.n >= 1000) kinds.insert("large n");
    if (c.r == 0) kinds.insert("r=0");
    EXPECT_TRUE(kv.source == "reference experiment (docs/model.md)" || kv.source == "closed form (scripts/known_values.py)") << kv.line;
    EXPECT_GT(kv.tolerance, 0.0);
    EXPECT_LE(kv.tolerance, 1e-10) << kv.line;
  }
  EXPECT_EQ(kinds.size(), 9u);
}

TEST(KnownValues, EveryRowMatchesTheDoubleClosedFormAndTheMatrix) {
  ExactOptions opt;
  opt.distribution = false;
  for (const auto& kv : read_known_values(kFile)) {
    const auto c = to_case(kv);
    EXPECT_NEAR(relsim_test::closed_success(c), kv.expected, std::max(kv.tolerance, 1e-12)) << kFile << ":" << kv.line;
    EXPECT_NEAR(exact_matrix(kv.model, kv.policy, opt).success, kv.expected, kv.tolerance) << kFile << ":" << kv.line;
  }
}

TEST(KnownValues, RowsShortEnoughMatchEnumeration) {
  int enumerated = 0;
  for (const auto& kv : read_known_values(kFile)) {
    if (kv.policy.max_requests() > 20) continue;
    ++enumerated;
    EXPECT_NEAR(exact_enumerate(kv.model, kv.policy).success, kv.expected, kv.tolerance) << kFile << ":" << kv.line;
  }
  EXPECT_GE(enumerated, 20);
}

TEST(KnownValues, SpecReferenceRowsHoldTheSpecNumbers) {
  int seen = 0;
  for (const auto& kv : read_known_values(kFile)) {
    if (kv.source != "reference experiment (docs/model.md)") continue;
    ++seen;
    EXPECT_EQ(kv.policy.n, 2);
    EXPECT_EQ(kv.policy.r, 2);
    EXPECT_EQ(kv.model.p, 0.3);
    if (kv.model.q == 0.3) EXPECT_NEAR(kv.expected, 0.946729, 1e-15);
    else EXPECT_NEAR(kv.expected, 0.763675428571428, 1e-15);
  }
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace relsim
