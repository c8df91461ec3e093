// relsim tune (sweep/tune.hpp) against a brute force written here: every
// raw schedule of a small space (no equivalence folding) through exact_time
// directly, and the Pareto front checked point by point with a dominance
// test of this file's own. Also: anchors equal exact_time called directly,
// the same bytes for one and two threads, the 10^6-schedule guard, and a
// target outside (0, 1) refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/sweep/tune.hpp"
#include "relsim/sweep/tune_report.hpp"

namespace relsim {
namespace {

// Fixed schedules: lists with the mean waits of the jittered exp ones, which
// (exp(-lambda t) being convex) escape short outages more often for the same
// mean wait and so dominate some of them.
constexpr const char* kFixed[] = {"none",        "list:1,3",         "list:1,2,4",          "list:1.5,3",
                                  "list:1.5,6", "list:0.375,0.75", "list:0.375,0.75,1.5"};

// The small space, written out by hand below as raw schedules.
TuneSpace small_space() {
  TuneSpace space;
  space.fixed.clear();
  space.s_max = 2;
  space.r_max = 2;
  space.budgets = {2, 3, 4};
  space.bases = {0.5, 2.0};
  space.caps = {4.0, 16.0};
  space.jitters = {0.0, 0.5};
  for (const char* spec : kFixed) space.fixed.push_back(parse_backoff(spec));
  return space;
}

TuneConfig small_config() {
  TuneConfig c;
  c.time.chain = two_state_time_chain(100.0, 3.0);
  c.time.request_seconds = 1.0;
  c.time.think_seconds = 0.5;
  c.n = 3;
  c.kinds = parse_fault_weights("cut=1,http_529=1");
  c.p99_tasks = 500;
  return c;
}

struct Raw {
  Policy policy;
  Backoff backoff;
  double success = 0.0, mean_requests = 0.0, mean_seconds = 0.0;
};

// Every (policy, s, r, B, backoff) of small_space(), each through exact_time.
std::vector<Raw> brute_force_tune(const TuneConfig& c) {
  std::vector<Backoff> backoffs;
  for (const char* spec : kFixed) backoffs.push_back(parse_backoff(spec));
  for (const char* spec : {"exp:0.5,4,0", "exp:0.5,4,0.5", "exp:0.5,16,0", "exp:0.5,16,0.5", "exp:2,4,0",
                           "exp:2,4,0.5", "exp:2,16,0", "exp:2,16,0.5"})
    backoffs.push_back(parse_backoff(spec));
  std::vector<Policy> policies;
  for (int s = 0; s <= 2; ++s)
    for (int r = 0; r <= 2; ++r) {
      policies.push_back(Policy{c.n, r, s, 0, PolicyKind::layered});
      for (const int b : {2, 3, 4}) policies.push_back(Policy{c.n, r, s, b, PolicyKind::budgeted});
    }
  std::vector<Raw> out;
  ExactOptions options;
  options.kinds = c.kinds;
  options.distribution = false;
  for (const Policy& p : policies)
    for (const Backoff& b : backoffs) {
      TimeModel time = c.time;
      time.backoff = b;
      const ExactResult r = exact_time(time, p, options);
      out.push_back({p, b, r.success, r.mean_requests, r.mean_seconds});
    }
  return out;
}

// a better than or equal to b in every dimension, up to rounding (1e-12
// relative): the brute force's own test, not tune's.
bool at_least_as_good(double a_success, double a_requests, double a_seconds, const Raw& b) {
  const auto le = [](double x, double y) { return x <= y + 1e-12 * std::max(1.0, std::abs(y)); };
  return le(b.success, a_success) && le(a_requests, b.mean_requests) && le(a_seconds, b.mean_seconds);
}

bool strictly_better(const Raw& a, const TunePoint& b) {
  const auto lt = [](double x, double y) { return x < y - 1e-12 * std::max(1.0, std::abs(y)); };
  const Raw bb{b.schedule.policy, b.schedule.backoff, b.success, b.mean_requests, b.mean_seconds};
  return at_least_as_good(a.success, a.mean_requests, a.mean_seconds, bb) &&
         (lt(b.success, a.success) || lt(a.mean_requests, b.mean_requests) || lt(a.mean_seconds, b.mean_seconds));
}

// The raw schedules' median success: a target some meet and some miss.
double median_success(const std::vector<Raw>& raw) {
  std::vector<double> s;
  for (const Raw& r : raw) s.push_back(r.success);
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

TEST(Tune, FrontIsTheParetoFrontOfABruteForceOverTheRawSpace) {
  TuneConfig c = small_config();
  const std::vector<Raw> raw = brute_force_tune(c);
  ASSERT_EQ(raw.size(), 9u * 4u * 15u);
  c.target = median_success(raw);
  ASSERT_GT(c.target, 0.0);
  ASSERT_LT(c.target, 1.0);
  const TuneResult result = run_tune(small_space(), c);
  std::vector<Raw> meeting;
  for (const Raw& r : raw)
    if (r.success >= c.target) meeting.push_back(r);
  ASSERT_GT(meeting.size(), 1u);
  ASSERT_LT(meeting.size(), raw.size());
  // The space is one where dominance removes schedules, so a front that
  // kept dominated ones would fail below.
  const auto dominated = std::count_if(meeting.begin(), meeting.end(), [&](const Raw& x) {
    TunePoint px;
    px.success = x.success;
    px.mean_requests = x.mean_requests;
    px.mean_seconds = x.mean_seconds;
    return std::any_of(meeting.begin(), meeting.end(), [&](const Raw& y) { return strictly_better(y, px); });
  });
  ASSERT_GT(dominated, 10);
  ASSERT_FALSE(result.front.empty());
  for (const TunePoint& f : result.front) {
    EXPECT_GE(f.success, c.target);
    EXPECT_TRUE(f.meets_target);
    for (const Raw& r : meeting)
      EXPECT_FALSE(strictly_better(r, f)) << to_string(f.schedule.backoff) << " s=" << f.schedule.policy.s
                                          << " is dominated by " << to_string(r.backoff) << " s=" << r.policy.s
                                          << " r=" << r.policy.r;
  }
  // Complete: every raw schedule meeting the target is matched or beaten by a front member.
  for (const Raw& r : meeting) {
    const bool covered = std::any_of(result.front.begin(), result.front.end(), [&](const TunePoint& f) {
      return at_least_as_good(f.success, f.mean_requests, f.mean_seconds, r);
    });
    EXPECT_TRUE(covered) << describe(r.policy) << " " << to_string(r.backoff);
  }
  // Counts are of the folded space: fewer, never more, than the raw ones.
  EXPECT_GT(result.meeting, 0);
  EXPECT_LE(result.meeting, static_cast<std::int64_t>(meeting.size()));
  EXPECT_LT(result.schedules, static_cast<std::int64_t>(raw.size()));
}

TEST(Tune, FrontIsSortedByTheObjectiveAndItsFirstIsTheBest) {
  TuneConfig c = small_config();
  c.target = median_success(brute_force_tune(c));
  for (const auto objective : {TuneObjective::requests, TuneObjective::mean_seconds}) {
    c.objective = objective;
    const TuneResult result = run_tune(small_space(), c);
    ASSERT_FALSE(result.front.empty());
    for (std::size_t i = 1; i < result.front.size(); ++i) {
      const TunePoint& a = result.front[i - 1];
      const TunePoint& b = result.front[i];
      if (objective == TuneObjective::requests) EXPECT_LE(a.mean_requests, b.mean_requests);
      else EXPECT_LE(a.mean_seconds, b.mean_seconds);
    }
  }
}

TEST(Tune, AnchorsEqualExactTimeCalledDirectly) {
  TuneConfig c = small_config();
  c.target = 0.5;
  const TuneResult result = run_tune(small_space(), c);
  ASSERT_EQ(result.anchors.size(), 3u);
  ExactOptions options;
  options.kinds = c.kinds;
  options.distribution = false;
  const auto check = [&](const TuneAnchor& a, PolicyKind kind, int s, int r, int B, const std::string& backoff) {
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.point.schedule.policy.kind, kind);
    EXPECT_EQ(a.point.schedule.policy.s, s);
    EXPECT_EQ(a.point.schedule.policy.r, r);
    if (kind == PolicyKind::budgeted) { EXPECT_EQ(a.point.schedule.policy.B, B); }
    EXPECT_EQ(to_string(a.point.schedule.backoff), backoff);
    TimeModel time = c.time;
    time.backoff = parse_backoff(backoff);
    const Policy p{c.n, r, s, B, kind};
    const ExactResult direct = exact_time(time, p, options);
    EXPECT_DOUBLE_EQ(a.point.success, direct.success);
    EXPECT_DOUBLE_EQ(a.point.mean_requests, direct.mean_requests);
    EXPECT_DOUBLE_EQ(a.point.mean_seconds, direct.mean_seconds);
    EXPECT_EQ(a.point.meets_target, direct.success >= c.target);
    // Jittered schedules: p99 from the seeded simulation, inside its own interval.
    EXPECT_EQ(a.point.p99_method, P99Method::simulated);
    ASSERT_TRUE(a.point.p99_seconds && a.point.p99_interval);
    EXPECT_TRUE(a.point.p99_interval->covers(*a.point.p99_seconds));
  };
  check(result.anchors[0], PolicyKind::layered, 2, 0, 0, "sdk");
  check(result.anchors[1], PolicyKind::budgeted, 9, 9, 10, "sdk");
  check(result.anchors[2], PolicyKind::budgeted, 2, 2, 3, "exp:0.1,20,1");
}

TEST(Tune, ExactP99OfTheFrontEqualsTheUnprunedDistribution) {
  TuneConfig c = small_config();
  c.target = median_success(brute_force_tune(c));
  const TuneResult result = run_tune(small_space(), c);
  int checked = 0;
  for (const TunePoint& f : result.front) {
    if (f.p99_method != P99Method::exact) continue;
    TimeModel time = c.time;
    time.backoff = f.schedule.backoff;
    ExactOptions full;
    full.kinds = c.kinds;
    const ExactResult r = exact_time(time, f.schedule.policy, full);
    ASSERT_TRUE(r.seconds_complete);
    ASSERT_TRUE(f.p99_seconds);
    EXPECT_EQ(*f.p99_seconds, r.seconds_quantiles.p99) << to_string(f.schedule.backoff);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(Tune, SameBytesForOneAndTwoThreads) {
  TuneConfig c = small_config();
  c.target = median_success(brute_force_tune(c));
  c.objective = TuneObjective::p99_seconds;  // p99 for every schedule meeting the target
  const TuneSpace space = small_space();
  c.threads = 1;
  const std::string one = dump_json(tune_json(run_tune(space, c), space, c, Json::object()));
  c.threads = 2;
  const std::string two = dump_json(tune_json(run_tune(space, c), space, c, Json::object()));
  EXPECT_EQ(one, two);
  EXPECT_EQ(tune_csv(run_tune(space, c)), tune_csv(run_tune(space, c)));
}

TEST(Tune, FoldsLayersNoKindReaches) {
  const TuneSpace space;
  for (const TuneSchedule& s : tune_schedules(space, 1, FaultWeights::in_stream_uniform())) {
    EXPECT_EQ(s.policy.s, 0);
    // Budgeted with the stream layer alone is layered with r = min(r, B - 1).
    EXPECT_EQ(s.policy.kind, PolicyKind::layered);
  }
  for (const TuneSchedule& s : tune_schedules(space, 1, parse_fault_weights("http_529=1"))) EXPECT_EQ(s.policy.r, 0);
  const FaultWeights mixed = parse_fault_weights("cut=1,http_529=1");
  EXPECT_EQ(count_tune_schedules(space, mixed), static_cast<std::int64_t>(tune_schedules(space, 1, mixed).size()));
}

TEST(Tune, RefusesASpaceOverAMillionSchedulesWithoutForce) {
  TuneConfig c = small_config();
  c.target = 0.9;
  TuneSpace space;
  space.policies = {PolicyKind::layered};
  space.s_max = 100;
  space.r_max = 98;  // (s + 1)(r + 1) = 9999 requests per call at most
  space.bases.clear();
  for (int i = 1; i <= 200; ++i) space.bases.push_back(0.01 * i);
  space.caps = {1000.0};
  space.jitters = {0.0};
  const std::int64_t count = count_tune_schedules(space, c.kinds);
  EXPECT_GT(count, kMaxTuneSchedules);
  try {
    run_tune(space, c);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(count)), std::string::npos) << e.what();
  }
}

TEST(Tune, RefusesATargetOutsideZeroOne) {
  TuneConfig c = small_config();
  for (const double bad : {0.0, 1.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    c.target = bad;
    EXPECT_THROW(run_tune(small_space(), c), InputError) << bad;
  }
  c.target = 0.999999;
  EXPECT_NO_THROW(run_tune(small_space(), c));
}

TEST(Tune, RefusesAnInvalidSpace) {
  const TuneConfig c = small_config();
  TuneSpace space = small_space();
  space.policies = {PolicyKind::naive};
  EXPECT_THROW(count_tune_schedules(space, c.kinds), InputError);
  space = small_space();
  space.jitters = {1.5};
  EXPECT_THROW(count_tune_schedules(space, c.kinds), InputError);
  space = small_space();
  space.fixed = {parse_backoff("list:1,2")};
  space.fixed[0].list[1] = -1.0;
  EXPECT_THROW(count_tune_schedules(space, c.kinds), InputError);
  space = small_space();
  space.s_max = 100;
  space.r_max = 100;
  EXPECT_THROW(count_tune_schedules(space, c.kinds), InputError);
}

}  // namespace
}  // namespace relsim
