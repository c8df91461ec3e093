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
#include "support/tune_fixture.hpp"

// Named, not anonymous: the unit tests build as unity batches.
namespace tune_cost_test {

using namespace relsim;

TuneSpace space() {
  return test::small_tune_space({parse_backoff("none"), parse_backoff("list:1,2,4"), parse_backoff("list:5")}, 3, 2,
                                {2, 3, 4});
}

TuneConfig config() {
  return test::priced_tune_config(two_state_time_chain(120.0, 8.0), 2.0, 4, "cut=1,http_529=2,stall=1", 0.97, 30000,
                                  1200);
}

TEST(TuneCost, FrontCostsAreTheExactEnginesAndTheCostObjectivePicksTheCheapest) {
  TuneConfig c = config();
  c.objective = TuneObjective::cost;
  const TuneResult result = run_tune(space(), c);
  ASSERT_FALSE(result.front.empty());
  EXPECT_NE(std::find(result.dimensions.begin(), result.dimensions.end(), "cost_mean"), result.dimensions.end());
  for (const TunePoint& p : result.front) {
    const ExactResult r = test::exact_alone(c, p.schedule.backoff, p.schedule.policy, std::nullopt);
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

}  // namespace tune_cost_test
