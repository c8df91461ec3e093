// The Monte Carlo in seconds against the exact engine in seconds on fixed
// points (issue 15, Proof: simulated rates inside their 99.99% intervals on
// 20 fixed points). The two share the time model's rules (wait_before,
// seconds_of) and the policy's (react), nothing else: the simulator draws the
// chain's sojourns and jumps from the generator, the exact engine multiplies
// exp(Q t) and its jitter averages.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/montecarlo/simulate_time.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

constexpr double kExactConfidence = 0.9999;
constexpr double kZ = 3.8906;  // the normal quantile at 1 - 0.0001 / 2
constexpr std::int64_t kTasks = 200'000;

struct Point {
  const char* name;
  PolicyKind kind;
  std::int64_t n;
  int s, r, B;
  double t_good, t_bad;  // 0, 0: the three-state chain below
  const char* backoff;
  double request, think;
  const char* kinds;          // nullptr: the five in-stream kinds
  const char* fault_seconds;  // nullptr: every fault takes request seconds
  double retry_after;
  ChainScope scope;
};

constexpr auto S = PolicyKind::simple, N = PolicyKind::naive, L = PolicyKind::layered, B = PolicyKind::budgeted;
constexpr auto F = ChainScope::fresh, C = ChainScope::continuous;

const Point kPoints[] = {
    {"simple_sdk", S, 1, 0, 2, 0, 30, 10, "sdk", 1.0, 0, nullptr, nullptr, 0, F},
    {"simple_list_think", S, 3, 0, 1, 0, 60, 20, "list:1,5", 0.5, 2, nullptr, nullptr, 0, F},
    {"simple_no_time", S, 2, 0, 3, 0, 10, 10, "none", 0.0, 0, nullptr, nullptr, 0, F},
    {"simple_full_jitter", S, 5, 0, 2, 0, 20, 5, "exp:1,4,1", 0.3, 1, nullptr, nullptr, 0, F},
    {"simple_long_outage", S, 1, 0, 5, 0, 3600, 120, "sdk", 0.5, 0, nullptr, nullptr, 0, F},
    {"simple_twenty_calls", S, 20, 0, 2, 0, 3600, 120, "sdk", 1.0, 0.1, nullptr, nullptr, 0, F},
    {"simple_slow_faults", S, 2, 0, 1, 0, 20, 20, "list:2", 1.0, 0, nullptr, "cut=5,stall=3", 0, F},
    {"simple_three_states", S, 2, 0, 2, 0, 0, 0, "list:1,2", 0.5, 0.5, nullptr, nullptr, 0, F},
    {"layered_sdk", L, 2, 2, 1, 0, 60, 20, "sdk", 1.0, 0, "cut=1,overloaded=1,http_529=1,http_500=1", nullptr, 0, F},
    {"layered_retry_after", L, 2, 2, 2, 0, 30, 10, "sdk", 0.5, 0, "http_429=1,http_529=1,overloaded=1,cut=1",
     nullptr, 2, F},
    {"layered_slow_headers", L, 1, 3, 1, 0, 60, 30, "list:0.5,1,2", 0.5, 0, "http_500=1,reset=1,slow_headers=1",
     "slow_headers=10", 0, F},
    {"layered_429_only", L, 4, 2, 2, 0, 600, 60, "sdk", 1.0, 0, "http_429=1", nullptr, 5, F},
    {"layered_http_400", L, 2, 2, 1, 0, 30, 10, "exp:0.5,8,0.5", 1.0, 0.5, "cut=3,http_503=3,http_400=1",
     "http_400=0.2", 0, F},
    {"layered_three_states", L, 1, 2, 2, 0, 0, 0, "sdk", 0.5, 0, "http_529=1,reset=1,cut=1", nullptr, 0, F},
    {"layered_retry_after_ignored", L, 2, 3, 1, 0, 20, 10, "list:1,2,3", 0.5, 0, "http_429=1,stall=1", nullptr, 70,
     F},
    {"naive_sdk", N, 2, 2, 2, 0, 120, 20, "sdk", 1.0, 0, "cut=1,stall=1,overloaded=1,http_429=1", "stall=30", 3, F},
    {"naive_none", N, 1, 1, 1, 0, 10, 5, "none", 2.0, 0, nullptr, nullptr, 0, F},
    {"naive_timeouts", N, 3, 2, 1, 0, 60, 15, "exp:2,16,0.5", 0.5, 3, "slow_headers=1,stall=1,cut=1",
     "slow_headers=10,stall=20", 0, F},
    {"budgeted_sdk", B, 2, 2, 2, 4, 30, 10, "sdk", 0.5, 0, "http_529=1,cut=1", nullptr, 0, F},
    {"budgeted_list_think", B, 3, 1, 3, 3, 100, 10, "list:1,2", 1.0, 5, "http_500=1,malformed=1", nullptr, 0, F},
    // The content faults and stall_first: a naive loop takes the three as
    // answers (partial_done), a layered one retries all but the duplicate.
    {"naive_content", N, 2, 2, 2, 0, 60, 20, "sdk", 1.0, 0.5,
     "max_tokens=1,bad_tool_args=1,duplicate_event=1,cut=1,stall_first=1", "stall_first=20", 0, F},
    {"layered_content", L, 2, 2, 2, 0, 30, 10, "list:1,2", 0.5, 0,
     "max_tokens=2,duplicate_event=1,http_529=1,stall_first=1", "stall_first=5", 0, F},
    {"continuous_naive_content", N, 2, 1, 1, 0, 60, 20, "sdk", 1.0, 0, "max_tokens=1,cut=1", nullptr, 0, C},
    // The continuous scope: lanes start from the stationary law, not the
    // exact engine's law at a task's first request, so many tasks per lane.
    {"continuous_simple", S, 2, 0, 2, 0, 60, 20, "sdk", 1.0, 2, nullptr, nullptr, 0, C},
    {"continuous_layered", L, 2, 2, 1, 0, 30, 10, "list:1,2", 0.5, 0, "http_503=1,cut=1", nullptr, 0, C},
};

TimeModel point_time_model(const Point& pt) {
  TimeModel t;
  if (pt.t_good > 0.0) {
    t.chain = two_state_time_chain(pt.t_good, pt.t_bad);
  } else {
    t.chain = test::three_state_time_chain();
  }
  t.scope = pt.scope;
  t.backoff = parse_backoff(pt.backoff);
  t.request_seconds = pt.request;
  t.think_seconds = pt.think;
  if (pt.fault_seconds) t.fault_seconds = parse_fault_seconds(pt.fault_seconds, 0.0, 0.0);
  t.retry_after = pt.retry_after;
  return t;
}

// The exact mean and standard deviation of requests per task.
std::pair<double, double> request_moments(const ExactResult& e) {
  double m1 = 0.0, m2 = 0.0;
  for (const RequestBin& b : e.requests) {
    const auto x = static_cast<double>(b.requests);
    m1 += b.probability * x;
    m2 += b.probability * x * x;
  }
  return {m1, std::sqrt(std::max(0.0, m2 - m1 * m1))};
}

void check_point(const Point& pt) {
  SCOPED_TRACE(pt.name);
  const TimeModel time = point_time_model(pt);
  const Policy policy{.n = pt.n, .r = pt.r, .s = pt.s, .B = pt.B, .kind = pt.kind};
  SimConfig config;
  config.tasks = kTasks;
  config.threads = 2;
  config.lanes = 16;
  if (pt.kinds) config.kinds = parse_fault_weights(pt.kinds);
  ExactOptions eo;
  eo.kinds = config.kinds;
  eo.max_distribution_work = 3e7;
  const ExactResult e = exact_time(time, policy, eo);
  TimeSimOptions so;
  so.confidence = kExactConfidence;
  const TimeSimResult r = simulate_time(time, policy, config, so);
  const SimResult& c = r.counts;
  const bool fresh = pt.scope == ChainScope::fresh;
  const double design = fresh ? 1.0 : c.design_effect();

  const Interval success = effective_interval(IntervalKind::wilson, c.successes, c.tasks, kExactConfidence, design);
  EXPECT_TRUE(success.covers(e.success)) << fmt::format("simulated {} of {} [{}, {}], exact {}", c.successes, c.tasks,
                                                        success.low, success.high, e.success);
  for (int k = 1; k < kOutcomeClasses; ++k) {
    const auto count = c.outcomes[static_cast<std::size_t>(k)];
    const double exact = e.outcomes[static_cast<std::size_t>(k)];
    if (count == 0 && exact < 1e-6) continue;
    EXPECT_TRUE(effective_interval(IntervalKind::wilson, count, c.tasks, kExactConfidence, design).covers(exact))
        << outcome_class(k).name() << ": simulated " << count << ", exact " << exact;
  }
  EXPECT_TRUE(r.mean_interval.covers(e.mean_seconds))
      << fmt::format("mean seconds [{}, {}], exact {}", r.mean_interval.low, r.mean_interval.high, e.mean_seconds);
  if (fresh && e.distribution_complete) {
    const auto [mean, sd] = request_moments(e);
    EXPECT_NEAR(mean, e.mean_requests, 1e-9 * (1.0 + mean));
    const double simulated = static_cast<double>(c.requests) / static_cast<double>(c.tasks);
    EXPECT_LE(std::abs(simulated - mean), kZ * sd / std::sqrt(static_cast<double>(c.tasks)) + 1e-12)
        << "mean requests " << simulated << " vs " << mean;
  }
  if (fresh && e.seconds_complete) {
    // The exact engine rounds each step to the microsecond, the simulator
    // each task's total: allow a few microseconds.
    const double exact[3] = {e.seconds_quantiles.p50, e.seconds_quantiles.p90, e.seconds_quantiles.p99};
    for (int i = 0; i < 3; ++i) {
      const Interval& q = r.quantiles[static_cast<std::size_t>(i)].interval;
      EXPECT_TRUE(q.low - 5e-6 <= exact[i] && exact[i] <= q.high + 5e-6)
          << fmt::format("p{} [{}, {}], exact {}", r.quantiles[static_cast<std::size_t>(i)].percent, q.low, q.high,
                         exact[i]);
    }
  }
}

TEST(SimulateTimeExact, InsideTheIntervalsOfExactTimeOnFixedPoints) {
  for (const Point& pt : kPoints) check_point(pt);
}

}  // namespace
}  // namespace relsim
