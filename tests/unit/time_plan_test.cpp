// Time-mode plans (plan.hpp's generate_time_plan, trace_time.hpp): the oracle
// over a plan drawn for a seed counts what simulate_time counts for that
// seed, and the plan's wall times sum to its total_microseconds; starts
// checked against a schedule worked out by hand; the format's refusals.
#include <gtest/gtest.h>

#include <string>

#include "relsim/core/error.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/simulate_time.hpp"
#include "relsim/montecarlo/trace_time.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

using test::time_model_of;

SimConfig plan_config(std::int64_t tasks, std::uint64_t seed, const char* kinds) {
  SimConfig c;
  c.tasks = tasks;
  c.seed = seed;
  c.lanes = 7;
  c.threads = 2;
  c.kinds = parse_fault_weights(kinds);
  return c;
}

const Json kChain{{"t_good", "as given"}};

// Through the file format, as `relsim plan` and `relsim oracle` do.
void expect_oracle_matches_simulate(const TimeModel& time, const Policy& policy, const SimConfig& config,
                                    const std::string& what) {
  const TimeSimResult sim = simulate_time(time, policy, config);
  const Plan plan = parse_plan(write_plan(generate_time_plan(time, kChain, policy, config)), "memory");
  const OracleResult oracle = run_oracle(policy, plan, ClientTiming{});
  EXPECT_EQ(oracle.outcomes[0], sim.counts.successes) << what;
  EXPECT_EQ(oracle.outcomes, sim.counts.outcomes) << what;
  EXPECT_EQ(oracle.requests, sim.counts.requests) << what;
  EXPECT_EQ(oracle.faults, sim.counts.faults) << what;
  EXPECT_TRUE(oracle.timed) << what;
  EXPECT_EQ(oracle.planned_microseconds, sim.total_microseconds) << what;
  // Not a degenerate run: some tasks fail, some succeed, some wait.
  EXPECT_GT(sim.counts.successes, 0) << what;
  EXPECT_LT(sim.counts.successes, config.tasks) << what;
  EXPECT_GT(sim.counts.requests, config.tasks * policy.n) << what;
  for (const TaskPlan& t : plan.tasks) {
    ASSERT_EQ(t.at_seconds.size(), t.requests.size()) << what;
    EXPECT_EQ(t.at_seconds.front(), 0.0) << what;
    for (std::size_t i = 1; i < t.at_seconds.size(); ++i) EXPECT_GE(t.at_seconds[i], t.at_seconds[i - 1]) << what;
    EXPECT_GE(t.seconds, t.at_seconds.back()) << what;
  }
}

TEST(TimePlan, LayeredWithRetryAfterAndJitterCountsWhatSimulateTimeCounts) {
  TimeModel time = time_model_of(20.0, 8.0, "sdk", 0.7, 1.5);
  time.retry_after = 2.5;
  time.fault_seconds = parse_fault_seconds("slow_headers=6,stall=4", 0.0, 0.0);
  const Policy policy{.n = 3, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::layered};
  for (auto scope : {ChainScope::fresh, ChainScope::continuous}) {
    time.scope = scope;
    expect_oracle_matches_simulate(time, policy, plan_config(3000, 41, "http_429=3,cut=1,stall=1,slow_headers=1"),
                                   std::string("layered ") + std::string(to_string(scope)));
  }
}

TEST(TimePlan, SimpleWithListBackoffAndThinkCountsWhatSimulateTimeCounts) {
  TimeModel time = time_model_of(30.0, 10.0, "list:1,2,4", 0.5, 3.0);
  const Policy policy{.n = 2, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::simple};
  for (auto scope : {ChainScope::fresh, ChainScope::continuous}) {
    time.scope = scope;
    expect_oracle_matches_simulate(time, policy, plan_config(3000, 5, "cut=1,overloaded=1"),
                                   std::string("simple ") + std::string(to_string(scope)));
  }
}

// A chain that is bad for good (mean bad sojourn 1e9 s, good 1e-6 s): every
// request is a cut. simple n = 1, r = 2, requests of 0.5 s, waits 1 s then
// 2 s: starts 0, 0.5 + 1, 1.5 + 0.5 + 2; the task ends at 4 + 0.5.
TEST(TimePlan, StartsFollowTheScheduleWorkedByHand) {
  const TimeModel time = time_model_of(1e-6, 1e9, "list:1,2", 0.5, 7.0);
  const Policy policy{.n = 1, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::simple};
  const SimConfig config = plan_config(5, 3, "cut=1");
  const Plan plan = generate_time_plan(time, kChain, policy, config);
  ASSERT_EQ(plan.tasks.size(), 5u);
  for (const TaskPlan& t : plan.tasks) {
    EXPECT_EQ(t.requests, (std::vector<PlannedRequest>(3, FaultKind::cut)));
    EXPECT_EQ(t.at_seconds, (std::vector<double>{0.0, 1.5, 4.0}));
    EXPECT_EQ(t.seconds, 4.5);
  }
  // One task alone, as trace_time_task replays it, is the plan's.
  const TimeTaskTrace one = trace_time_task(time, policy, config, 3);
  ASSERT_EQ(one.requests.size(), 3u);
  EXPECT_EQ(one.requests[2].at_seconds, 4.0);
  EXPECT_EQ(one.microseconds, 4'500'000);
  EXPECT_EQ(plan.header["time"]["backoff"], "list:1,2");
  EXPECT_EQ(plan.header["time"]["think_seconds"], 7.0);
  EXPECT_EQ(plan.header["policy"], "simple");
}

TEST(TimePlan, TraceOfOneTaskEqualsTheRunsInTheContinuousScope) {
  TimeModel time = time_model_of(20.0, 8.0, "sdk", 0.7, 1.5);
  time.scope = ChainScope::continuous;
  const Policy policy{.n = 3, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::layered};
  const SimConfig config = plan_config(60, 9, "http_429=1,cut=1");
  const std::vector<TimeTaskTrace> all = trace_time_tasks(time, policy, config);
  for (std::int64_t task : {0, 6, 7, 30, 59}) {
    const TimeTaskTrace one = trace_time_task(time, policy, config, task);
    const TimeTaskTrace& same = all[static_cast<std::size_t>(task)];
    EXPECT_EQ(one.microseconds, same.microseconds) << task;
    ASSERT_EQ(one.requests.size(), same.requests.size()) << task;
    for (std::size_t i = 0; i < one.requests.size(); ++i) {
      EXPECT_EQ(one.requests[i].fault, same.requests[i].fault) << task;
      EXPECT_EQ(one.requests[i].at_seconds, same.requests[i].at_seconds) << task;
    }
  }
  EXPECT_THROW(trace_time_task(time, policy, config, 60), InputError);
}

TEST(TimePlan, RefusesMalformedTimesAndAnotherPolicy) {
  const std::string head = R"({"relsim_plan": 1, "tasks": 1})";
  const auto parse = [&](const std::string& line) { return parse_plan(head + "\n" + line + "\n", "p"); };
  EXPECT_NO_THROW(parse(R"({"task": 0, "requests": ["cut", "ok"], "at_seconds": [0, 1.5], "seconds": 2})"));
  EXPECT_THROW(parse(R"({"task": 0, "requests": ["cut", "ok"], "at_seconds": [0], "seconds": 2})"), InputError);
  EXPECT_THROW(parse(R"({"task": 0, "requests": ["cut", "ok"], "at_seconds": [0, -1], "seconds": 2})"), InputError);
  EXPECT_THROW(parse(R"({"task": 0, "requests": ["cut", "ok"], "at_seconds": [0, 1]})"), InputError);
  EXPECT_THROW(parse(R"({"task": 0, "requests": ["ok"], "seconds": 2})"), InputError);
  // Made for simple r = 2: r = 1 ends the task before the plan's last request.
  const Plan plan = parse(R"({"task": 0, "requests": ["cut", "cut", "ok"], "at_seconds": [0, 1, 2], "seconds": 3})");
  const Policy made{.n = 1, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::simple};
  EXPECT_EQ(run_oracle(made, plan, ClientTiming{}).planned_microseconds, 3'000'000);
  Policy other = made;
  other.r = 1;
  EXPECT_THROW(run_oracle(other, plan, ClientTiming{}), InputError);
}

}  // namespace
}  // namespace relsim
