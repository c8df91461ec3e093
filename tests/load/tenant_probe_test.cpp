// Tenant probes (docs/fleet.md, "Tenant probes"): 10,000 tasks over 20
// tenants, all connected at once, against `relsim serve` in provider mode
// with a fault plan. No task may receive a response meant for another task
// or tenant: every answer names its task (the client checks it: text_ok),
// every request the server logs carries its task's tenant key, and each
// task ends exactly as the oracle predicts from its own plan, with the
// predicted number of requests. The server runs as its own process, so
// that 10,000 connections on each side fit the descriptor limits. Under a
// sanitizer 2,000 tasks (support/sanitized.hpp): 10,000 took 29 s under
// ASan and 45 s under TSan, the largest single cost of those runs.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/faults.hpp"
#include "relsim/client/client.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "support/fd_limit.hpp"
#include "support/files.hpp"
#include "support/journal.hpp"
#include "support/raw_client.hpp"
#include "support/run.hpp"
#include "support/sanitized.hpp"

namespace {

constexpr int kTasks = relsim::test::kSanitized ? 2'000 : 10'000;
constexpr int kTenants = 20;

using relsim::test::FdLimit;

using relsim::test::journal_requests;

TEST(TenantProbe, TenThousandConcurrentTasksOverTwentyTenantsGetOnlyTheirOwnAnswers) {
  FdLimit fds(kTasks + 1000);
  if (fds.soft() < kTasks + 1000)
    RELSIM_SKIP_OR_FAIL(fmt::format("needs {} descriptors in this process, the limit is {}", kTasks + 1000, fds.soft()));

  relsim::Policy policy;
  policy.kind = relsim::PolicyKind::simple;
  policy.n = 2;
  policy.r = 3;
  relsim::Model model;
  model.p = 0.05;
  model.q = 0.5;
  relsim::SimConfig sim;
  sim.tasks = kTasks;
  sim.seed = 20261202;
  sim.kinds = relsim::parse_fault_weights("cut=1,malformed=1,overloaded=1,http_500=1,http_529=1");
  const relsim::Plan plan = relsim::generate_plan(model, policy, sim);
  const auto dir = relsim::test::scratch("tenant_probe");
  const auto plan_file = relsim::test::write_temp("tenant_probe", "plan.jsonl", relsim::write_plan(plan));

  // A quota no tenant reaches: the provider tells tenants apart and logs them, refusing nothing.
  relsim::test::Background serve({relsim::test::relsim_exe(), "serve", "--port", "0", "--plan", plan_file.string(),
                                  "--quota", "1000000", "--max-connections", std::to_string(kTasks + 100),
                                  "--threads", "2",
                                  // Accepting 10,000 at once under a sanitizer can take longer than the default 5 s.
                                  "--read-timeout", "120"});
  const int port = relsim::test::port_from_banner(serve.read_line(60));
  ASSERT_GT(port, 0);

  relsim::ClientConfig client;
  client.port = static_cast<std::uint16_t>(port);
  client.policy = policy;
  client.tenants = kTenants;
  client.concurrency = kTasks;
  // A window of 10,000: every task starts at once (the server's 5 s read
  // timeout from accept rules out holding 10,000 idle connections at a gate).
  client.threads = 2;
  client.timing.connect_timeout = 60;
  client.timing.header_timeout = 60;
  client.timing.time_scale = 0.001;  // backoff in ms: the probe is about answers, not waits
  const auto live = relsim::run_live(client, 0, kTasks);
  ASSERT_EQ(live.size(), static_cast<std::size_t>(kTasks));
  // The most tasks in flight at one moment, from their start and end times (reported, not asserted: it is timing).
  std::vector<std::pair<double, int>> edges;
  for (const auto& t : live) {
    edges.emplace_back(t.started, 1);
    edges.emplace_back(t.started + t.seconds, -1);
  }
  std::sort(edges.begin(), edges.end());
  int in_flight = 0, peak = 0;
  for (const auto& [at, step] : edges) peak = std::max(peak, in_flight += step);

  const relsim::OracleResult oracle = relsim::run_oracle(policy, plan, client.timing);
  std::int64_t requests = 0, faults = 0;
  for (int t = 0; t < kTasks; ++t) {
    ASSERT_TRUE(live[t].text_ok) << "task " << t << " got an answer that is not its own: " << live[t].text;
    EXPECT_EQ(live[t].outcome, oracle.tasks[t].outcome) << "task " << t << ": " << live[t].error;
    EXPECT_EQ(live[t].requests, oracle.tasks[t].requests) << "task " << t;
    requests += live[t].requests;
    for (const auto& seen : live[t].seen) faults += seen.has_value();
  }
  EXPECT_GT(faults, 100);  // the plan's faults were met, not only healthy streams

  // The server's side: every request logged with its task's tenant, one
  // tenant number per key, 20 in all, and none refused.
  const auto lines = journal_requests(port);
  ASSERT_EQ(static_cast<std::int64_t>(lines.size()), requests);
  std::map<std::int64_t, std::set<std::int64_t>> tenants_of_class;
  std::map<std::int64_t, std::int64_t> per_task;
  for (const auto& l : lines) {
    const std::int64_t task = l["task"].get<std::int64_t>();
    ASSERT_TRUE(l.contains("tenant")) << l.dump();
    EXPECT_FALSE(l.contains("refused")) << l.dump();
    tenants_of_class[task % kTenants].insert(l["tenant"].get<std::int64_t>());
    ++per_task[task];
  }
  std::set<std::int64_t> all;
  for (const auto& [cls, seen] : tenants_of_class) {
    EXPECT_EQ(seen.size(), 1u) << "tasks of class " << cls << " were logged under several tenants";
    all.insert(seen.begin(), seen.end());
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kTenants));
  for (int t = 0; t < kTasks; ++t) EXPECT_EQ(per_task[t], live[t].requests) << "task " << t;
  RecordProperty("requests", static_cast<int>(requests));
  RecordProperty("faults", static_cast<int>(faults));
  RecordProperty("peak_in_flight", peak);
  std::printf("tenant probe: %d tasks over %d tenants, %lld requests (%lld faults), at most %d tasks in flight at once\n",
              kTasks, kTenants, static_cast<long long>(requests), static_cast<long long>(faults), peak);
}

}  // namespace
