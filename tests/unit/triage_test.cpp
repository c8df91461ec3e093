// A testing agent's verdicts (exact/triage.hpp): the chapter's seven
// scenarios through the oracle; the exact rates against closed forms for a
// fresh chain and against a brute-force walk of one long chain (a
// continuous one), written here with std::mt19937_64.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "relsim/exact/triage.hpp"
#include "support/input_error.hpp"
#include "support/models.hpp"
#include "support/sanitized.hpp"

namespace relsim {
namespace {

struct Scenario {
  std::string name;
  AppVersion version;
  std::vector<bool> failed;  // each load: failed or not (long enough for any tester here)
};

// healthy; product bug; reset, 503, slow always; reset once; product bug + reset once.
std::vector<Scenario> chapter() {
  const std::vector<bool> always(5, true), once = {true, false, false, false, false}, never(5, false);
  return {{"healthy", AppVersion::healthy, never},       {"product bug", AppVersion::buggy, never},
          {"reset always", AppVersion::healthy, always}, {"503 always", AppVersion::healthy, always},
          {"slow always", AppVersion::healthy, always},  {"reset once", AppVersion::healthy, once},
          {"bug + reset once", AppVersion::buggy, once}};
}

TEST(Triage, TheChaptersTableNaiveFourFalseBugsCarefulNone) {
  std::vector<std::string> naive, careful;
  std::vector<int> careful_loads;
  int naive_false = 0, careful_false = 0, missed = 0;
  for (const Scenario& s : chapter()) {
    const RunVerdict n = judge(Tester::naive, 1, s.version, s.failed);
    const RunVerdict c = judge(Tester::careful, 1, s.version, s.failed);
    naive.emplace_back(to_string(n.verdict));
    careful.emplace_back(to_string(c.verdict));
    careful_loads.push_back(c.loads);
    const bool healthy = s.version == AppVersion::healthy;
    naive_false += healthy && n.verdict == Verdict::bug;
    careful_false += healthy && c.verdict == Verdict::bug;
    missed += !healthy && n.verdict != Verdict::bug;
    missed += !healthy && c.verdict != Verdict::bug;
  }
  EXPECT_EQ(naive, (std::vector<std::string>{"PASS", "BUG", "BUG", "BUG", "BUG", "BUG", "BUG"}));
  EXPECT_EQ(careful, (std::vector<std::string>{"PASS", "BUG", "ENV_ERROR", "ENV_ERROR", "ENV_ERROR", "PASS", "BUG"}));
  EXPECT_EQ(careful_loads, (std::vector<int>{1, 1, 2, 2, 2, 2, 2}));
  EXPECT_EQ(naive_false, 4);
  EXPECT_EQ(careful_false, 0);
  EXPECT_EQ(missed, 0);
}

TEST(Triage, MoreReloadsReadMoreLoads) {
  EXPECT_EQ(judge(Tester::careful, 3, AppVersion::healthy, {true, true, true, true}).loads, 4);
  EXPECT_EQ(judge(Tester::careful, 3, AppVersion::healthy, {true, true, false}).verdict, Verdict::pass);
  EXPECT_EQ(judge(Tester::careful, 0, AppVersion::buggy, {true}).verdict, Verdict::env_error);
  EXPECT_EQ(test::input_error([] { judge(Tester::careful, 2, AppVersion::healthy, {true, true}); }),
            "the run needs load 3 and only 2 are given");
}

TEST(Triage, FreshRatesAreTheClosedForms) {
  // P(bad after m steps | bad) = p + (1 - p) λ^m, λ = q - p0: careful fails
  // all k + 1 loads with p (p + (1 - p) λ^(b+1))^k; naive reports a false bug
  // with p; neither misses the bug.
  for (const double p : {0.02, 0.1, 0.3})
    for (const double q : {p, 0.5, 0.8, 0.95})
      for (const std::int64_t b : {0, 1, 5, 40})
        for (const int k : {0, 1, 2, 5}) {
          const Model m{.p = p, .q = q, .b = b};
          const double lambda = q - m.p0();
          const double env = p * std::pow(p + (1.0 - p) * std::pow(lambda, static_cast<double>(b + 1)), k);
          const TriageRates careful = triage_exact(m, Tester::careful, k);
          EXPECT_NEAR(careful.healthy.env_error, env, 1e-14) << p << " " << q << " " << b << " " << k;
          EXPECT_NEAR(careful.buggy.env_error, env, 1e-14);
          EXPECT_EQ(careful.false_bug(), 0.0);
          EXPECT_EQ(careful.missed_bug(), 0.0);
          EXPECT_NEAR(careful.healthy.pass + careful.healthy.env_error, 1.0, 1e-14);
          const TriageRates naive = triage_exact(m, Tester::naive, k);
          EXPECT_NEAR(naive.false_bug(), p, 1e-15);
          EXPECT_EQ(naive.buggy.bug, 1.0);
          EXPECT_EQ(naive.missed_bug(), 0.0);
          EXPECT_EQ(naive.healthy.mean_loads, 1.0);
        }
  // Independent faults: p^(k+1), whatever the delay.
  EXPECT_NEAR(triage_exact(Model{.p = 0.3, .q = 0.3, .b = 7}, Tester::careful, 2).healthy.env_error, 0.027, 1e-15);
}

TEST(Triage, AReloadThatOutlastsTheBurstBringsTheIndependentValueBack) {
  const double bursty = triage_exact(Model{.p = 0.1, .q = 0.9}, Tester::careful, 1).healthy.env_error;
  const double waited = triage_exact(Model{.p = 0.1, .q = 0.9, .b = 500}, Tester::careful, 1).healthy.env_error;
  EXPECT_NEAR(bursty, 0.09, 1e-12);  // p q
  EXPECT_NEAR(waited, 0.01, 1e-12);  // p^2
}

// One long chain, loads and silent steps in order, runs one after another.
TriageRates walk(const Model& m, Tester tester, int reloads, std::int64_t runs, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  bool bad = u(rng) < m.p;
  const auto step = [&] { bad = u(rng) < (bad ? m.q : m.p0()); };
  double env = 0.0, first_failed = 0.0, loads = 0.0;
  for (std::int64_t run = 0; run < runs; ++run) {
    if (run > 0)
      for (std::int64_t s = 0; s <= m.g; ++s) step();
    std::vector<bool> failed;
    const int most = tester == Tester::naive ? 1 : reloads + 1;
    for (int load = 0; load < most; ++load) {
      if (load > 0)
        for (std::int64_t s = 0; s <= m.b; ++s) step();
      failed.push_back(bad);
      if (!bad) break;
    }
    failed.resize(static_cast<std::size_t>(most), false);
    const RunVerdict v = judge(tester, reloads, AppVersion::healthy, failed);
    env += v.verdict == Verdict::env_error;
    first_failed += failed[0];
    loads += v.loads;
  }
  TriageRates r;
  const auto n = static_cast<double>(runs);
  if (tester == Tester::naive) r.healthy.bug = first_failed / n;
  r.healthy.env_error = env / n;
  r.healthy.mean_loads = loads / n;
  return r;
}

TEST(Triage, ContinuousRatesAgreeWithOneLongChainWalkedByBruteForce) {
  // After a run that ended on a working load, the next starts g + 1 steps
  // after a good step: fewer failures than a fresh start when g is short.
  // A fifth of the runs under sanitizers (support/sanitized.hpp), each bound
  // widened by the square root of five with it.
  const std::int64_t runs = relsim::test::kSanitized ? 400'000 : 2'000'000;
  const double widen = std::sqrt(2'000'000.0 / static_cast<double>(runs));
  for (const auto& [m, k] : std::vector<std::pair<Model, int>>{
           {Model{.p = 0.1, .q = 0.8, .chain = ChainScope::continuous}, 1},
           {Model{.p = 0.2, .q = 0.9, .b = 2, .g = 3, .chain = ChainScope::continuous}, 2},
           {Model{.p = 0.05, .q = 0.6, .b = 1, .chain = ChainScope::continuous}, 3}}) {
    const TriageRates exact = triage_exact(m, Tester::careful, k);
    const TriageRates seen = walk(m, Tester::careful, k, runs, 20261202);
    const double e = exact.healthy.env_error;
    const double sd = std::sqrt(e * (1.0 - e) / static_cast<double>(runs));
    EXPECT_NEAR(seen.healthy.env_error, e, 5.0 * sd + 1e-9) << m.p << " " << m.q;
    EXPECT_NEAR(seen.healthy.mean_loads, exact.healthy.mean_loads, 0.002 * widen);
    const TriageRates fresh = triage_exact(Model{.p = m.p, .q = m.q, .b = m.b}, Tester::careful, k);
    EXPECT_LT(e, fresh.healthy.env_error);
  }
  // Naive on a continuous chain reads one load per run, every g + 1 steps:
  // the chain's own law, p.
  const Model m{.p = 0.1, .q = 0.8, .g = 2, .chain = ChainScope::continuous};
  EXPECT_NEAR(triage_exact(m, Tester::naive, 1).false_bug(), 0.1, 1e-12);
  EXPECT_NEAR(walk(m, Tester::naive, 1, runs, 7).healthy.bug, 0.1, 5.0 * std::sqrt(0.09 / runs));
  // A long gap between runs forgets how the last one ended: the fresh value.
  EXPECT_NEAR(triage_exact(Model{.p = 0.1, .q = 0.8, .g = 2000, .chain = ChainScope::continuous}, Tester::careful, 2)
                  .healthy.env_error,
              triage_exact(Model{.p = 0.1, .q = 0.8}, Tester::careful, 2).healthy.env_error, 1e-12);
}

TEST(Triage, BadWordsAndReloadsAreRefusedByName) {
  EXPECT_EQ(test::input_error([] { parse_tester("sloppy"); }), "triage = 'sloppy' is not a tester: use naive or careful");
  EXPECT_EQ(test::input_error([] { parse_app_version("beta"); }),
            "version = 'beta' is not a version: use healthy or buggy");
  EXPECT_EQ(test::input_error([] { triage_exact(Model{.p = 0.1, .q = 0.5}, Tester::careful, -1); }),
            "reloads = -1 is out of range: it must be in [0, 1000]");
}

}  // namespace
}  // namespace relsim
