// A fault plan with a fallback to a second provider (formats/plan.hpp,
// montecarlo/plan_gen.hpp) and the oracle over it (live/oracle.hpp):
//   - the format: the "fallback" column written and read back, and every
//     malformed form refused with its line;
//   - the oracle over a drawn plan against simulate for the same seed: the
//     same draws, so the same successes, requests and faults, to the task;
//   - the oracle's success rate over a drawn plan against the exact value
//     with the fallback (the product chain, an engine that shares no code
//     with the plan's walk), within 5 standard errors;
//   - a hand-made plan whose first provider is always down and whose second
//     is always up: every call falls back and succeeds, with the request
//     counts worked out by hand for each policy.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "relsim/core/error.hpp"
#include "relsim/core/fallback.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/live/live.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/simulate.hpp"

// Named, not anonymous: the unit tests build as unity batches.
namespace fallback_plan_test {

using namespace relsim;

Fallback second_provider(int after, double p2, double q2) {
  Fallback fb;
  fb.after = after;
  fb.second = Model{p2, q2};
  fb.kinds = parse_fault_weights("cut=1,http_529=1");
  return fb;
}

SimConfig config_with(const Fallback& fb, std::int64_t tasks) {
  SimConfig config;
  config.tasks = tasks;
  config.seed = 20261206;
  config.kinds = parse_fault_weights("cut=1,overloaded=1,http_529=1");
  config.fallback = fb;
  return config;
}

Policy policy_of(PolicyKind kind, int n, int r) {
  Policy p{n, r};
  p.kind = kind;
  return p;
}

TEST(FallbackPlan, TheColumnIsWrittenAndReadBack) {
  const Policy policy = policy_of(PolicyKind::layered, 3, 2);
  Fallback fb = second_provider(2, 0.1, 0.6);
  fb.shared = Model{0.05, 0.9};
  const Plan plan = generate_plan(Model{0.3, 0.8}, policy, config_with(fb, 50));
  EXPECT_EQ(plan_fallback_after(plan), 2);
  EXPECT_EQ(plan.header["fallback"]["shared_p"], 0.05);
  for (const TaskPlan& t : plan.tasks) ASSERT_EQ(t.fallback.size(), t.requests.size());
  const Plan back = parse_plan(write_plan(plan), "plan");
  ASSERT_EQ(back.tasks.size(), plan.tasks.size());
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    EXPECT_EQ(back.tasks[i].requests, plan.tasks[i].requests);
    EXPECT_EQ(back.tasks[i].fallback, plan.tasks[i].fallback);
  }
  EXPECT_EQ(write_plan(back), write_plan(plan));
}

TEST(FallbackPlan, MalformedColumnsAreRefusedWithTheirLine) {
  const std::string header = R"({"relsim_plan": 1, "tasks": 1, "fallback": {"after": 1}})";
  const auto refused = [](const std::string& text, const std::string& what) {
    try {
      parse_plan(text, "p.jsonl");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(header + "\n" + R"({"task": 0, "requests": ["ok", "cut"], "fallback": ["ok"]})",
          "p.jsonl:2: \"fallback\" must be an array of \"ok\" or fault kinds, one per request (2)");
  refused(header + "\n" + R"({"task": 0, "requests": ["ok"], "fallback": ["boom"]})", "p.jsonl:2: fault kind");
  refused(header + "\n" + R"({"task": 0, "requests": ["ok"], "fallback": [3]})", "fallback entry 3 is not a string");
  refused(header + "\n" + R"({"task": 0, "requests": ["ok"]})", "task 0 lacks a \"fallback\" column");
  refused(R"({"relsim_plan": 1, "tasks": 1})" "\n" R"({"task": 0, "requests": ["ok"], "fallback": ["ok"]})",
          "task 0 has a \"fallback\" column while the header gives none");
  refused(R"({"relsim_plan": 1, "tasks": 1, "fallback": {"after": 0}})" "\n" R"({"task": 0, "requests": ["ok"]})",
          "\"after\" is an integer in [1, 10000]");
  refused(R"({"relsim_plan": 1, "tasks": 1, "fallback": 2})" "\n" R"({"task": 0, "requests": ["ok"]})",
          "header \"fallback\" = 2 must be an object");
}

TEST(FallbackPlan, TheOracleOverADrawnPlanIsSimulateTaskForTask) {
  // Every policy, independent and correlated providers: the plan holds the
  // draws simulate makes for the seed, so the oracle, which reads each
  // request's reply from the column of the provider the policy sends it to,
  // must count exactly what simulate counts.
  const Model model{0.3, 0.8};
  for (const PolicyKind kind : {PolicyKind::simple, PolicyKind::layered, PolicyKind::naive, PolicyKind::budgeted}) {
    Policy policy = policy_of(kind, 4, 2);
    policy.B = 4;
    for (const bool shared : {false, true}) {
      Fallback fb = second_provider(kind == PolicyKind::simple ? 1 : 2, 0.15, 0.7);
      if (shared) fb.shared = Model{0.05, 0.9};
      const SimConfig config = config_with(fb, 4000);
      const SimResult sim = simulate(model, policy, config);
      const Plan plan = generate_plan(model, policy, config);
      const OracleResult oracle = run_oracle(policy, plan, ClientTiming{}, fb.after);
      SCOPED_TRACE(testing::Message() << to_string(kind) << (shared ? ", shared outage" : ""));
      EXPECT_EQ(oracle.outcomes[0], sim.successes);
      EXPECT_EQ(oracle.requests, sim.requests);
      EXPECT_EQ(oracle.faults, sim.faults);
      EXPECT_GT(oracle.fallback_requests, 0);
      EXPECT_LT(oracle.fallback_requests, oracle.requests);
    }
  }
}

TEST(FallbackPlan, TheOraclesSuccessRateIsTheExactValue) {
  const Model model{0.3, 0.8};
  const Policy policy = policy_of(PolicyKind::layered, 3, 2);
  Fallback fb = second_provider(2, 0.1, 1.0 - 1.0 / 3.0);
  fb.shared = Model{0.05, 0.9};
  const SimConfig config = config_with(fb, 40000);
  const OracleResult oracle = run_oracle(policy, generate_plan(model, policy, config), ClientTiming{}, fb.after);
  ExactOptions options;
  options.kinds = config.kinds;
  options.fallback = fb;
  const double exact = exact_matrix(model, policy, options).success;
  const double rate = static_cast<double>(oracle.outcomes[0]) / static_cast<double>(config.tasks);
  const double se = std::sqrt(exact * (1.0 - exact) / static_cast<double>(config.tasks));
  EXPECT_LT(std::abs(rate - exact), 5.0 * se) << "rate " << rate << ", exact " << exact << ", se " << se;
}

TEST(FallbackPlan, AFirstProviderDownAndASecondUpFallsBackEveryCall) {
  // Three tasks of two calls: the first provider answers 529 to everything,
  // the second answers every request well. With K = 1 each call sends one
  // request to the first (529) and its next to the second (ok): 4 requests
  // a task, 2 of them to the second, done, whichever layer retries the 529.
  Plan plan;
  plan.header = Json{{"relsim_plan", 1}, {"tasks", 3}, {"fallback", Json{{"after", 1}}}};
  for (std::int64_t t = 0; t < 3; ++t) {
    TaskPlan tp;
    tp.task = t;
    tp.requests.assign(8, PlannedRequest(FaultKind::http_529));
    tp.fallback.assign(8, std::nullopt);
    plan.tasks.push_back(tp);
  }
  for (const PolicyKind kind : {PolicyKind::simple, PolicyKind::layered, PolicyKind::naive}) {
    const Policy policy = policy_of(kind, 2, 2);
    const OracleResult with = run_oracle(policy, plan, ClientTiming{}, 1);
    SCOPED_TRACE(to_string(kind));
    EXPECT_EQ(with.outcomes[0], 3);
    EXPECT_EQ(with.requests, 12);
    EXPECT_EQ(with.fallback_requests, 6);
  }
  // Without the fallback the first provider's 529s end every task.
  const OracleResult without = run_oracle(policy_of(PolicyKind::simple, 2, 2), plan, ClientTiming{}, 0);
  EXPECT_EQ(without.outcomes[0], 0);
  EXPECT_EQ(without.requests, 9);
  // A fallback over a plan without the column is refused, naming the task.
  Plan bare = plan;
  for (TaskPlan& t : bare.tasks) t.fallback.clear();
  EXPECT_THROW(run_oracle(policy_of(PolicyKind::simple, 2, 2), bare, ClientTiming{}, 1), InputError);
}

}  // namespace fallback_plan_test
