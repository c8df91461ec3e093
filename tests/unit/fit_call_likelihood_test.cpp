// relsim fit --sdk-retries (include/relsim/fit/call_likelihood.hpp): the forward pass over per-call
// outcomes against the request-level likelihood (S = 0) and against brute-force enumeration of the
// chain's request sequences; the 95% intervals' coverage on per-call records drawn from a known chain.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/core/model.hpp"
#include "relsim/fit/baum_welch.hpp"
#include "relsim/fit/call_likelihood.hpp"
#include "relsim/fit/counts.hpp"
#include "relsim/fit/estimate.hpp"
#include "relsim/fit/likelihood.hpp"
#include "support/sanitized.hpp"

namespace {

using relsim::fit::Sequences;
using Outcomes = std::vector<std::uint8_t>;

// The chain written out: P(next bad | previous) with the stationary first request.
double bad_after(double p, double q, int previous) {
  if (previous < 0) return p;
  return previous == 1 ? q : p * (1.0 - q) / (1.0 - p);
}

double request_probability(const Outcomes& requests, double p, double q) {
  double prob = 1.0;
  int previous = -1;
  for (const std::uint8_t r : requests) {
    const double b = bad_after(p, q, previous);
    prob *= r ? b : 1.0 - b;
    previous = r;
  }
  return prob;
}

// Requests to calls through an SDK retrying up to s times: false when the requests do not end
// exactly at the end of a call.
bool to_calls(const Outcomes& requests, int s, Outcomes& calls) {
  calls.clear();
  int bad_run = 0;
  for (const std::uint8_t r : requests) {
    if (r == 0) {
      calls.push_back(0);
      bad_run = 0;
    } else if (++bad_run == s + 1) {
      calls.push_back(1);
      bad_run = 0;
    }
  }
  return bad_run == 0;
}

Sequences one_task(const Outcomes& calls) { return relsim::fit::distinct_sequences({calls}); }

TEST(FitCallLikelihood, WithoutSdkRetriesItIsTheRequestLikelihood) {
  std::mt19937_64 rng(7);
  std::vector<Outcomes> tasks;
  relsim::fit::ChainCounter counter;
  for (int t = 0; t < 200; ++t) {
    Outcomes seq;
    const int n = 1 + int(rng() % 12);
    int previous = -1;
    for (int i = 0; i < n; ++i) {
      const std::uint8_t bad = std::uniform_real_distribution<double>(0, 1)(rng) < bad_after(0.3, 0.8, previous);
      seq.push_back(bad);
      counter.add({std::to_string(t), i, bad != 0, bad ? "cut" : ""});
      previous = bad;
    }
    tasks.push_back(seq);
  }
  const Sequences calls = relsim::fit::distinct_sequences(tasks);
  for (const double p : {0.05, 0.3, 0.6, 0.9})
    for (const double q : {0.0, 0.4, 0.8, 0.99, 1.0}) {
      if (q < relsim::min_q_for(p)) continue;
      const double want = relsim::fit::log_likelihood(counter.counts(), p, q);
      if (!std::isfinite(want)) {  // q = 1 with a bad request followed by a good one
        EXPECT_EQ(relsim::fit::call_log_likelihood(calls, 0, p, q), want);
        continue;
      }
      EXPECT_NEAR(relsim::fit::call_log_likelihood(calls, 0, p, q), want, 1e-9 * std::abs(want)) << p << " " << q;
    }
}

TEST(FitCallLikelihood, ForwardPassIsTheSumOverRequestSequences) {
  for (const int s : {1, 2, 3})
    for (const auto& [p, q] : std::vector<std::pair<double, double>>{{0.3, 0.8}, {0.1, 0.2}, {0.7, 0.9}}) {
      const int n_calls = 3;
      std::map<Outcomes, double> by_calls;
      Outcomes requests, calls;
      for (int length = n_calls; length <= n_calls * (s + 1); ++length)
        for (std::uint32_t bits = 0; bits < (1u << length); ++bits) {
          requests.assign(std::size_t(length), 0);
          for (int i = 0; i < length; ++i) requests[std::size_t(i)] = (bits >> i) & 1u;
          if (!to_calls(requests, s, calls) || calls.size() != std::size_t(n_calls)) continue;
          by_calls[calls] += request_probability(requests, p, q);
        }
      ASSERT_EQ(by_calls.size(), 8u);
      double total = 0.0;
      for (const auto& [seen, prob] : by_calls) {
        total += prob;
        EXPECT_NEAR(std::exp(relsim::fit::call_log_likelihood(one_task(seen), s, p, q)), prob, 1e-12)
            << "s " << s << " p " << p << " q " << q;
      }
      EXPECT_NEAR(total, 1.0, 1e-12);
    }
}

// Tasks of `n_calls` calls: requests drawn from the chain until each call ends.
std::vector<Outcomes> draw_calls(std::mt19937_64& rng, double p, double q, int s, int tasks, int n_calls) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Outcomes> out;
  for (int t = 0; t < tasks; ++t) {
    Outcomes calls;
    int previous = -1;
    for (int c = 0; c < n_calls; ++c) {
      int bad_run = 0;
      for (;;) {
        previous = u(rng) < bad_after(p, q, previous) ? 1 : 0;
        if (previous == 0) {
          calls.push_back(0);
          break;
        }
        if (++bad_run == s + 1) {
          calls.push_back(1);
          break;
        }
      }
    }
    out.push_back(calls);
  }
  return out;
}

// The coverage count needs its 100 replicates: about 5 s in Release, over
// three minutes under ASan + UBSan (half of that run's wall time on two
// cores). A sanitizer run checks the same code on the first four (the same
// draws: the seed is fixed) and leaves the count to the Release run.
constexpr int kCoverageReplicates = relsim::test::kSanitized ? 4 : 100;
constexpr bool kCountCoverage = !relsim::test::kSanitized;

TEST(FitCallLikelihood, IntervalsCoverTheTruth) {
  constexpr double p = 0.3, q = 0.8;
  constexpr int s = 2, replicates = kCoverageReplicates;
  std::mt19937_64 rng(20261201);
  int p_in = 0, q_in = 0;
  const relsim::fit::ChainCounts no_kinds;
  for (int r = 0; r < replicates; ++r) {
    const Sequences calls = relsim::fit::distinct_sequences(draw_calls(rng, p, q, s, 300, 20));
    const relsim::fit::ChainFit fit = relsim::fit::estimate_calls(calls, s, no_kinds);
    p_in += fit.p_ci.low <= p && p <= fit.p_ci.high;
    q_in += fit.q_ci.low <= q && q <= fit.q_ci.high;
    EXPECT_LE(fit.p_ci.low, fit.p);
    EXPECT_GE(fit.p_ci.high, fit.p);
    EXPECT_TRUE(std::isnan(fit.order2.p_value));
    EXPECT_TRUE(std::isnan(fit.runs.p_value));
  }
  std::printf("coverage over %d replicates: p %d, q %d\n", replicates, p_in, q_in);
  if (!kCountCoverage) return;
  EXPECT_GE(p_in, 88);
  EXPECT_LE(p_in, 99);
  EXPECT_GE(q_in, 88);
  EXPECT_LE(q_in, 99);
}

TEST(FitCallLikelihood, RejectsSdkRetriesOutOfRange) {
  const Sequences calls = one_task({0, 1, 0});
  EXPECT_THROW(relsim::fit::estimate_calls(calls, 101, {}), relsim::InputError);
  EXPECT_THROW(relsim::fit::estimate_calls(calls, -1, {}), relsim::InputError);
}

}  // namespace
