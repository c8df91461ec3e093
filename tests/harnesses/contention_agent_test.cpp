// relsim contention run --agent-cmd with an agent nobody here wrote the
// client of (docs/contention.md, "Your own agent"):
// examples/tools/contention_agent.mjs on the official MCP TypeScript SDK
// (pinned by examples/tools/package-lock.json), 30 agents over 10 tenants,
// one node process each (docs/contention.md has a run of 100), each asking
// the mock provider at {model_url} for a plan first. What relsim scores comes from the server's log
// and the processes' exits, not from relsim's own agents.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/npm_install.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(ContentionAgentCmd, McpSdkAgentsOverTenTenantsAreScoredFromTheServersLog) {
  const fs::path dir = relsim::test::build_dir() / "tools";
  const std::string why = relsim::test::npm_install(fs::path(relsim::test::source_dir()) / "examples" / "tools", dir,
                                                    {}, "@modelcontextprotocol/sdk");
  if (!why.empty()) RELSIM_SKIP_OR_FAIL(why);
  const std::string agent = "node " + (dir / "contention_agent.mjs").string() +
                            " --mcp {tools_url} --tenant {tenant} --agent {agent} --scenario {scenario}"
                            " --increments {increments} --model {model_url}";
  const auto r = relsim::test::run_relsim({"contention", "run", "--scenario", "interleaved", "--agents", "30",
                                           "--tenants", "10", "--concurrency", "10", "--agent-cmd", agent, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  std::cout << "contention_agent.mjs, interleaved: " << j.dump() << "\n";
  // Every process did its task and exited 0 before the deadline.
  EXPECT_EQ(j["success"]["k"], 30);
  EXPECT_EQ(j["deadlocks"], 0);
  // Its keys carry its tenant: no call met another tenant's entry.
  EXPECT_EQ(j["collisions"], 0);
  // Its calls as the server logged them: 10 reads and 10 writes each, and the locks.
  EXPECT_GE(j["tool_429_rate"]["n"], 30 * 24);
  EXPECT_EQ(j["agent"], "agent-cmd");
  // Each asked relsim's mock provider for a plan first, at its own task's URL, and read the stream to its end.
  EXPECT_EQ(j["model_requests"], 30);
  EXPECT_TRUE(j["predictions"].empty());  // the closed forms are the reference agents', not this one's
}

}  // namespace
