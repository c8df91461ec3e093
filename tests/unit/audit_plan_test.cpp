// Plans for auditing (relsim plan --max-requests): one plan serves every
// policy whose calls fit in it, and each policy run over it counts what the
// simulator counts for that policy with the same seed.
#include <gtest/gtest.h>

#include "relsim/core/error.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

const char* kAuditMixed = "cut=1,stall=1,slow_headers=2,http_529=1,overloaded=1,reset=0.5";

SimConfig audit_config(std::int64_t tasks, std::uint64_t seed) {
  SimConfig config;
  config.tasks = tasks;
  config.seed = seed;
  config.kinds = parse_fault_weights(kAuditMixed);
  return config;
}

TEST(AuditPlan, EveryPolicyOverOneAuditPlanCountsWhatSimulateCountsForIt) {
  const Model model{.p = 0.3, .q = 0.8};
  const SimConfig config = audit_config(4000, 77);
  const Policy meant{.n = 3, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::simple};
  const Plan plan = parse_plan(write_plan(generate_audit_plan(model, meant, config, 12)), "memory");
  for (auto kind : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted})
    for (int s : {0, 2})
      for (int r : {0, 2}) {
        const Policy policy{.n = 3, .r = r, .s = s, .B = 4, .kind = kind};
        const SimResult sim = simulate(model, policy, config);
        const OracleResult oracle = run_oracle(policy, plan, ClientTiming{});
        const std::string what = describe(policy);
        EXPECT_EQ(oracle.outcomes[0], sim.successes) << what;
        EXPECT_EQ(oracle.requests, sim.requests) << what;
        EXPECT_EQ(oracle.faults, sim.faults) << what;
      }
}

TEST(AuditPlan, ListsEveryCallUntilACallOfMaxRequestsBadOnes) {
  const int K = 5;
  const Policy meant{.n = 4, .r = 1, .s = 1, .B = 0, .kind = PolicyKind::layered};
  Model model{.p = 0.3, .q = 0.8};
  model.q = 0.95;  // long bursts, so that some calls reach K bad requests
  const Plan plan = generate_audit_plan(model, meant, audit_config(2000, 5), K);
  EXPECT_EQ(plan.header["max_requests"], K);
  EXPECT_EQ(plan.header["policy"], "layered");
  int cut_short = 0;
  for (const TaskPlan& t : plan.tasks) {
    int calls = 0, run = 0;
    for (const PlannedRequest& r : t.requests) {
      run = r ? run + 1 : 0;
      calls += !r;
      ASSERT_LE(run, K) << "task " << t.task;
    }
    if (run == K) {
      ++cut_short;  // the last call's K bad requests end every policy of at most K per call
      EXPECT_LT(calls, meant.n) << "task " << t.task;
    } else {
      EXPECT_EQ(calls, meant.n) << "task " << t.task;
      EXPECT_EQ(run, 0) << "task " << t.task;
    }
  }
  EXPECT_GT(cut_short, 0);
}

TEST(AuditPlan, RefusesWhatAnAuditCannotUse) {
  const Model model{.p = 0.3, .q = 0.8};
  const Policy naive{.n = 2, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::naive};
  EXPECT_THROW(generate_audit_plan(model, naive, audit_config(10, 1), 8), InputError);  // naive needs 9
  EXPECT_THROW(generate_audit_plan(model, naive, audit_config(10, 1), 0), InputError);
  EXPECT_THROW(generate_audit_plan(model, naive, audit_config(10, 1), kMaxRequestsPerCall + 1), InputError);
  Model backoff = model;
  backoff.b = 1;
  EXPECT_THROW(generate_audit_plan(backoff, naive, audit_config(10, 1), 9), InputError);
  EXPECT_NO_THROW(generate_audit_plan(model, naive, audit_config(10, 1), 9));
}

TEST(AuditPlan, ScriptedAlwaysHoldsMaxRequestsPerCall) {
  const Policy meant{.n = 2, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::simple};
  const Plan plan = scripted_audit_plan(3, FaultKind::slow_headers, Times::always, meant, 12);
  ASSERT_EQ(plan.tasks.size(), 3u);
  for (const TaskPlan& t : plan.tasks) {
    ASSERT_EQ(t.requests.size(), 24u);
    for (const PlannedRequest& r : t.requests) EXPECT_EQ(r, FaultKind::slow_headers);
  }
  // Naive with s = r = 2 sends 9 and crashes; layered sends 3 (docs/policies.md).
  const Policy naive{.n = 2, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::naive};
  const Policy layered{.n = 2, .r = 2, .s = 2, .B = 0, .kind = PolicyKind::layered};
  EXPECT_EQ(predict(naive, plan.tasks[0], ClientTiming{}).requests, 9);
  EXPECT_EQ(predict(layered, plan.tasks[0], ClientTiming{}).requests, 3);
}

}  // namespace
}  // namespace relsim
