// relsim contention run from the command line (docs/contention.md): the
// JSON's keys, --require's verdict, and bad input refused in one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

using nlohmann::json;
using relsim::test::expect_input_error;
using relsim::test::run_relsim;

TEST(ContentionCli, JsonHasEveryScoreAndRequireGatesOnThem) {
  const auto r = run_relsim("contention run --scenario probe-pairs --agent naive --agents 8 --tenants 2 --concurrency 1 "
                            "--json --require wrong_tenant_hit_rate<=0");
  EXPECT_EQ(r.code, 1) << r.err;  // the naive agent leaks: the threshold is missed
  EXPECT_NE(r.err.find("threshold missed: wrong_tenant_hit_rate<=0"), std::string::npos) << r.err;
  const json j = json::parse(r.out);
  for (const char* key : {"success", "tool_429_rate", "wrong_tenant_hit_rate", "lost_updates", "collisions", "deadlocks",
                          "stale_accepted", "locks_past_ttl", "half_written_seen", "pool_wait_p99", "key_collisions",
                          "rounds_lost", "agents",
                          "tenants", "scenario", "seed", "predictions"})
    EXPECT_TRUE(j.contains(key)) << key;
  // Agents 1..7 outside tenant 0 (agents 1, 3, 5, 7), two lookups each, of 16.
  EXPECT_EQ(j["wrong_tenant_hit_rate"]["k"], 8);
  EXPECT_EQ(j["wrong_tenant_hit_rate"]["n"], 16);
  EXPECT_EQ(j["scenario"], "probe-pairs");
  const auto careful = run_relsim("contention run --scenario probe-pairs --agent careful --agents 8 --tenants 2 "
                                  "--require wrong_tenant_hit_rate<=0");
  EXPECT_EQ(careful.code, 0) << careful.err;
  EXPECT_NE(careful.out.find("wrong-tenant hit rate   0.0000"), std::string::npos) << careful.out;
}

// --history: one JSON line a run, appended, with the scores and when.
TEST(ContentionCli, HistoryGetsOneLineARun) {
  const std::filesystem::path dir = relsim::test::scratch("contention-history");
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "history.jsonl").string();
  std::filesystem::remove(file);
  for (const char* agent : {"naive", "careful"}) {
    const auto r = run_relsim(std::string("contention run --scenario probe-pairs --agents 8 --tenants 2 --agent ") +
                              agent + " --history " + file);
    EXPECT_EQ(r.code, 0) << r.err;
  }
  std::ifstream in(file);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["agent"], "naive");
  EXPECT_EQ(lines[1]["agent"], "careful");
  EXPECT_GT(lines[0]["wrong_tenant_hit_rate"]["k"], 0);
  EXPECT_EQ(lines[1]["wrong_tenant_hit_rate"]["k"], 0);
  for (const json& j : lines) {
    EXPECT_EQ(j["scenario"], "probe-pairs");
    EXPECT_EQ(j["time"].get<std::string>().size(), 20u) << j["time"];  // 2026-12-05T23:15:34Z
    EXPECT_TRUE(j.contains("relsim") && j.contains("commit"));
  }
}

// contention trend over the notebook's history: one CSV row a run whose
// numbers are the file's own, read here with nlohmann-json; bad files
// refused naming the line.
TEST(ContentionCli, TrendReadsTheFourLinesOfAHistoryFile) {
  const std::string file = relsim::test::source_dir() + "/data/notebooks/contention_history.jsonl";
  const auto r = run_relsim({"contention", "trend", "--history", file, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json runs = json::parse(r.out)["runs"];
  std::ifstream in(file);
  std::size_t i = 0;
  for (std::string line; std::getline(in, line); ++i) {
    const json j = json::parse(line);
    ASSERT_LT(i, runs.size());
    EXPECT_EQ(runs[i]["run"], i + 1);
    EXPECT_EQ(runs[i]["success"]["value"], j["success"]["value"]);
    EXPECT_EQ(runs[i]["success"]["ci"], j["success"]["ci"]);
    EXPECT_EQ(runs[i]["burst_429"]["value"], j["by_scenario"]["burst"]["tool_429_rate"]["value"]);
    EXPECT_EQ(runs[i]["leak"]["value"], j["wrong_tenant_hit_rate"]["value"]);
    EXPECT_EQ(runs[i]["pool_wait_p99"], j["pool_wait_p99"]);
    EXPECT_EQ(runs[i]["agent"], j["agent"]);
  }
  EXPECT_EQ(runs.size(), i);
  const auto csv = run_relsim({"contention", "trend", "--history", file, "--csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("run,time,commit,scenario,agent,seed,agents,tenants,success,success_lo,success_hi,", 0), 0u);
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), static_cast<long>(i + 1));
  // A burst run measures no leak (no lookups) and no pool wait: null, not 0.
  const std::filesystem::path dir = relsim::test::scratch("contention-trend");
  std::filesystem::create_directories(dir);
  const std::string burst = (dir / "burst.jsonl").string();
  ASSERT_EQ(run_relsim({"contention", "run", "--scenario", "burst", "--agents", "4", "--tenants", "2", "--history", burst}).code, 0);
  const json one = json::parse(run_relsim({"contention", "trend", "--history", burst, "--json"}).out)["runs"][0];
  EXPECT_TRUE(one["leak"].is_null());
  EXPECT_TRUE(one["pool_wait_p99"].is_null());
  EXPECT_FALSE(one["burst_429"].is_null());
  std::ofstream(dir / "bad.jsonl") << std::ifstream(file).rdbuf() << "{\"scenario\": \"burst\"}\n";
  expect_input_error({"contention", "trend", "--history", (dir / "bad.jsonl").string()}, "line 9 is not a line of relsim contention run --history: it has no success");
  std::ofstream(dir / "empty.jsonl") << "\n";
  expect_input_error({"contention", "trend", "--history", (dir / "empty.jsonl").string()}, "has no run");
  expect_input_error({"contention", "trend", "--history", file, "--json", "--csv"}, "excludes");
  std::ofstream(dir / "typed.jsonl") << "{\"scenario\": \"burst\", \"agents\": \"20\", \"success\": {\"value\": 1, \"ci\": [0, 1]}}\n";
  expect_input_error({"contention", "trend", "--history", (dir / "typed.jsonl").string()}, "line 1 is not a line of relsim contention run --history: its agents is not a whole number");
  // The new scores gate as the others do.
  const auto gate = run_relsim("contention run --scenario interleaved --agents 30 --tenants 3 --concurrency 1 "
                               "--increments 1 --key-bits 2 --require key_collisions<=0");
  EXPECT_EQ(gate.code, 1) << gate.err;  // 30 memos in 4 keys: at least 26 meet another
  EXPECT_NE(gate.err.find("key_collisions"), std::string::npos) << gate.err;
  expect_input_error("contention trend", "--history");
}

TEST(ContentionCli, RefusesBadInputInOneLine) {
  expect_input_error("contention", "needs a subcommand");
  expect_input_error("contention run", "--scenario");
  expect_input_error("contention run --scenario chaos", "scenario = 'chaos'");
  expect_input_error("contention run --scenario long-short --agents 5 --tenants 2", "agents must be >= 6");
  expect_input_error("contention run --scenario long-short --pool 0", "pool = 0");
  expect_input_error("contention run --scenario burst --history /nonexistent/folder/h.jsonl",
                     "cannot append to history file '/nonexistent/folder/h.jsonl': its folder does not exist");
  expect_input_error({"contention", "run", "--scenario", "mixed", "--agent-cmd", "x {tools_url} {tenant}"},
                     "--agent-cmd takes the five tool scenarios");
  expect_input_error("contention run --scenario burst --agent clever", "naive or careful");
  expect_input_error("contention run --scenario burst --agents 0", "agents = 0");
  expect_input_error("contention run --scenario burst --agents 4 --tenants 5", "tenants = 5");
  expect_input_error("contention run --scenario burst --tool-quota 0/60", "tool quota = '0/60'");
  expect_input_error("contention run --scenario burst --deadline 0", "deadline = 0");
  expect_input_error("contention run --scenario burst --require leaks<=0", "leaks");
  // The closed forms' timing and keys: ranges, rounds all at once, the reference agents only.
  expect_input_error("contention run --scenario burst --call-rate 20000", "call rate = 20000");
  expect_input_error("contention run --scenario interleaved --key-bits 65", "key bits = 65");
  expect_input_error("contention run --scenario interleaved --think 11", "think = 11 s");
  expect_input_error("contention run --scenario interleaved --think 0.01 --spread 0", "spread = 0 s");
  expect_input_error("contention run --scenario interleaved --think 0.01 --agents 4 --tenants 2 --concurrency 2",
                     "concurrency = 2 must be the agents (4)");
  expect_input_error({"contention", "run", "--scenario", "interleaved", "--key-bits", "8", "--agent-cmd",
                      "x {tools_url} {tenant}"},
                     "your agent (--agent-cmd) keeps its own");
  expect_input_error("contention run --scenario probe-pairs --call-rate 5", "call rate = 5 paces the burst's calls");
  expect_input_error("contention run --scenario burst --key-bits 8", "key bits = 8 sets interleaved's memo keys");
  expect_input_error("contention run --scenario burst --think 0.01", "think = 0.01 s sets interleaved's rounds");
  expect_input_error("contention run --scenario interleaved --spread 0.5", "--spread sets the rounds of --think");
  expect_input_error("contention run --scenario burst --call-rate 5 --agents 4 --tenants 2 --concurrency 2",
                     "call rate = 5 times every agent at once");
  expect_input_error("contention run --scenario burst --call-rate 0.01 --burst-calls 100", "would last 9900 s");
  expect_input_error("contention run --scenario interleaved --think 1 --spread 10 --increments 100", "would last 1200 s");
  // --agent-cmd: the two required placeholders, no unknown one, a program that exists.
  expect_input_error({"contention", "run", "--scenario", "burst", "--agent-cmd", "node a.mjs {tools_url}"}, "has no {tenant}");
  expect_input_error({"contention", "run", "--scenario", "burst", "--agent-cmd", "node a.mjs {tenant}"},
                     "has no {tools_url}");
  expect_input_error({"contention", "run", "--scenario", "burst", "--agent-cmd", "x {tools_url} {tenant} {colour}"},
                     "{colour} is not a placeholder");
  expect_input_error({"contention", "run", "--scenario", "burst", "--agent", "careful", "--agent-cmd",
                      "x {tools_url} {tenant}"},
                     "not both");
  expect_input_error({"contention", "run", "--scenario", "burst", "--agents", "3", "--tenants", "1", "--agent-cmd",
                      "/nonexistent/agent {tools_url} {tenant}"},
                     "cannot start '/nonexistent/agent'");
}

}  // namespace
