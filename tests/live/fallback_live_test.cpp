// A fallback to a second provider, live (docs/model.md, Fallback; docs/wire.md,
// The second provider's path): relsim's client sends a call's later
// requests to the mock's /t/{task}/fallback/ path, the server answers them
// from the plan's fallback column, and every task's outcome, request count
// and split between the providers equals the oracle's.
//   - A positive control first: a plan with no fault on either provider, every
//     task done with no request to the second.
//   - Hand-counted: the first provider always 529, the second always up.
//   - Drawn from the model (bursty first provider, a second one, a shared
//     outage), every policy, both dialects: 0 mismatches.
//   - The server: the fallback path takes the column's entry and journals
//     "fallback": true; a task without a column answers it 404.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "relsim/core/fallback.hpp"
#include "relsim/live/live.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/server/server.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"
#include "server_wire.hpp"

namespace relsim {
namespace {

// relsim live's timing with 1 s header and idle timeouts, as the other live
// tests use on a busy machine (tests/live/live_cli_test.cpp).
LiveCheck check(const Plan& plan, const Policy& policy, int after, Dialect dialect = Dialect::anthropic) {
  LiveOptions options;
  options.concurrency = 16;
  options.fallback_after = after;
  options.dialect = dialect;
  ClientTiming timing = live_timing();
  timing.header_timeout = timing.idle_timeout = 1.0;
  timing.call_timeout = timing.task_timeout = 60.0;
  return run_live_check(plan, policy, timing, options);
}

Policy policy_of(PolicyKind kind, int n, int r) {
  Policy p{n, r};
  p.kind = kind;
  return p;
}

// Every task: `first` on each request at the first provider, `second` at the second.
Plan two_provider_plan(std::int64_t tasks, PlannedRequest first, PlannedRequest second, int length) {
  Plan plan;
  plan.header = Json{{"relsim_plan", 1}, {"tasks", tasks}, {"fallback", Json{{"after", 1}}}};
  for (std::int64_t t = 0; t < tasks; ++t) {
    TaskPlan tp;
    tp.task = t;
    tp.requests.assign(static_cast<std::size_t>(length), first);
    tp.fallback.assign(static_cast<std::size_t>(length), second);
    plan.tasks.push_back(tp);
  }
  return plan;
}

TEST(FallbackLive, ACleanPlanIsDoneWithoutTheSecondProvider) {
  const LiveCheck c = check(two_provider_plan(8, std::nullopt, std::nullopt, 6), policy_of(PolicyKind::layered, 2, 2), 1);
  ASSERT_TRUE(c.mismatches.empty());
  EXPECT_EQ(c.successes, 8);
  EXPECT_EQ(c.requests, 16);
  EXPECT_EQ(c.fallback_requests, 0);
}

TEST(FallbackLive, TheFirstProviderDownAndTheSecondUp) {
  const Plan plan = two_provider_plan(6, FaultKind::http_529, std::nullopt, 8);
  for (const PolicyKind kind : {PolicyKind::simple, PolicyKind::layered, PolicyKind::naive}) {
    SCOPED_TRACE(to_string(kind));
    const LiveCheck with = check(plan, policy_of(kind, 2, 2), 1);
    EXPECT_TRUE(with.mismatches.empty());
    EXPECT_EQ(with.successes, 6);
    EXPECT_EQ(with.requests, 24);  // per call: a 529 from the first, then ok from the second
    EXPECT_EQ(with.fallback_requests, 12);
  }
  // Without the fallback the client never reaches the second provider.
  const LiveCheck without = check(plan, policy_of(PolicyKind::simple, 2, 2), 0);
  EXPECT_TRUE(without.mismatches.empty());
  EXPECT_EQ(without.successes, 0);
  EXPECT_EQ(without.fallback_requests, 0);
}

TEST(FallbackLive, DrawnPlansAgreeWithTheOracleTaskByTask) {
  const Model model{0.3, 0.8};
  Fallback fb;
  fb.after = 2;
  fb.second = Model{0.1, 1.0 - 1.0 / 3.0};
  fb.kinds = parse_fault_weights("cut=1,http_529=1,reset=1");
  fb.shared = Model{0.05, 0.9};
  for (const PolicyKind kind : {PolicyKind::simple, PolicyKind::layered, PolicyKind::naive, PolicyKind::budgeted}) {
    Policy policy = policy_of(kind, 3, 2);
    policy.B = 4;
    SimConfig config;
    config.tasks = 150;
    config.seed = 43;
    config.kinds = parse_fault_weights("cut=1,overloaded=1,http_529=1,malformed=1");
    config.fallback = fb;
    const Plan plan = generate_plan(model, policy, config);
    for (const Dialect dialect : {Dialect::anthropic, Dialect::openai}) {
      if (dialect == Dialect::openai && kind != PolicyKind::layered) continue;
      SCOPED_TRACE(std::string(to_string(kind)) + " " + std::string(dialect_name(dialect)));
      const LiveCheck c = check(plan, policy, fb.after, dialect);
      EXPECT_TRUE(c.mismatches.empty()) << c.mismatches.size() << " mismatches";
      std::int64_t predicted = 0;
      for (const Prediction& p : c.oracle) predicted += p.fallback_requests;
      EXPECT_EQ(c.fallback_requests, predicted);
      EXPECT_GT(c.fallback_requests, 0);
    }
  }
}

TEST(FallbackLive, TheServerAnswersTheFallbackPathFromTheColumn) {
  Server server;
  server.set_script(0, script_of({"http_529", "ok"}), script_of({"cut", "ok"}));
  EXPECT_THROW(server.set_script(2, script_of({"ok"}), script_of({"ok", "ok"})), InputError);
  server.set_script(1, script_of({"ok"}));
  ClientConfig client;
  client.port = static_cast<std::uint16_t>(server.port());
  client.policy = policy_of(PolicyKind::simple, 1, 3);
  client.timing = live_timing();
  client.fallback_after = 1;
  // Task 0: request 0 to the first (529), request 1 to the second, which
  // answers entry 1 of its column (ok): done after 2, 1 of them to the second.
  const std::vector<LiveTask> done = run_live(client, 0, 1);
  EXPECT_EQ(done[0].outcome.name(), "done");
  EXPECT_EQ(done[0].requests, 2);
  EXPECT_EQ(done[0].fallback_requests, 1);
  const TaskLog log = server.log(0);
  ASSERT_EQ(log.requests.size(), 2u);
  EXPECT_FALSE(log.requests[0].fallback);
  EXPECT_TRUE(log.requests[1].fallback);
  EXPECT_EQ(log.requests[1].target, "/t/0/fallback/v1/messages");
  EXPECT_EQ(entry_name(*log.requests[1].entry), "ok");
  EXPECT_EQ(to_json(log)["requests"][1]["fallback"], true);
  // Task 1 has no fallback column: its fallback path answers 404 saying why,
  // and takes no entry of its script.
  const test::server_wire::Response missing = test::server_wire::one_request(
      server.port(), test::server_wire::request("POST", "/t/1/fallback/v1/messages", test::server_wire::kBody));
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("task 1 has no fallback column"), std::string::npos) << missing.body;
  ASSERT_TRUE(server.wait_finished(1, 1, std::chrono::seconds(10)));
  const TaskLog refused = server.log(1);  // logged, with no index, as a request refused before taking an entry
  ASSERT_EQ(refused.requests.size(), 1u);
  EXPECT_TRUE(refused.requests[0].fallback);
  EXPECT_EQ(refused.requests[0].status, 404);
  EXPECT_EQ(refused.requests[0].index, -1);
  const std::vector<LiveTask> first = run_live(ClientConfig{client}, 1, 1);
  EXPECT_EQ(first[0].outcome.name(), "done");  // its one entry is still there
  EXPECT_EQ(first[0].fallback_requests, 0);
  server.stop();
}

TEST(FallbackLive, CliRunsADrawnFallbackAndRefusesWhatItCannot) {
  const auto r = test::run_relsim(
      "live --p 0.3 --burst-mean 5 --n 3 --r 2 --tasks 60 --fallback-after 2 --p2 0.1 --burst-mean2 3 "
      "--shared-p 0.05 --shared-burst-mean 10 --header-timeout 1 --idle-timeout 1 --call-timeout 60 "
      "--task-timeout 60 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mismatches"], 0);
  EXPECT_EQ(j["fallback"]["after"], 2);
  EXPECT_GT(j["fallback_requests"].get<int>(), 0);
  EXPECT_TRUE(j["exact"].is_number());
  test::expect_input_error("live --fault cut --n 1 --r 1 --fallback-after 1 --p2 0.1", "--fallback-after draws a plan");
  test::expect_input_error("live --p 0.1 --n 1 --r 1 --fallback-after 1", "--fallback-after needs --p2");
  test::expect_input_error("live --p 0.1 --n 1 --r 1 --fallback-after 1 --p2 0.1 --throttle aws --concurrency 1",
                           "a retry throttle with a fallback");
  test::expect_input_error("live --t-good 2 --t-bad 1 --n 1 --r 1 --fallback-after 1",
                           "takes a fallback in steps only yet");
}

}  // namespace
}  // namespace relsim
