// relsim tune with a fallback (docs/time.md, relsim tune; docs/model.md,
// Fallback): every schedule of the space, evaluated by tune with its walk
// memo replayed across schedules, equals the exact engine run on its own
// with no memo; a schedule whose calls cannot reach K requests is the same
// as no fallback; and a fallback meets a target no schedule meets alone.
#include <gtest/gtest.h>

#include <cmath>

#include "relsim/core/error.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/sweep/tune.hpp"
#include "support/tune_fixture.hpp"

// Named, not anonymous: the unit tests build as unity batches.
namespace tune_fallback_test {

using namespace relsim;

TuneSpace space() { return test::small_tune_space({parse_backoff("none"), parse_backoff("list:1,2,4")}, 2, 2, {2, 4}); }

TuneConfig config() {
  TuneConfig c = test::priced_tune_config(two_state_time_chain(300.0, 60.0), 4.0, 5, "cut=1,http_529=2", 0.9, 20000, 800);
  Fallback fb;
  fb.after = 2;
  fb.second_time = two_state_time_chain(300.0, 20.0);
  fb.kinds = parse_fault_weights("http_503=1,stall=1");
  fb.price_in = 6.0;
  fb.price_out = 30.0;
  c.fallback = fb;
  return c;
}

// Each schedule is evaluated under two fallbacks in turn (other K, other
// kinds), so a memo recorded for one is offered to the other.
TEST(TuneFallback, EverySchedulesFiguresAreTheExactEnginesOwn) {
  TuneConfig other = config();
  other.fallback->after = 1;
  other.fallback->kinds = parse_fault_weights("cut=1");
  int falling_back = 0, never = 0;
  for (const TuneSchedule &s :
       tune_schedules(space(), config().n, config().kinds))
    for (const TuneConfig &c : {config(), other}) {
      const TunePoint p = evaluate_schedule(c, s, false);
      std::optional<Fallback> fb = c.fallback;
      const int most = s.policy.max_requests_per_call();
      if (fb->after >= most) {
        fb.reset(); // its calls never reach K: no fallback
        ++never;
      } else {
        ++falling_back;
      }
      const ExactResult e = test::exact_alone(c, s.backoff, s.policy, fb);
      EXPECT_NEAR(p.success, e.success, 1e-14) << describe(s.policy);
      EXPECT_NEAR(p.mean_requests, e.mean_requests, 1e-12 * e.mean_requests)
          << describe(s.policy);
      EXPECT_NEAR(p.mean_seconds, e.mean_seconds, 1e-12 * e.mean_seconds)
          << describe(s.policy);
      ASSERT_TRUE(e.cost.has_value());
      EXPECT_NEAR(p.cost_mean, e.cost->mean, 1e-12 * e.cost->mean)
          << describe(s.policy);
    }
  EXPECT_GT(falling_back, 10);
  EXPECT_GT(never,
            0); // s = r = 0 and B = 2 send at most 1 or 2 requests a call
  RecordProperty("falling_back", falling_back);
}

// Outages of a minute against retries that wait at most 4 s: alone no
// schedule of the space reaches 0.9; with the second provider some do.
TEST(TuneFallback, AFallbackMeetsATargetTheSpaceMissesAlone) {
  TuneConfig with = config();
  TuneConfig without = with;
  without.fallback.reset();
  const TuneResult a = run_tune(space(), with), b = run_tune(space(), without);
  ASSERT_FALSE(a.front.empty());
  EXPECT_EQ(b.meeting, 0);
  EXPECT_GT(a.meeting, 5);
  EXPECT_GE(a.front[0].success, 0.9);
  RecordProperty("meeting_with", static_cast<int>(a.meeting));
  RecordProperty("meeting_without", static_cast<int>(b.meeting));
}

TEST(TuneFallback, RefusesAFallbackInStepsACooldownAndAnOutOfRangeK) {
  TuneConfig c = config();
  c.fallback->cooldown = Cooldown{};
  EXPECT_THROW(run_tune(space(), c), InputError);
  c = config();
  c.fallback->second_time.reset();
  c.fallback->second.p = 0.1;
  c.fallback->second.q = 0.1;
  EXPECT_THROW(run_tune(space(), c), InputError);
  c = config();
  c.fallback->after = kMaxRequestsPerCall + 1;
  EXPECT_THROW(run_tune(space(), c), InputError);
  c.fallback->after = 0;
  EXPECT_THROW(run_tune(space(), c), InputError);
}

} // namespace tune_fallback_test
