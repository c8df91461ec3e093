// The Monte Carlo in seconds (simulate_time.hpp): the same bytes for any
// thread count, answers derived by hand for cases small enough to write
// down, the order-statistic ranks against the textbook table, and its
// refusals. The comparison with the exact engine on fixed points is in
// simulate_time_exact_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "relsim/core/error.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/montecarlo/simulate_time.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

constexpr double kConfidence = 0.9999;

using test::time_model_of;

SimConfig config_of(std::int64_t tasks, int threads, std::uint64_t seed = 7) {
  SimConfig c;
  c.tasks = tasks;
  c.threads = threads;
  c.seed = seed;
  return c;
}

// Every figure of a result, doubles in their shortest round-trip form, so
// that equal strings mean equal bits.
std::string fingerprint(const TimeSimResult& r) {
  const SimResult& c = r.counts;
  std::string s = fmt::format("{} {} {} {} {} | {} {} {} {}", c.tasks, c.successes, c.requests, c.calls_succeeded,
                              fmt::join(c.faults, ","), r.total_microseconds, r.mean_seconds, r.sd_seconds,
                              r.confidence);
  s += fmt::format(" | {} {} {} {}", fmt::join(c.outcomes, ","), fmt::join(c.done_by_requests, ","),
                   fmt::join(c.env_by_requests, ","), c.outcomes_by_class);
  s += fmt::format(" | {} {}", fmt::join(c.pairs_after, ","), fmt::join(c.done_after, ","));
  s += fmt::format(" | {} {} {} {}", r.mean_interval.low, r.mean_interval.high, r.quantiles_available,
                   r.quantiles_note);
  for (const SimQuantile& q : r.quantiles)
    s += fmt::format(" | {} {} {} {}", q.percent, q.seconds, q.interval.low, q.interval.high);
  return s;
}

// A bit of everything: layered, jittered waits, retry-after, slow faults,
// http_400, several chunks of tasks.
TimeModel busy_model(ChainScope scope) {
  TimeModel t = time_model_of(20.0, 8.0, "sdk", 0.7, 1.5);
  t.scope = scope;
  t.retry_after = 2.5;
  t.fault_seconds = parse_fault_seconds("slow_headers=6,stall=4", 0.0, 0.0);
  return t;
}

TEST(SimulateTime, SameBytesForOneAndTwoThreadsFresh) {
  const TimeModel t = busy_model(ChainScope::fresh);
  const Policy p{.n = 3, .r = 2, .kind = PolicyKind::layered};
  SimConfig one = config_of(5000, 1), two = config_of(5000, 2);
  one.kinds = two.kinds = parse_fault_weights("cut=1,stall=1,slow_headers=1,http_429=2,http_529=1,http_400=0.05");
  const TimeSimResult a = simulate_time(t, p, one), b = simulate_time(t, p, two);
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  EXPECT_EQ(a.counts.tasks, 5000);
  EXPECT_GT(a.counts.faults[static_cast<std::size_t>(FaultKind::http_429)], 0);
  EXPECT_GT(a.total_microseconds, 0);
  // Another seed changes the draws.
  two.seed = 8;
  EXPECT_NE(fingerprint(a), fingerprint(simulate_time(t, p, two)));
}

TEST(SimulateTime, SameBytesForOneAndTwoThreadsContinuousAndThreeStates) {
  const TimeModel t = busy_model(ChainScope::continuous);
  const Policy p{.n = 2, .r = 2, .B = 4, .kind = PolicyKind::budgeted};
  SimConfig one = config_of(3000, 1), two = config_of(3000, 2);
  one.lanes = two.lanes = 5;
  EXPECT_EQ(fingerprint(simulate_time(t, p, one)), fingerprint(simulate_time(t, p, two)));

  // Three states, one of them bad only half the time: the emission and
  // jump-target draws.
  TimeModel k3 = time_model_of(1.0, 1.0, "exp:0.5,4,1", 0.2);
  Eigen::MatrixXd step(3, 3);
  step << 0.9, 0.1, 0.0, 0.2, 0.6, 0.2, 0.0, 0.3, 0.7;
  k3.chain = uniformised_time_chain(step, Eigen::Vector3d(0.0, 0.5, 1.0), 2.0);
  const Policy simple{.n = 2, .r = 3, .s = 0, .kind = PolicyKind::simple};
  const TimeSimResult a = simulate_time(k3, simple, config_of(3000, 1));
  const TimeSimResult b = simulate_time(k3, simple, config_of(3000, 2));
  EXPECT_EQ(fingerprint(a), fingerprint(b));
}

// Nothing takes time (no duration, no wait, no think), so every request of
// a task sees the state its first one saw: a task that starts good (1 - p)
// succeeds with exactly n requests, one that starts bad fails with exactly
// r + 1, and every wall time is 0.
TEST(SimulateTime, FrozenChainWhenNothingTakesTime) {
  const TimeModel t = time_model_of(30.0, 10.0, "none", 0.0);  // p = 1/4
  const Policy p{.n = 2, .r = 3, .s = 0, .kind = PolicyKind::simple};
  const TimeSimResult r = simulate_time(t, p, config_of(40000, 2));
  const SimResult& c = r.counts;
  EXPECT_EQ(c.done_by_requests[2], c.successes);
  EXPECT_EQ(c.env_by_requests[4], c.tasks - c.successes);
  EXPECT_EQ(c.requests, 2 * c.successes + 4 * (c.tasks - c.successes));
  EXPECT_EQ(r.total_microseconds, 0);
  EXPECT_EQ(r.sd_seconds, 0.0);
  EXPECT_EQ(r.quantiles[2].seconds, 0.0);
  EXPECT_TRUE(binomial_interval(IntervalKind::wilson, c.successes, c.tasks, kConfidence).covers(0.75));
}

// n = 1, r = 2, waits 2 then 4 s, every request 1 s. Derived by hand: the
// first request sees bad with p = t_bad / (t_good + t_bad); a retry starts
// 1 + w after the bad request it follows, and two-state P(bad at t | bad at
// 0) = p + (1 - p) e^(-lambda t), lambda = 1/t_good + 1/t_bad. So
// P(fail) = p a b with a = P(bad at 3 | bad), b = P(bad at 5 | bad), and
// the wall time is 1 (good first; 1 - p), 4 (bad, good; p (1 - a)) or 9
// (bad, bad, then the last request from 8 to 9; p a).
TEST(SimulateTime, FixedWaitsMatchTheHandFormula) {
  const double t_good = 30.0, t_bad = 10.0, p = t_bad / (t_good + t_bad), lambda = 1.0 / t_good + 1.0 / t_bad;
  const auto stay_bad = [&](double t) { return p + (1.0 - p) * std::exp(-lambda * t); };
  const double a = stay_bad(3.0), b = stay_bad(5.0);
  const double success = 1.0 - p * a * b;
  const double mean = 1.0 * (1.0 - p) + 4.0 * p * (1.0 - a) + 9.0 * p * a;
  // CDF: 0.75 at 1, 0.75 + p (1 - a) = 0.812 at 4, 1 at 9.
  ASSERT_LT(1.0 - p + p * (1.0 - a), 0.85);

  const TimeModel t = time_model_of(t_good, t_bad, "list:2,4", 1.0);
  TimeSimOptions o;
  o.confidence = kConfidence;
  const TimeSimResult r =
      simulate_time(t, Policy{.n = 1, .r = 2, .s = 0, .kind = PolicyKind::simple}, config_of(200000, 2), o);
  EXPECT_TRUE(binomial_interval(IntervalKind::wilson, r.counts.successes, r.counts.tasks, kConfidence).covers(success))
      << r.counts.successes << " of " << r.counts.tasks << " vs " << success;
  EXPECT_TRUE(r.mean_interval.covers(mean)) << r.mean_interval.low << " " << r.mean_interval.high << " vs " << mean;
  ASSERT_TRUE(r.quantiles_available);
  EXPECT_EQ(r.quantiles[0].seconds, 1.0);
  EXPECT_EQ(r.quantiles[1].seconds, 9.0);
  EXPECT_EQ(r.quantiles[2].seconds, 9.0);
  EXPECT_TRUE(r.quantiles[1].interval.covers(9.0));
}

// n = 1, r = 1, the SDK's wait W = 0.5 (1 - 0.25 U) before the retry,
// requests of 1 s, a fast chain (t_good 2, t_bad 1: p = 1/3, lambda = 1.5).
// The retry starts 1 + W after the first request, so
// P(fail) = p E[p + (1 - p) e^(-lambda (1.5 - 0.125 U))]
//         = p (p + (1 - p) e^(-1.5 lambda) (e^(0.125 lambda) - 1) / (0.125 lambda)),
// the wall time is 1 (probability 1 - p) or 2 + W, uniform on [2.375, 2.5]
// (probability p): the mean 1 + p (1 + 0.4375), the median 1, and
// p90 = 2.5 - 0.125 (1 - 0.7) = 2.4625, p99 = 2.5 - 0.125 (1 - 0.97) = 2.49625
// (P(2 + W <= x) = 1 - (2.5 - x) / 0.125 on that range).
TEST(SimulateTime, JitteredWaitMatchesTheHandFormula) {
  const double p = 1.0 / 3.0, lambda = 1.5, x = 0.125 * lambda;
  const double fail = p * (p + (1.0 - p) * std::exp(-1.5 * lambda) * std::expm1(x) / x);
  const double mean = 1.0 + p * 1.4375;
  const TimeModel t = time_model_of(2.0, 1.0, "sdk", 1.0);
  TimeSimOptions o;
  o.confidence = kConfidence;
  const TimeSimResult r =
      simulate_time(t, Policy{.n = 1, .r = 1, .s = 0, .kind = PolicyKind::simple}, config_of(200000, 2), o);
  EXPECT_TRUE(
      binomial_interval(IntervalKind::wilson, r.counts.successes, r.counts.tasks, kConfidence).covers(1.0 - fail));
  EXPECT_TRUE(r.mean_interval.covers(mean)) << r.mean_interval.low << " " << r.mean_interval.high << " vs " << mean;
  EXPECT_EQ(r.quantiles[0].seconds, 1.0);
  EXPECT_TRUE(r.quantiles[1].interval.covers(2.4625))
      << r.quantiles[1].interval.low << " " << r.quantiles[1].interval.high;
  EXPECT_TRUE(r.quantiles[2].interval.covers(2.49625))
      << r.quantiles[2].interval.low << " " << r.quantiles[2].interval.high;
  EXPECT_GT(r.quantiles[1].interval.high, r.quantiles[1].interval.low);  // a continuous part: a real interval
}

// The distribution-free interval of the median (e.g. Conover, "Practical
// Nonparametric Statistics", table A3; Hollander & Wolfe): 95% for n = 20 is
// [x_(6), x_(15)], for n = 100 [x_(40), x_(61)]. For n = 10 and the 99th
// percentile at 99%, by hand: P(B <= 8) = 0.00427 <= 0.005 < P(B <= 9) =
// 0.0956 gives low 9, and P(B <= 9) < 0.995 leaves no upper rank (11).
TEST(SimulateTime, QuantileRanksMatchTheTable) {
  const QuantileRanks a = quantile_ranks(20, 50, 0.95);
  EXPECT_EQ(a.rank, 10);
  EXPECT_EQ(a.low, 6);
  EXPECT_EQ(a.high, 15);
  const QuantileRanks b = quantile_ranks(100, 50, 0.95);
  EXPECT_EQ(b.rank, 50);
  EXPECT_EQ(b.low, 40);
  EXPECT_EQ(b.high, 61);
  const QuantileRanks c = quantile_ranks(10, 99, 0.99);
  EXPECT_EQ(c.rank, 10);
  EXPECT_EQ(c.low, 9);
  EXPECT_EQ(c.high, 11);
  EXPECT_EQ(quantile_ranks(1000, 90, 0.99).rank, 900);
  EXPECT_EQ(quantile_ranks(1001, 90, 0.99).rank, 901);
}

TEST(SimulateTime, QuantilesUnavailableAboveTheLimit) {
  const TimeModel t = time_model_of(30.0, 10.0, "sdk", 1.0);
  TimeSimOptions o;
  o.max_timed_tasks = 100;
  const TimeSimResult r =
      simulate_time(t, Policy{.n = 1, .r = 1, .s = 0, .kind = PolicyKind::simple}, config_of(1000, 1), o);
  EXPECT_FALSE(r.quantiles_available);
  EXPECT_NE(r.quantiles_note.find("1000"), std::string::npos) << r.quantiles_note;
  EXPECT_GT(r.mean_seconds, 0.0);
}

TEST(SimulateTime, BadInputIsRefused) {
  const TimeModel t = time_model_of(30.0, 10.0, "sdk", 1.0);
  const Policy p{.n = 1, .r = 1, .s = 0, .kind = PolicyKind::simple};
  TimeSimOptions o;
  o.confidence = 1.0;
  EXPECT_THROW(simulate_time(t, p, config_of(10, 1), o), InputError);
  o = {};
  o.max_timed_tasks = kMaxTimedTasks + 1;
  EXPECT_THROW(simulate_time(t, p, config_of(10, 1), o), InputError);
  EXPECT_THROW(simulate_time(t, p, config_of(0, 1)), InputError);
  // 10^8 calls of up to 1001 requests, each followed by a wait of 10^9 s.
  const TimeModel slow = time_model_of(30.0, 10.0, "list:1e9", 1.0);
  EXPECT_THROW(
      simulate_time(slow, Policy{.n = 100'000'000, .r = 1000, .s = 0, .kind = PolicyKind::simple}, config_of(10, 1)),
      InputError);
  EXPECT_THROW(quantile_ranks(0, 50, 0.99), InputError);
  EXPECT_THROW(quantile_ranks(10, 100, 0.99), InputError);
}

}  // namespace
}  // namespace relsim
