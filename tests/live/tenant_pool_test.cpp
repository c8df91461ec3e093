// relsim's client with a connection pool per tenant (ClientConfig::pool) and
// with agents that run their own tasks in turn (ClientConfig::tasks_per_agent),
// against the mock server. Gates make the order certain: while a gate holds
// the first requests, the server sees exactly one request per tenant, and
// the log then shows each tenant's next request read only after the one
// before had ended.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/client/client.hpp"
#include "relsim/server/server.hpp"
#include "support/input_error.hpp"

namespace relsim {
namespace {

using std::chrono::milliseconds;

ScriptEntry gated(const std::string& gate) {
  ScriptEntry e = ScriptEntry::ok();
  e.gate = gate;
  return e;
}

ClientConfig client_of(const Server& server, int threads) {
  ClientConfig c;
  c.port = static_cast<std::uint16_t>(server.port());
  c.policy.kind = PolicyKind::simple;
  c.policy.n = 1;
  c.policy.r = 0;
  c.threads = threads;
  return c;
}

class TenantPool : public ::testing::TestWithParam<int> {};

TEST_P(TenantPool, EachTenantHasAtMostPoolRequestsOpenAndTheRestWaitInTurn) {
  Server server;
  for (int t = 0; t < 6; ++t) server.set_script(t, {gated("g")});
  ClientConfig c = client_of(server, GetParam());
  c.concurrency = 6;
  c.tenants = 2;  // task t is tenant t mod 2
  c.pool = 1;
  auto run = std::async(std::launch::async, [&] { return run_live(c, 0, 6); });
  // Both tenants have a request held at once (one tenant's pool does not
  // hold up the other's), and no other request reached the server.
  std::vector<int> first(2, -1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((first[0] < 0 || first[1] < 0) && std::chrono::steady_clock::now() < deadline) {
    for (int t = 0; t < 6; ++t)
      if (server.held(t) == 1) first[static_cast<std::size_t>(t % 2)] = t;
    std::this_thread::sleep_for(milliseconds(2));
  }
  ASSERT_GE(first[0], 0);
  ASSERT_GE(first[1], 0);
  for (int t = 0; t < 6; ++t)
    if (t != first[0] && t != first[1]) {
      EXPECT_EQ(server.log(t).requests.size(), 0u) << "task " << t << " passed its tenant's pool of 1";
    }
  server.open_gate("g");
  const std::vector<LiveTask> tasks = run.get();
  for (int t = 0; t < 6; ++t) {
    ASSERT_TRUE(server.wait_finished(t, 1, milliseconds(5000)));
    EXPECT_EQ(tasks[t].outcome.outcome, Outcome::done) << tasks[t].error;
    ASSERT_EQ(tasks[t].pool_waits.size(), 1u);
  }
  // The others waited longer for a connection than the first of their tenant.
  for (int t = 0; t < 6; ++t)
    if (t != first[0] && t != first[1]) {
      EXPECT_GT(tasks[t].pool_waits[0], tasks[first[static_cast<std::size_t>(t % 2)]].pool_waits[0]) << t;
    }
  // Each of a tenant's requests was read after the one before it ended.
  for (int tenant = 0; tenant < 2; ++tenant) {
    std::vector<LoggedRequest> seen;
    for (int t = tenant; t < 6; t += 2) seen.push_back(server.log(t).requests.at(0));
    std::sort(seen.begin(), seen.end(), [](const auto& a, const auto& b) { return a.received_ms < b.received_ms; });
    for (std::size_t k = 1; k < seen.size(); ++k)
      EXPECT_GE(seen[k].received_ms, *seen[k - 1].finished_ms) << "tenant " << tenant << ", request " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, TenantPool, ::testing::Values(1, 2));

TEST(TenantPool, RetriesWaitLikeFirstAttemptsAndEveryRequestRecordsItsWait) {
  Server server;
  for (int t = 0; t < 4; ++t) server.set_script(t, script_of({"cut", "cut", "ok"}));
  ClientConfig c = client_of(server, 1);
  c.policy.r = 2;
  c.concurrency = 4;
  c.pool = 1;
  const std::vector<LiveTask> tasks = run_live(c, 0, 4);
  for (const LiveTask& t : tasks) {
    EXPECT_EQ(t.outcome.outcome, Outcome::done) << t.error;
    EXPECT_EQ(t.requests, 3);
    EXPECT_EQ(t.pool_waits.size(), 3u);
  }
  std::vector<LoggedRequest> all;
  for (int t = 0; t < 4; ++t) {
    ASSERT_TRUE(server.wait_finished(t, 3, milliseconds(5000)));
    for (const auto& r : server.log(t).requests) all.push_back(r);
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.received_ms < b.received_ms; });
  for (std::size_t k = 1; k < all.size(); ++k) EXPECT_GE(all[k].received_ms, *all[k - 1].finished_ms) << k;
}

TEST(TenantPool, AgentsRunTheirOwnTasksInTurnUnderTheirTenantsKey) {
  Server server;
  for (int t = 0; t < 6; ++t) server.set_script(t, script_of({"ok"}));
  ClientConfig c = client_of(server, 1);
  c.concurrency = 2;  // agents
  c.tasks_per_agent = 3;
  c.tenants = 2;
  const std::vector<LiveTask> tasks = run_live(c, 0, 6);
  for (int t = 0; t < 6; ++t) {
    EXPECT_EQ(tasks[t].outcome.outcome, Outcome::done) << tasks[t].error;
    ASSERT_TRUE(server.wait_finished(t, 1, milliseconds(5000)));
    EXPECT_EQ(server.log(t).requests.at(0).header("x-api-key"), tenant_key(t / 3));
    if (t % 3 > 0) {
      EXPECT_GE(server.log(t).requests.at(0).received_ms, *server.log(t - 1).requests.at(0).finished_ms) << t;
    }
  }
}

TEST(TenantPool, BadPoolsAndAgentShapesAreRefused) {
  Server server;
  ClientConfig c = client_of(server, 1);
  c.pool = -1;
  EXPECT_EQ(test::input_error([&] { run_live(c, 0, 1); }),
            "pool = -1 is out of range: it must be in [0, 10000] connections per tenant (0: no pool)");
  c.pool = 0;
  c.tasks_per_agent = 3;
  c.concurrency = 2;
  EXPECT_EQ(test::input_error([&] { run_live(c, 0, 5); }),
            "tasks 0..4: 2 agents of 3 tasks each run 6 tasks from a multiple of 3");
  EXPECT_EQ(test::input_error([&] { run_live(c, 1, 6); }),
            "tasks 1..6: 2 agents of 3 tasks each run 6 tasks from a multiple of 3");
  c.coordinated_start = true;
  EXPECT_NE(test::input_error([&] { run_live(c, 0, 6); }).find("not in waves"), std::string::npos);
}

}  // namespace
}  // namespace relsim
