// The fallback simulated in seconds (docs/model.md, Fallback and Cooldowns):
//   - against the exact engine in seconds, which multiplies the product
//     chain's exp(Q t) where the simulator draws each sojourn and jump:
//     success, mean seconds, mean requests and mean cost within 5 standard
//     errors, for several policies, a shared outage, a hidden first chain
//     and the continuous scope;
//   - the same bytes for any thread count;
//   - a cooldown of 0 seconds is no cooldown, to the byte;
//   - a cooldown's routing on providers that always fail and never do,
//     where every request and second is worked out by hand below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "relsim/core/billing.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/fallback.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/montecarlo/simulate_time.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "support/models.hpp"

// Named, not anonymous: the unit tests build as unity batches.
namespace fallback_time_sim_test {

using namespace relsim;

constexpr double kZ = 5.0;
constexpr std::int64_t kTasks = 40'000;

struct Point {
  const char* name;
  PolicyKind kind;
  std::int64_t n;
  int s, r, B, after;
  double t_good, t_bad;    // the first provider; 0, 0: a hidden chain of three states
  double t_good2, t_bad2;  // the second
  double shared_good, shared_bad;  // 0, 0: independent providers
  const char* backoff;
  const char* kinds;  // nullptr: the five in-stream kinds
  ChainScope scope;
  bool billed;
};

constexpr auto S = PolicyKind::simple, N = PolicyKind::naive, L = PolicyKind::layered, B = PolicyKind::budgeted;
constexpr auto F = ChainScope::fresh, C = ChainScope::continuous;

const Point kPoints[] = {
    {"simple", S, 4, 0, 2, 0, 1, 60, 20, 40, 10, 0, 0, "sdk", nullptr, F, true},
    {"simple_after_two", S, 3, 0, 3, 0, 2, 30, 30, 100, 5, 0, 0, "list:1,2", nullptr, F, true},
    {"layered_shared", L, 3, 2, 2, 0, 2, 100, 20, 80, 20, 200, 15, "exp:0.5,4,0.5", "http_529=1,cut=1,http_500=1", F,
     true},
    {"naive_hidden_first", N, 2, 2, 1, 0, 1, 0, 0, 50, 10, 0, 0, "sdk", "cut=1,stall=1,http_429=1", F, true},
    {"budgeted", B, 3, 2, 2, 4, 1, 40, 15, 40, 15, 0, 0, "sdk", "http_529=1,cut=1", F, false},
    {"continuous_simple", S, 2, 0, 2, 0, 1, 60, 20, 60, 20, 300, 30, "list:1", nullptr, C, false},
};

TimeModel first_provider(const Point& pt) {
  return TimeModel{
      .chain = pt.t_good > 0.0 ? two_state_time_chain(pt.t_good, pt.t_bad) : test::three_state_time_chain(),
      .scope = pt.scope,
      .request_seconds = 2.0,
      .fault_seconds = parse_fault_seconds("cut=1,http_529=0.2", 0.0, 0.0),
      .think_seconds = 1.0,
      .backoff = parse_backoff(pt.backoff)};
}

Fallback second_provider(const Point& pt) {
  Fallback fb;
  fb.after = pt.after;
  fb.second_time = two_state_time_chain(pt.t_good2, pt.t_bad2);
  if (pt.shared_good > 0.0) fb.shared_time = two_state_time_chain(pt.shared_good, pt.shared_bad);
  fb.kinds = parse_fault_weights("http_503=1,cut=2");
  fb.price_in = 6.0;
  fb.price_out = 30.0;
  return fb;
}

Billing prices() {
  Billing b;
  b.input_tokens = 20000;
  b.output_tokens = 800;
  b.price_in = 3.0;
  b.price_out = 15.0;
  return b;
}

// The mean and standard deviation of a run's cost per task, in dollars, from its tasks by cost.
std::pair<double, double> cost_moments(const SimResult& c) {
  long double n = 0, sum = 0, squares = 0;
  for (const auto* by : {&c.cost_done, &c.cost_failed})
    for (const auto& [nano, tasks] : *by) {
      const long double x = static_cast<long double>(nano) * 1e-9L, k = static_cast<long double>(tasks);
      n += k;
      sum += k * x;
      squares += k * x * x;
    }
  const long double mean = sum / n;
  return {static_cast<double>(mean), static_cast<double>(std::sqrt(std::max(0.0L, squares / n - mean * mean)))};
}

void check_point(const Point& pt) {
  SCOPED_TRACE(pt.name);
  const TimeModel time = first_provider(pt);
  const Policy policy{.n = pt.n, .r = pt.r, .s = pt.s, .B = pt.B, .kind = pt.kind};
  SimConfig config;
  config.tasks = kTasks;
  config.threads = 2;
  config.lanes = 8;
  if (pt.kinds) config.kinds = parse_fault_weights(pt.kinds);
  config.fallback = second_provider(pt);
  if (pt.billed) config.billing = prices();
  ExactOptions eo;
  eo.kinds = config.kinds;
  eo.fallback = config.fallback;
  eo.billing = config.billing;
  const ExactResult e = exact_time(time, policy, eo);
  TimeSimOptions so;
  so.confidence = 0.9999994;  // z = 5
  const TimeSimResult r = simulate_time(time, policy, config, so);
  const SimResult& c = r.counts;
  ASSERT_EQ(c.tasks, kTasks);
  const double tasks = static_cast<double>(c.tasks);
  const double design = pt.scope == F ? 1.0 : c.design_effect();

  const double rate = static_cast<double>(c.successes) / tasks;
  EXPECT_LE(std::abs(rate - e.success), kZ * std::sqrt(e.success * (1.0 - e.success) * design / tasks) + 1e-12)
      << fmt::format("simulated {}, exact {}", rate, e.success);
  EXPECT_GT(e.success, 0.05);
  EXPECT_LT(e.success, 0.995);  // a point where the fallback matters
  EXPECT_GT(c.second_requests, c.tasks / 100) << "few requests reached the second provider";
  EXPECT_TRUE(r.mean_interval.covers(e.mean_seconds))
      << fmt::format("mean seconds [{}, {}], exact {}", r.mean_interval.low, r.mean_interval.high, e.mean_seconds);
  if (pt.scope == F) {
    double m1 = 0.0, m2 = 0.0;
    for (const RequestBin& b : e.requests) {
      m1 += b.probability * static_cast<double>(b.requests);
      m2 += b.probability * static_cast<double>(b.requests * b.requests);
    }
    const double sd = std::sqrt(std::max(0.0, m2 - m1 * m1));
    EXPECT_LE(std::abs(static_cast<double>(c.requests) / tasks - e.mean_requests), kZ * sd / std::sqrt(tasks))
        << "mean requests " << static_cast<double>(c.requests) / tasks << " vs " << e.mean_requests;
  }
  if (pt.billed) {
    ASSERT_TRUE(e.cost.has_value());
    const auto [mean, sd] = cost_moments(c);
    EXPECT_LE(std::abs(mean - e.cost->mean), kZ * sd / std::sqrt(tasks))
        << fmt::format("mean cost {} (sd {}), exact {}", mean, sd, e.cost->mean);
    EXPECT_GT(e.cost->mean, 0.0);
  }
}

TEST(FallbackTimeSim, InsideFiveStandardErrorsOfExactInSeconds) {
  for (const Point& pt : kPoints) check_point(pt);
}

// Every integer total of two runs, equal.
void expect_same_counts(const TimeSimResult& a, const TimeSimResult& b) {
  EXPECT_EQ(a.counts.successes, b.counts.successes);
  EXPECT_EQ(a.counts.requests, b.counts.requests);
  EXPECT_EQ(a.counts.second_requests, b.counts.second_requests);
  EXPECT_EQ(a.counts.faults, b.counts.faults);
  EXPECT_EQ(a.counts.outcomes, b.counts.outcomes);
  EXPECT_EQ(a.counts.done_by_requests, b.counts.done_by_requests);
  EXPECT_EQ(a.counts.cost_done, b.counts.cost_done);
  EXPECT_EQ(a.counts.cost_failed, b.counts.cost_failed);
  EXPECT_EQ(a.total_microseconds, b.total_microseconds);
}

SimConfig small_config(const Point& pt) {
  SimConfig config;
  config.tasks = 5000;
  if (pt.kinds) config.kinds = parse_fault_weights(pt.kinds);
  config.fallback = second_provider(pt);
  config.billing = prices();
  return config;
}

TEST(FallbackTimeSim, SameBytesForAnyThreadCount) {
  const Point& pt = kPoints[2];
  const TimeModel time = first_provider(pt);
  const Policy policy{.n = pt.n, .r = pt.r, .s = pt.s, .B = pt.B, .kind = pt.kind};
  SimConfig config = small_config(pt);
  config.fallback->cooldown = Cooldown{2, 30.0, 20.0};
  config.threads = 1;
  const TimeSimResult one = simulate_time(time, policy, config, {});
  config.threads = 3;
  expect_same_counts(one, simulate_time(time, policy, config, {}));
}

TEST(FallbackTimeSim, ACooldownOfZeroSecondsIsNoCooldown) {
  const Point& pt = kPoints[0];
  const TimeModel time = first_provider(pt);
  const Policy policy{.n = pt.n, .r = pt.r, .kind = pt.kind};
  SimConfig config = small_config(pt);
  const TimeSimResult plain = simulate_time(time, policy, config, {});
  config.fallback->cooldown = Cooldown{1, 60.0, 0.0};
  expect_same_counts(plain, simulate_time(time, policy, config, {}));
  // And a cooldown that lasts changes the run: fewer requests to the first.
  config.fallback->cooldown = Cooldown{1, 60.0, 30.0};
  const TimeSimResult cooled = simulate_time(time, policy, config, {});
  EXPECT_GT(cooled.counts.second_requests, plain.counts.second_requests);
}

// A chain of one state: every request bad, or none.
TimeChain one_state(bool bad) {
  TimeChain c;
  c.generator = Eigen::MatrixXd::Zero(1, 1);
  c.bad = Eigen::VectorXd::Constant(1, bad ? 1.0 : 0.0);
  c.initial = Eigen::RowVectorXd::Ones(1);
  return c;
}

struct Routed {
  std::int64_t requests, second;
  double seconds;
};

// One task of six calls, the simple policy with r = 2: the first provider
// always fails, the second never; each request takes 8 s, 2 s between
// calls, no backoff.
Routed route(int after, std::optional<Cooldown> cooldown) {
  TimeModel time;
  time.chain = one_state(true);
  time.request_seconds = 8.0;
  time.think_seconds = 2.0;
  time.backoff = parse_backoff("none");
  SimConfig config;
  config.tasks = 1;
  config.fallback = Fallback{};
  config.fallback->after = after;
  config.fallback->second_time = one_state(false);
  config.fallback->cooldown = cooldown;
  const TimeSimResult r = simulate_time(time, Policy{.n = 6, .r = 2}, config, {});
  EXPECT_EQ(r.counts.successes, 1);
  return {r.counts.requests, r.counts.second_requests, r.mean_seconds};
}

// Each case worked out by hand: (K, cooldown) -> requests, requests to the
// second provider (always one a call: the one that succeeds), seconds.
struct ByHand {
  const char* why;
  int after;
  std::optional<Cooldown> cooldown;
  std::int64_t requests;
  double seconds;
};

TEST(FallbackTimeSim, ACooldownRoutesAsWorkedOutByHand) {
  const double forever = 1e6;
  const ByHand cases[] = {
      {"no cooldown: each call fails once on the first, [t, t+8], then succeeds on the second, [t+8, t+16]; "
       "6 x 16 + 5 x 2 s",
       1, std::nullopt, 12, 106.0},
      {"one failure cools it for good: call 1 as above, calls 2 to 6 on the second alone", 1,
       Cooldown{1, 60.0, forever}, 7, 16.0 + 5 * 10.0},
      {"two failures within 60 s: calls 1 and 2 fail once each on the first (ending at 8 and 26 s), calls 3 to 6 "
       "skip it",
       1, Cooldown{2, 60.0, forever}, 8, 74.0},
      {"failures 18 s apart, never two within 10 s: no cooldown", 1, Cooldown{2, 10.0, forever}, 12, 106.0},
      {"skipped 15 s after each failure: the one ending at 8 s skips it until 23 (call 2 at 18 s), call 3 at 28 s "
       "fails on it until 51 (call 4 at 46 s), call 5 at 56 s fails on it, call 6 at 74 s skips it; ends at 82",
       1, Cooldown{1, 60.0, 15.0}, 9, 82.0},
      {"inside a call: with K = 2 its second request would go to the first, but one failure has cooled it", 2,
       Cooldown{1, 60.0, forever}, 7, 66.0},
      {"K = 2, no cooldown: two failures a call, 6 x 24 + 5 x 2 s", 2, std::nullopt, 18, 154.0},
      {"K = 2 and two failures to cool it: only call 1 meets the first, [0, 16], then [16, 24]", 2,
       Cooldown{2, 60.0, forever}, 8, 24.0 + 5 * 10.0},
  };
  for (const ByHand& c : cases) {
    SCOPED_TRACE(c.why);
    const Routed r = route(c.after, c.cooldown);
    EXPECT_EQ(r.requests, c.requests);
    EXPECT_EQ(r.second, 6);
    EXPECT_DOUBLE_EQ(r.seconds, c.seconds);
  }
}

TEST(FallbackTimeSim, RefusesACooldownOutsideTheSimulationInSeconds) {
  Fallback fb;
  fb.second.p = 0.1;
  fb.second.q = 0.1;
  fb.cooldown = Cooldown{};
  EXPECT_THROW(validate(fb, Policy{}), InputError);  // in steps
  fb.second_time = two_state_time_chain(10, 10);
  EXPECT_NO_THROW(validate(fb, Policy{}));
  ExactOptions eo;
  eo.fallback = fb;
  TimeModel time;
  time.chain = two_state_time_chain(10, 10);
  EXPECT_THROW(exact_time(time, Policy{}, eo), InputError);  // no exact value
  for (const Cooldown& bad : {Cooldown{0, 60, 5}, Cooldown{1001, 60, 5}, Cooldown{1, 0, 5}, Cooldown{1, 60, -1},
                              Cooldown{1, std::nan(""), 5}}) {
    fb.cooldown = bad;
    EXPECT_THROW(validate(fb, Policy{}), InputError);
  }
}

}  // namespace fallback_time_sim_test
