// BugHunt's fault plan (bughunt/bughunt_plan.hpp): seeded and repeatable; each
// run's loads as far as its tester reads them; and its rates, over the
// largest plan allowed, against closed forms worked out here for a fresh
// chain (a reload b + 1 steps after a failed load fails with
// p + (1 - p) lambda^(b+1), lambda = q - p0) and against the exact engine for
// a continuous one.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "relsim/exact/triage.hpp"
#include "relsim/bughunt/bughunt_plan.hpp"
#include "support/input_error.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

struct Tally {
  std::int64_t runs = 0, all_failed = 0, loads = 0, bad_loads = 0, slow = 0, http_503 = 0;
};

Tally tally(const std::vector<BughuntRun>& plan) {
  Tally t;
  for (const BughuntRun& r : plan) {
    ++t.runs;
    bool all = true;
    for (const PageLoad& l : r.loads) {
      ++t.loads;
      all = all && l.has_value();
      if (!l) continue;
      ++t.bad_loads;
      t.slow += *l == PageFault::slow;
      t.http_503 += *l == PageFault::http_503;
    }
    t.all_failed += all;
  }
  return t;
}

// |rate - expected| within 5 binomial standard errors.
void expect_rate(std::int64_t k, std::int64_t n, double expected, const std::string& what) {
  const double rate = static_cast<double>(k) / static_cast<double>(n);
  const double se = std::sqrt(expected * (1.0 - expected) / static_cast<double>(n));
  EXPECT_LE(std::abs(rate - expected), 5.0 * se + 1e-12) << what << ": " << k << "/" << n << " vs " << expected;
}

TEST(BughuntPlan, TheSameSeedGivesTheSamePlanAnotherSeedAnother) {
  const Model m{.p = 0.3, .q = 0.7, .b = 1};
  const PageFaultWeights w;
  const auto a = draw_bughunt_plan(m, Tester::careful, 2, AppVersion::healthy, w, 500, 11);
  const auto b = draw_bughunt_plan(m, Tester::careful, 2, AppVersion::healthy, w, 500, 11);
  const auto c = draw_bughunt_plan(m, Tester::careful, 2, AppVersion::healthy, w, 500, 12);
  auto same = [](const auto& x, const auto& y) {
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i].loads != y[i].loads) return false;
    return true;
  };
  EXPECT_TRUE(same(a, b));
  EXPECT_FALSE(same(a, c));
  // A longer plan begins with the shorter one (each run's draws are its own).
  const auto longer = draw_bughunt_plan(m, Tester::careful, 2, AppVersion::healthy, w, 800, 11);
  EXPECT_TRUE(same(a, std::vector<BughuntRun>(longer.begin(), longer.begin() + 500)));
}

TEST(BughuntPlan, EachRunListsTheLoadsItsTesterReadsAndTheOraclesVerdict) {
  const Model m{.p = 0.4, .q = 0.8};
  for (const Tester tester : {Tester::naive, Tester::careful}) {
    for (const AppVersion version : {AppVersion::healthy, AppVersion::buggy}) {
      const auto plan = draw_bughunt_plan(m, tester, 3, version, PageFaultWeights{}, 2000, 5);
      for (const BughuntRun& r : plan) {
        ASSERT_FALSE(r.loads.empty());
        ASSERT_LE(r.loads.size(), tester == Tester::naive ? 1u : 4u);
        // Every load but the last failed; the last works unless the tester gave up.
        for (std::size_t i = 0; i + 1 < r.loads.size(); ++i) EXPECT_TRUE(r.loads[i].has_value());
        EXPECT_EQ(r.oracle.loads, static_cast<int>(r.loads.size()));
        const bool last_failed = r.loads.back().has_value();
        if (tester == Tester::naive)
          EXPECT_EQ(r.oracle.verdict, last_failed || version == AppVersion::buggy ? Verdict::bug : Verdict::pass);
        else if (last_failed)
          EXPECT_EQ(r.oracle.verdict, Verdict::env_error);
        else
          EXPECT_EQ(r.oracle.verdict, version == AppVersion::buggy ? Verdict::bug : Verdict::pass);
      }
    }
  }
}

TEST(BughuntPlan, AFreshChainsRatesAreTheClosedForms) {
  const double p = 0.3, q = 0.8;
  const double lambda = q - p * (1.0 - q) / (1.0 - p);  // the chain's second eigenvalue
  for (const std::int64_t b : {0, 3}) {
    const double again = p + (1.0 - p) * std::pow(lambda, static_cast<double>(b + 1));  // P(a reload fails)
    const int k = 2;
    const auto plan = draw_bughunt_plan(Model{.p = p, .q = q, .b = b}, Tester::careful, k, AppVersion::healthy,
                                        PageFaultWeights{}, kMaxBughuntRuns, 20261202);
    const Tally t = tally(plan);
    expect_rate(t.all_failed, t.runs, p * std::pow(again, k), "ENV_ERROR, b = " + std::to_string(b));
    // The first load alone: bad with p.
    std::int64_t first_bad = 0;
    for (const BughuntRun& r : plan) first_bad += r.loads.front().has_value();
    expect_rate(first_bad, t.runs, p, "first load");
  }
}

TEST(BughuntPlan, AContinuousChainsRatesAreTheExactEngines) {
  for (const Tester tester : {Tester::naive, Tester::careful}) {
    const Model m{.p = 0.25, .q = 0.9, .b = 2, .g = 1, .chain = ChainScope::continuous};
    const TriageRates exact = triage_exact(m, tester, 1);
    const Tally t =
        tally(draw_bughunt_plan(m, tester, 1, AppVersion::healthy, PageFaultWeights{}, kMaxBughuntRuns, 77));
    const double fails = tester == Tester::naive ? exact.healthy.bug : exact.healthy.env_error;
    expect_rate(t.all_failed, t.runs, fails, std::string(to_string(tester)));
  }
}

TEST(BughuntPlan, FaultsArePickedByWeight) {
  const PageFaultWeights w = parse_page_fault_weights("reset=1,slow=3");
  const Tally t = tally(
      draw_bughunt_plan(Model{.p = 0.5, .q = 0.5}, Tester::careful, 3, AppVersion::healthy, w, kMaxBughuntRuns, 3));
  EXPECT_EQ(t.http_503, 0);
  expect_rate(t.slow, t.bad_loads, 0.75, "slow share");
  EXPECT_EQ(to_string(w), "reset=1,slow=3");
}

TEST(BughuntPlan, BadInputNamesTheValue) {
  using test::input_error;
  const Model m{.p = 0.1, .q = 0.1};
  const PageFaultWeights w;
  EXPECT_NE(input_error([&] { draw_bughunt_plan(m, Tester::careful, 1, AppVersion::healthy, w, 0, 1); })
                .find("runs = 0"),
            std::string::npos);
  EXPECT_NE(input_error([&] {
              draw_bughunt_plan(m, Tester::careful, 1, AppVersion::healthy, w, kMaxBughuntRuns + 1, 1);
            }).find("[1, 10000]"),
            std::string::npos);
  EXPECT_NE(input_error([&] { draw_bughunt_plan(m, Tester::careful, -1, AppVersion::healthy, w, 5, 1); })
                .find("reloads = -1"),
            std::string::npos);
  EXPECT_NE(input_error([] { parse_page_fault_weights("timeout=1"); }).find("'timeout'"), std::string::npos);
  EXPECT_NE(input_error([] { parse_page_fault_weights("reset=1,reset=2"); }).find("twice"), std::string::npos);
  EXPECT_NE(input_error([] { parse_page_fault_weights("reset=-1"); }).find(">= 0"), std::string::npos);
  EXPECT_NE(input_error([] { parse_page_fault_weights("reset=0,503=0"); }).find("total weight"), std::string::npos);
  EXPECT_NE(input_error([] { parse_page_fault_weights("reset"); }).find("fault=weight"), std::string::npos);
  EXPECT_NE(input_error([] { parse_page_fault_weights(""); }).find("empty"), std::string::npos);
}

}  // namespace
}  // namespace relsim
