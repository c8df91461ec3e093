// A brute force written here from docs/model.md (Fault chain, Policies) and nothing else: plain
// loops over all 2^(n(r+1)) good/bad sequences, the two-state chain written
// out by hand, the simple policy run over each sequence. No relsim code is
// used to compute it; exact_matrix must agree with it in every bin.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <utility>

#include "relsim/exact/exact.hpp"
#include "support/closed_form.hpp"

namespace relsim {
namespace {

using relsim_test::Case;

struct BruteResult {
  std::map<std::pair<int, int>, double> bins;  // (requests, 0 done / 1 env_error) -> probability
  double success = 0.0;
  double mean = 0.0;
  int max_requests = 0;
};

// P(next request bad | this one bad or good) after m steps of the one-step
// matrix [[1 - p0, p0], [1 - q, q]], by multiplying it out m times.
double m_step_bad(double p, double q, bool from_bad, std::int64_t m) {
  const double p0 = p >= 1.0 ? 1.0 : std::min(1.0, p * (1.0 - q) / (1.0 - p));
  double good = from_bad ? 0.0 : 1.0, bad = from_bad ? 1.0 : 0.0;
  for (std::int64_t s = 0; s < m; ++s) {
    const double ng = good * (1.0 - p0) + bad * (1.0 - q);
    const double nb = good * p0 + bad * q;
    good = ng;
    bad = nb;
  }
  return bad;
}

// Every sequence of length n(r+1), its first request bad with probability
// start_bad; after a bad request the chain moves 1 + b steps, after a good
// one 1 + g. The task reads a prefix; the rest of the sequence sums out.
BruteResult brute_force(const Case& c, double start_bad) {
  const int length = static_cast<int>(c.length());
  const double after_bad = m_step_bad(c.p, c.q, true, 1 + c.b);
  const double after_good = m_step_bad(c.p, c.q, false, 1 + c.g);
  BruteResult out;
  for (std::uint64_t seq = 0; seq < (std::uint64_t{1} << length); ++seq) {
    const auto bad = [&](int t) { return ((seq >> t) & 1U) != 0; };  // request t is bit t
    double weight = bad(0) ? start_bad : 1.0 - start_bad;
    for (int t = 1; t < length; ++t) {
      const double pb = bad(t - 1) ? after_bad : after_good;
      weight *= bad(t) ? pb : 1.0 - pb;
    }
    int sent = 0, call = 0, attempt = 0, outcome = -1;
    while (outcome < 0) {
      const bool is_bad = bad(sent++);
      if (!is_bad) {
        attempt = 0;
        if (++call == c.n) outcome = 0;
      } else if (++attempt > c.r) {
        outcome = 1;
      }
    }
    out.bins[{sent, outcome}] += weight;
    if (weight > 0.0) out.max_requests = std::max(out.max_requests, sent);
  }
  for (const auto& [key, prob] : out.bins) {
    if (key.second == 0) out.success += prob;
    out.mean += prob * key.first;
  }
  return out;
}

// Continuous scope by hand: success after a task that ended done (its last
// request good) and after one that ended env_error (bad), the two-outcome
// chain's long-run x = S_b / (1 - S_g + S_b), and from that the long-run
// distribution of a task's first request.
double brute_continuous_start(const Case& c) {
  const double after_done = m_step_bad(c.p, c.q, false, 1 + c.g);
  const double after_env = m_step_bad(c.p, c.q, true, 1 + c.g);
  const double s_good = brute_force(c, after_done).success;
  const double s_bad = brute_force(c, after_env).success;
  const double x = s_bad / (1.0 - s_good + s_bad);
  return x * after_done + (1.0 - x) * after_env;
}

void expect_matrix_matches_brute_force(const Case& c) {
  const BruteResult brute = brute_force(c, c.continuous ? brute_continuous_start(c) : c.p);
  const ExactResult m = exact_matrix(c.model(), c.policy());
  ASSERT_TRUE(m.distribution_complete) << c.str();
  EXPECT_NEAR(m.success, brute.success, 1e-12) << c.str();
  EXPECT_NEAR(m.mean_requests, brute.mean, 1e-12 * brute.mean) << c.str();
  EXPECT_EQ(m.max_requests, brute.max_requests) << c.str();
  std::map<std::pair<int, int>, double> engine;
  for (const auto& bin : m.requests)
    engine[{static_cast<int>(bin.requests), bin.outcome == Outcome::done ? 0 : 1}] = bin.probability;
  for (const auto& [key, prob] : brute.bins) {
    const double got = engine.count(key) ? engine.at(key) : 0.0;
    EXPECT_NEAR(got, prob, 1e-12) << c.str() << " requests " << key.first << " outcome " << key.second;
  }
  for (const auto& [key, prob] : engine)
    EXPECT_TRUE(brute.bins.count(key)) << c.str() << " engine has a bin the brute force never reaches: "
                                       << key.first << " outcome " << key.second << " p " << prob;
}

TEST(BruteForce, MatrixMatchesHandWrittenBruteForceOnReferenceCases) {
  for (bool cont : {false, true}) {
    expect_matrix_matches_brute_force({0.3, 0.8, 2, 2, 0, 0, cont});
    expect_matrix_matches_brute_force({0.3, 0.3, 2, 2, 0, 0, cont});
    expect_matrix_matches_brute_force({0.3, 0.8, 2, 2, 1, 2, cont});
    expect_matrix_matches_brute_force({0.7, 0.9, 1, 4, 3, 0, cont});
    expect_matrix_matches_brute_force({0.8, 0.75, 2, 3, 0, 1, cont});
    expect_matrix_matches_brute_force({0.05, 0.6, 0, 6, 0, 4, cont});
    expect_matrix_matches_brute_force({0.4, 0.0, 3, 2, 2, 0, cont});
  }
}

TEST(BruteForce, MatrixMatchesHandWrittenBruteForceOn100RandomTinyCases) {
  std::mt19937_64 rng(424242);
  for (int i = 0; i < 100; ++i) {
    Case c = relsim_test::random_case(rng, 10);
    // The hand-made chain steps one at a time: keep b and g small.
    c.b %= 8;
    c.g %= 8;
    // Continuous scope needs a unique long-run outcome distribution for the
    // two-outcome formula: skip the absorbing cases (covered elsewhere).
    if (c.continuous && (c.q == 1.0 || c.p == 0.0)) c.continuous = false;
    SCOPED_TRACE(c.str());
    expect_matrix_matches_brute_force(c);
  }
}

TEST(BruteForce, ContinuousReferenceCaseIs08121175185) {
  const Case c{0.3, 0.8, 2, 2, 0, 0, true};
  EXPECT_NEAR(brute_force(c, brute_continuous_start(c)).success, 0.8121175185419421, 1e-12);
  EXPECT_NEAR(exact_matrix(c.model(), c.policy()).success, 0.8121175185419421, 1e-12);
}

}  // namespace
}  // namespace relsim
