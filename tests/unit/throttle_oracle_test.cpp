// The oracle with a retry throttle (oracle.hpp, run_oracle with a throttle):
// tasks in plan order, each tenant's throttle told of every request and
// asked before every retry. The counts are worked out by hand below from
// the throttles' documented rules (docs/fleet.md, Throttles).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "relsim/fleet/scenario.hpp"
#include "relsim/live/live.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "support/input_error.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

// Requests per task, and which tasks the throttle ended.
struct Counts {
  std::vector<std::int64_t> requests;
  std::vector<bool> throttled;
  std::int64_t total = 0, ended = 0;
};

Counts counts(const OracleResult& o) {
  Counts c;
  for (const Prediction& p : o.tasks) {
    c.requests.push_back(p.requests);
    c.throttled.push_back(p.throttled);
  }
  c.total = o.requests;
  c.ended = o.throttled;
  return c;
}

TEST(ThrottleOracle, GrpcStopsRetryingOnceHalfItsTokensAreGone) {
  // grpc:10,0.1, every request overloaded, r = 3. Task 0: four failures take
  // the tokens 10 -> 6, each retry allowed (9, 8, 7 > 5). Task 1: its first
  // failure leaves 5, not above 5: denied. Tasks 2-4 likewise (4, 3, 2).
  const Policy policy{.n = 1, .r = 3, .kind = PolicyKind::simple};
  const Plan plan = scripted_plan(5, FaultKind::overloaded, Times::always, policy);
  const Counts c = counts(run_oracle(policy, plan, live_timing(), fleet::parse_throttle("grpc:10,0.1"), 0));
  EXPECT_EQ(c.requests, (std::vector<std::int64_t>{4, 1, 1, 1, 1}));
  EXPECT_EQ(c.throttled, (std::vector<bool>{false, true, true, true, true}));
  EXPECT_EQ(c.total, 8);
  EXPECT_EQ(c.ended, 4);
  const OracleResult o = run_oracle(policy, plan, live_timing(), fleet::parse_throttle("grpc:10,0.1"), 0);
  EXPECT_EQ(o.tasks[1].outcome.name(), "env_error:overloaded");
}

TEST(ThrottleOracle, GrpcSuccessesRefundATenth) {
  // The first request of each task fails, the retry is good: a task costs
  // 1 - 0.1 = 0.9 tokens. Task k (from 1) fails down to 9 - 0.9 (k - 1),
  // allowed while above 5: tasks 1..5; task 6 falls to 4.5 and is denied,
  // and so are 7 and 8.
  const Policy policy{.n = 1, .r = 3, .kind = PolicyKind::simple};
  const Plan plan = scripted_plan(8, FaultKind::overloaded, Times::once, policy);
  const Counts c = counts(run_oracle(policy, plan, live_timing(), fleet::parse_throttle("grpc:10,0.1"), 0));
  EXPECT_EQ(c.requests, (std::vector<std::int64_t>{2, 2, 2, 2, 2, 1, 1, 1}));
  EXPECT_EQ(c.total, 13);
  EXPECT_EQ(c.ended, 3);
}

TEST(ThrottleOracle, AwsQuotaPaysFiveARetryUntilItCannot) {
  // 500 tokens, 5 per retry, nothing back from failures: 33 tasks of three
  // retries take 495; task 33 (0-based) pays its first retry with the last
  // 5 and is denied its second; tasks 34 and 35 are denied their first.
  const Policy policy{.n = 1, .r = 3, .kind = PolicyKind::simple};
  const Plan plan = scripted_plan(36, FaultKind::overloaded, Times::always, policy);
  const Counts c = counts(run_oracle(policy, plan, live_timing(), fleet::parse_throttle("aws"), 0));
  EXPECT_EQ(c.total, 33 * 4 + 2 + 1 + 1);
  EXPECT_EQ(c.requests[33], 2);
  EXPECT_EQ(c.ended, 3);
}

TEST(ThrottleOracle, AwsTimeoutsCostTen) {
  // A stall is a timeout: 10 a retry, so 16 tasks of three retries take 480,
  // task 16 pays two retries with the last 20.
  const Policy policy{.n = 1, .r = 3, .kind = PolicyKind::simple};
  const Plan plan = scripted_plan(18, FaultKind::stall, Times::always, policy);
  const Counts c = counts(run_oracle(policy, plan, live_timing(), fleet::parse_throttle("aws"), 0));
  EXPECT_EQ(c.requests[15], 4);
  EXPECT_EQ(c.requests[16], 3);
  EXPECT_EQ(c.requests[17], 1);
  EXPECT_EQ(c.ended, 2);
}

TEST(ThrottleOracle, ABudgetWithNoMinimumAllowsNoSequentialRetry) {
  // One task at a time: when a retry is asked for, nothing is in flight, so
  // the budget is max(0, 0.2 x 0) = 0 retries.
  const Policy policy{.n = 1, .r = 3, .kind = PolicyKind::simple};
  const Plan plan = scripted_plan(5, FaultKind::overloaded, Times::always, policy);
  const Counts c = counts(run_oracle(policy, plan, live_timing(), fleet::parse_throttle("budget:0.2,0"), 0));
  EXPECT_EQ(c.total, 5);
  EXPECT_EQ(c.ended, 5);
  // MIN 1 lets every retry through.
  EXPECT_EQ(run_oracle(policy, plan, live_timing(), fleet::parse_throttle("budget:0.2,1"), 0).requests, 20);
}

TEST(ThrottleOracle, EachTenantHasItsOwnThrottle) {
  // Two tenants alternate: each sees the one-tenant sequence at half speed.
  const Policy policy{.n = 1, .r = 3, .kind = PolicyKind::simple};
  const Plan plan = scripted_plan(6, FaultKind::overloaded, Times::always, policy);
  const Counts c = counts(run_oracle(policy, plan, live_timing(), fleet::parse_throttle("grpc:10,0.1"), 2));
  EXPECT_EQ(c.requests, (std::vector<std::int64_t>{4, 4, 1, 1, 1, 1}));
  EXPECT_NE(test::input_error([&] {
              run_oracle(policy, plan, live_timing(), fleet::parse_throttle("aws"), -1);
            }).find("tenants = -1"),
            std::string::npos);
}

TEST(ThrottleOracle, NoThrottleIsTheOrdinaryOracle) {
  const Policy policy{.n = 1, .r = 2, .kind = PolicyKind::simple};
  const Plan plan = scripted_plan(4, FaultKind::cut, Times::always, policy);
  const OracleResult plain = run_oracle(policy, plan, live_timing());
  const OracleResult none = run_oracle(policy, plan, live_timing(), Throttle{}, 0);
  EXPECT_EQ(plain.requests, none.requests);
  EXPECT_EQ(none.throttled, 0);
}

}  // namespace
}  // namespace relsim
