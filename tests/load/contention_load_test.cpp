// The tools server under a thousand agents at once (docs/contention.md):
// relsim's careful reference agents, 10 to a tenant, in the scenarios that
// share state (scratchpad and locks, cache, queues). The server's log must
// hold exactly the calls the agents made (no operation lost), name each
// agent's own tenant on each of its lines, and show no call that met
// another tenant's state: careful agents share no key, so any cross-tenant
// answer would be the server's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "relsim/contention/contention.hpp"
#include "support/fd_limit.hpp"
#include "support/files.hpp"
#include "support/sanitized.hpp"

namespace relsim::contention {
namespace {

// Both ends of every agent's connection live in this process.
constexpr int kAgents = relsim::test::kSanitized ? 300 : 1000;

TEST(ContentionLoad, AThousandCarefulAgentsAtOnceLoseNoOperationAndLeakNothing) {
  relsim::test::FdLimit fds(3 * kAgents + 200);
  ASSERT_GE(fds.soft(), rlim_t(3 * kAgents + 200)) << "raise the hard RLIMIT_NOFILE (ulimit -Hn)";
  for (const Scenario sc : {Scenario::interleaved, Scenario::probe_pairs, Scenario::out_of_order}) {
    SCOPED_TRACE(std::string(to_string(sc)));
    ContentionConfig c;
    c.scenario = sc;
    c.agent = AgentKind::careful;
    c.agents = kAgents;
    c.tenants = kAgents / 10;
    c.increments = 2;
    c.deadline_s = 300;  // a bound, not a timing: they finish in seconds
    const auto log = relsim::test::scratch("contention_load") / (std::string(to_string(sc)) + ".jsonl");
    std::filesystem::create_directories(log.parent_path());
    const ContentionScores s = run_contention(c, log.string());
    std::int64_t calls = 0;
    for (const AgentReport& a : s.agents) calls += a.tool_calls;
    std::int64_t lines = 0, foreign = 0, wrong_name = 0;
    std::map<std::string, std::int64_t> per_agent;
    std::ifstream in(log);
    for (std::string text; std::getline(in, text); ++lines) {
      const auto j = nlohmann::json::parse(text);
      const int agent = std::stoi(j["agent"].get<std::string>().substr(1));
      wrong_name += j["tenant"] != "t" + std::to_string(agent % c.tenants);
      foreign += j.contains("facts") && j["facts"].value("other_tenant", false);
      ++per_agent[j["agent"]];
    }
    EXPECT_EQ(lines, calls);  // no operation lost, none made up
    EXPECT_EQ(per_agent.size(), std::size_t(kAgents));
    for (const AgentReport& a : s.agents) EXPECT_EQ(per_agent["a" + std::to_string(a.agent)], a.tool_calls);
    EXPECT_EQ(wrong_name, 0);
    EXPECT_EQ(foreign, 0);
    EXPECT_EQ(s.success.k, kAgents);
    EXPECT_EQ(s.lost_updates, 0);
    EXPECT_EQ(s.collisions, 0);
    EXPECT_EQ(s.deadlocks, 0);
    EXPECT_EQ(s.wrong_tenant_hits.k, 0);
    EXPECT_EQ(s.stale_accepted.k, 0);
    std::cout << to_string(sc) << ": " << kAgents << " agents, " << calls << " calls logged in " << s.seconds
              << " s\n";
  }
}

}  // namespace
}  // namespace relsim::contention
