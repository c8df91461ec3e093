// The audit over two providers (docs/audit.md, Two providers): an audit plan
// with a fallback column served by the mock with its request log, relsim's
// client falling back after K requests of a call, then `relsim audit`:
//   - a positive control first: the right policy and K, 0 mismatches;
//   - --infer names the policy and the fallback (after K) from the log alone;
//   - a wrong K, or no fallback, is found by the provider check, task by task,
//     and said in words;
//   - a fallback plan's log audited against a plan without a column, or
//     --fallback-after over one, is bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "relsim/core/fallback.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/live/live.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/server/server.hpp"
#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace relsim {
namespace {

constexpr int kAfter = 2;

struct Served {
  std::string plan, log, outcomes;
  std::int64_t second = 0;  // requests the client sent to the second provider
};

// An audit plan (every call's draws up to 6 requests) with a fallback
// column, served to relsim's layered client (s = 1, r = 1: 4 requests a
// call) that falls back after kAfter; the plan, the server's request log and
// the client's outcomes as files.
Served serve_and_run() {
  const auto dir = test::scratch("fallback_audit");
  Served out{(dir / "plan.jsonl").string(), (dir / "log.jsonl").string(), (dir / "outcomes.csv").string(), 0};
  Policy policy{3, 1};
  policy.kind = PolicyKind::layered;
  policy.s = 1;
  Fallback fb;
  fb.after = kAfter;
  fb.second = Model{0.15, 0.6};
  fb.kinds = parse_fault_weights("http_529=1,cut=1");
  SimConfig config;
  config.tasks = 120;
  config.seed = 7;
  config.kinds = parse_fault_weights("http_529=1,cut=1,malformed=1");
  config.fallback = fb;
  const Plan plan = generate_audit_plan(Model{0.3, 0.8}, policy, config, 6);
  std::ofstream(out.plan) << write_plan(plan);
  ServerConfig server_config;
  server_config.log_path = out.log;
  std::vector<LiveTask> tasks;
  {
    Server server(server_config, plan);
    ClientConfig client;
    client.port = static_cast<std::uint16_t>(server.port());
    client.policy = policy;
    client.timing = live_timing();
    client.timing.header_timeout = client.timing.idle_timeout = 1.0;
    client.timing.call_timeout = client.timing.task_timeout = 60.0;
    client.concurrency = 8;
    client.fallback_after = kAfter;
    tasks = run_live(client, 0, config.tasks);
    server.stop();
  }
  std::string csv = "task,outcome,detail\n";
  for (const LiveTask& t : tasks) {
    csv += fmt::format("{},{},\n", t.task, to_string(t.outcome.outcome));
    out.second += t.fallback_requests;
  }
  std::ofstream(out.outcomes) << csv;
  return out;
}

const Served& served() {
  static const Served s = serve_and_run();
  return s;
}

nlohmann::json audit_json(const std::string& extra) {
  const Served& s = served();
  const auto r = test::run_relsim(fmt::format("audit --plan {} --log {} --outcomes {} --no-wait-check --json {}",
                                              s.plan, s.log, s.outcomes, extra));
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(FallbackAudit, TheRightPolicyAndFallbackHaveNoMismatch) {
  ASSERT_GT(served().second, 0);
  const auto j = audit_json("--policy layered --s 1 --r 1");
  EXPECT_EQ(j["mismatches"]["total"], 0) << j["mismatches"].dump();
  EXPECT_EQ(j["fallback"]["after"], kAfter);  // the plan's own K
  EXPECT_EQ(j["fallback"]["second_requests"], served().second);
  EXPECT_EQ(j["mismatches"]["by_check"]["provider"], 0);
}

TEST(FallbackAudit, InferNamesThePolicyAndTheFallback) {
  const auto j = audit_json("--infer");
  EXPECT_EQ(j["mismatches"]["total"], 0) << j["mismatches"].dump();
  EXPECT_EQ(j["policy"]["policy"], "layered");
  EXPECT_EQ(j["fallback"]["candidates"], nlohmann::json::array({kAfter}));
  EXPECT_EQ(j["fallback"]["described"], "after 2");
}

// The tasks a client with a fallback after `after` would have sent some
// request of to the other provider, read from the log alone: each task's
// requests in index order, a call ending at its good answer, request j of a
// call (from 0) on the second provider exactly when j >= after.
std::set<std::int64_t> misrouted_in_log(const std::string& log, int after) {
  std::map<std::int64_t, std::map<std::int64_t, std::pair<bool, bool>>> tasks;  // task -> index -> (ok, fallback)
  std::istringstream in(test::slurp(log));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("index") || !j["index"].is_number_integer()) continue;
    tasks[j["task"].get<std::int64_t>()][j["index"].get<std::int64_t>()] = {j["entry"] == "ok",
                                                                              j.value("fallback", false)};
  }
  std::set<std::int64_t> out;
  for (const auto& [task, requests] : tasks) {
    int j = 0;
    for (const auto& [index, r] : requests) {
      if (r.second != (after > 0 && j >= after)) out.insert(task);
      j = r.first ? 0 : j + 1;
    }
  }
  return out;
}

TEST(FallbackAudit, AWrongFallbackIsFoundByTheProviderCheck) {
  EXPECT_TRUE(misrouted_in_log(served().log, kAfter).empty());  // the client's own K misroutes nothing
  for (const int wrong : {0, 1, 3}) {
    SCOPED_TRACE(wrong);
    const auto j = audit_json(fmt::format("--policy layered --s 1 --r 1 --fallback-after {} --per-task", wrong));
    EXPECT_GT(j["mismatches"]["by_check"]["provider"].get<int>(), 0);
    EXPECT_EQ(j["mismatches"]["by_check"]["provider"], j["mismatches"]["total"]);
    // Exactly the tasks the log itself shows misrouted under that K.
    std::set<std::int64_t> flagged;
    for (const auto& row : j["per_task"])
      for (const auto& check : row["checks"])
        if (check == "provider") flagged.insert(row["task"].get<std::int64_t>());
    EXPECT_EQ(flagged, misrouted_in_log(served().log, wrong));
    EXPECT_NE(j["mismatches"]["findings"].dump().find("moved to the second provider at another request"),
              std::string::npos)
        << j["mismatches"]["findings"].dump();
  }
}

TEST(FallbackAudit, APlanWithoutAColumnIsBadInput) {
  const Served& s = served();
  // The same plan without its columns: the log's fallback requests belong to no plan entry.
  Plan bare = read_plan(s.plan);
  bare.header.erase("fallback");
  for (TaskPlan& t : bare.tasks) t.fallback.clear();
  const std::string bare_path = (test::scratch("fallback_audit") / "bare.jsonl").string();
  std::ofstream(bare_path) << write_plan(bare);
  test::expect_input_error(fmt::format("audit --plan {} --log {} --policy layered --s 1 --r 1", bare_path, s.log),
                           "went to the second provider's path, and the plan has no fallback column");
  test::expect_input_error(
      fmt::format("audit --plan {} --log {} --policy layered --fallback-after 2", bare_path, s.log),
      "has no fallback column");
  test::expect_input_error(fmt::format("audit --plan {} --log {} --infer --fallback-after 2", s.plan, s.log),
                           "--fallback-after and --infer both given");
}

}  // namespace
}  // namespace relsim
