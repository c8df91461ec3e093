// relsim tune with prices (docs/time.md, relsim tune; docs/model.md, Cost):
// every front member's mean cost is the exact engine's for its schedule,
// the cost is a dimension of the front, and the cost objective recommends
// the cheapest schedule meeting the target, found here by evaluating every
// schedule of the space on its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "relsim/core/error.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/sweep/tune.hpp"

namespace {

using namespace relsim;

TuneSpace space() {
  TuneSpace s;
  s.fixed = {parse_backoff("none"), parse_backoff("list:1,2,4"), parse_backoff("list:5")};
  s.s_max = 3;
  s.r_max = 2;
  s.budgets = {2, 3, 4};
  s.bases = {0.5};
  s.caps = {8.0};
  s.jitters = {0.0};
  return s;
}

TuneConfig config() {
  TuneConfig c;
  c.time.chain = two_state_time_chain(120.0, 8.0);
  c.time.request_seconds = 2.0;
  c.n = 4;
  c.kinds = parse_fault_weights("cut=1,http_529=2,stall=1");
  c.target = 0.97;
  c.p99_tasks = 0;
  Billing b;
  b.input_tokens = 30000;
  b.output_tokens = 1200;
  b.price_in = 3.0;
  b.price_out = 15.0;
  c.billing = b;
  return c;
}

TEST(TuneCost, FrontCostsAreTheExactEnginesAndTheCostObjectivePicksTheCheapest) {
  TuneConfig c = config();
  c.objective = TuneObjective::cost;
  const TuneResult result = run_tune(space(), c);
  ASSERT_FALSE(result.front.empty());
  EXPECT_NE(std::find(result.dimensions.begin(), result.dimensions.end(), "cost_mean"), result.dimensions.end());
  for (const TunePoint& p : result.front) {
    TimeModel time = c.time;
    time.backoff = p.schedule.backoff;
    ExactOptions options;
    options.kinds = c.kinds;
    options.billing = c.billing;
    const ExactResult r = exact_time(time, p.schedule.policy, options);
    ASSERT_TRUE(r.cost.has_value());
    EXPECT_NEAR(p.cost_mean, r.cost->mean, 1e-15 * r.cost->mean);
  }
  // The cheapest of every schedule meeting the target, each evaluated alone.
  double cheapest = std::numeric_limits<double>::infinity();
  int meeting = 0;
  for (const TuneSchedule& s : tune_schedules(space(), c.n, c.kinds)) {
    const TunePoint p = evaluate_schedule(c, s, false);
    if (!p.meets_target) continue;
    ++meeting;
    cheapest = std::min(cheapest, p.cost_mean);
  }
  ASSERT_GT(meeting, 1);
  EXPECT_EQ(result.front[0].cost_mean, cheapest);
  for (const TunePoint& p : result.front) EXPECT_GE(p.cost_mean, result.front[0].cost_mean);
  RecordProperty("meeting", meeting);
  RecordProperty("front", static_cast<int>(result.front.size()));
}

TEST(TuneCost, WithoutPricesNoCostAndTheCostObjectiveIsRefused) {
  TuneConfig c = config();
  c.billing.reset();
  const TuneResult result = run_tune(space(), c);
  for (const TunePoint& p : result.front) EXPECT_TRUE(std::isnan(p.cost_mean));
  EXPECT_EQ(std::find(result.dimensions.begin(), result.dimensions.end(), "cost_mean"), result.dimensions.end());
  c.objective = TuneObjective::cost;
  EXPECT_THROW(run_tune(space(), c), InputError);
  EXPECT_EQ(parse_tune_objective("cost"), TuneObjective::cost);
}

}  // namespace
