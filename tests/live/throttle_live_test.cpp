// relsim's client with a retry throttle (ClientConfig::throttle) against the
// mock server: one task at a time, every task's requests and outcome equal
// the throttled oracle's, and the scripted runs give the counts worked out
// by hand in tests/unit/throttle_oracle_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "relsim/fleet/scenario.hpp"
#include "relsim/live/live.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace relsim {
namespace {

// relsim live's timing with header and idle timeouts of 1 s, not 0.2 s, and
// deadlines to match: a good answer later than 0.2 s on a busy machine under
// ASan would be retried as a fault (see tests/live/live_cli_test.cpp).
LiveCheck check(const Plan& plan, const Policy& policy, const std::string& throttle) {
  LiveOptions options;
  options.concurrency = 1;
  options.throttle = fleet::parse_throttle(throttle);
  ClientTiming timing = live_timing();
  timing.header_timeout = timing.idle_timeout = 1.0;
  timing.call_timeout = timing.task_timeout = 60.0;
  return run_live_check(plan, policy, timing, options);
}

TEST(ThrottleLive, ScriptedRunsGiveTheHandCountedRequests) {
  Policy simple{1, 3};
  simple.kind = PolicyKind::simple;
  const LiveCheck grpc = check(scripted_plan(5, FaultKind::overloaded, Times::always, simple), simple, "grpc:10,0.1");
  EXPECT_TRUE(grpc.mismatches.empty());
  EXPECT_EQ(grpc.requests, 8);
  EXPECT_EQ(grpc.throttled, 4);
  const LiveCheck refund = check(scripted_plan(8, FaultKind::overloaded, Times::once, simple), simple, "grpc:10,0.1");
  EXPECT_TRUE(refund.mismatches.empty());
  EXPECT_EQ(refund.requests, 13);
  EXPECT_EQ(refund.successes, 5);
  const LiveCheck aws = check(scripted_plan(36, FaultKind::overloaded, Times::always, simple), simple, "aws");
  EXPECT_TRUE(aws.mismatches.empty());
  EXPECT_EQ(aws.requests, 136);
  EXPECT_EQ(aws.throttled, 3);
}

TEST(ThrottleLive, TheHttpLayersRetriesAskTheThrottleToo) {
  // Pre-response 529s are retried by the SDK layer (s = 3), not the stream
  // layer (r = 0): the same 4, 1, 1, 1, 1 as the stream layer's retries.
  Policy layered{1, 0};
  layered.kind = PolicyKind::layered;
  layered.s = 3;
  const LiveCheck c = check(scripted_plan(5, FaultKind::http_529, Times::always, layered), layered, "grpc:10,0.1");
  EXPECT_TRUE(c.mismatches.empty());
  EXPECT_EQ(c.requests, 8);
  EXPECT_EQ(c.throttled, 4);
  EXPECT_EQ(c.outcomes.at("env_error:http_529"), 5);
}

TEST(ThrottleLive, AwsRefundsAgreeOverALongBurstyRun) {
  // 400 layered tasks drain the AWS quota below 500, where what each good
  // answer gives back (the retry's cost, or 1 for a first attempt) decides
  // later retries: every task must still agree with the oracle.
  Policy policy{3, 2};
  policy.kind = PolicyKind::layered;
  SimConfig config;
  config.tasks = 400;
  config.kinds = parse_fault_weights("cut=1,overloaded=1,http_529=1");
  const LiveCheck c = check(generate_plan(Model{0.3, 0.8}, policy, config), policy, "aws");
  EXPECT_TRUE(c.mismatches.empty()) << c.mismatches.size() << " mismatches";
  EXPECT_GT(c.throttled, 0);
}

TEST(ThrottleLive, BurstyPlansAgreeWithTheOracleTaskByTask) {
  const Model model{0.3, 0.8};
  for (const PolicyKind kind : {PolicyKind::simple, PolicyKind::layered, PolicyKind::naive}) {
    Policy policy{3, 2};
    policy.kind = kind;
    SimConfig config;
    config.tasks = 150;
    config.seed = 41;
    config.kinds = parse_fault_weights("cut=1,overloaded=1,http_529=1");
    const Plan plan = generate_plan(model, policy, config);
    for (const char* throttle : {"grpc:10,0.1", "aws", "budget:0.2,1"}) {
      SCOPED_TRACE(std::string(to_string(kind)) + " " + throttle);
      const LiveCheck c = check(plan, policy, throttle);
      EXPECT_TRUE(c.mismatches.empty());
      std::int64_t predicted = 0;
      for (const Prediction& p : c.oracle) predicted += p.throttled ? 1 : 0;
      EXPECT_EQ(c.throttled, predicted);
      if (std::string(throttle) == "grpc:10,0.1") {
        EXPECT_GT(c.throttled, 0);  // bursts at p = 0.3 drain ten tokens
      }
    }
  }
}

TEST(ThrottleLive, CliReportsTheThrottleAndRefusesWhatItCannotCheck) {
  const auto r = test::run_relsim(
      "live --fault overloaded --times always --policy simple --r 3 --n 1 --tasks 5 --concurrency 1 "
      "--throttle grpc:10,0.1 --header-timeout 1 --idle-timeout 1 --call-timeout 60 --task-timeout 60 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["requests"], 8);
  EXPECT_EQ(j["throttled"], 4);
  EXPECT_EQ(j["throttle"], "grpc:10,0.1");
  EXPECT_EQ(j["mismatches"], 0);
  test::expect_input_error("live --fault cut --n 1 --r 1 --throttle aws", "needs concurrency 1");
  test::expect_input_error("live --fault cut --n 1 --r 1 --concurrency 1 --throttle grpc:0,1", "throttle");
  test::expect_input_error("live --t-good 2 --t-bad 1 --n 1 --r 1 --throttle aws",
                           "--throttle does not apply to relsim live in time mode");
}

}  // namespace
}  // namespace relsim
