// Tool calls in whole tasks, live against exact (docs/tools.md, "Tasks"):
// examples/tools/tasks.mjs runs 200 tasks of 4 note_write calls through the
// naive and the guarded harness (the official MCP SDK) against `relsim tools
// serve`, whose faults are drawn from the chain, independent (q = p = 0.12),
// seeded, over six kinds. `relsim tools audit` gives each task's class from
// the harness's lines, the server's call log and the sandbox; `relsim exact
// --tool-faults ... --harness H` (docs/tool_model.md) gives each class's
// probability for the same per-call faults, with no model faults (p = 0), so
// that a task is its four tool calls. Every exact probability must lie in
// the 99.9% Wilson interval of the live count (the 95% coverage is recorded
// as a property). With the seed fixed and the calls made one at a time the
// server's faults are the same call for call on every run.
//
// The server's draw (a fault with probability p, then a kind by weight) is
// turned into the model's stage probabilities, each conditional on the
// stages before it: transport = P(timeout or drop), service =
// P(unknown_tool) / (1 - transport), and so on. The guarded harness catches
// a truncated note_write by its confirmation text and reports the stage
// "truncation"; the model counts that catch under exec.
//
// Skipped when node or npm is missing or npm ci fails (a failure under
// CI=true). The only waits are the server's 3 s hold against a 2 s budget.
#include <gtest/gtest.h>

#include <signal.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/npm_install.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using relsim::test::RunOptions;
using relsim::test::RunResult;
using relsim::test::tail;

constexpr double kP = 0.12;
constexpr int kTasks = 200, kSteps = 4;
const std::vector<std::pair<std::string, double>> kKinds = {{"timeout", 0.5},    {"drop", 1.5},
                                                            {"unknown_tool", 1}, {"exec_error", 1},
                                                            {"partial_write", 1}, {"truncate", 1}};

// %.17g: the exact value of a double, for relsim's strict reader.
std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// The server's per-call draw as the model's conditional stage probabilities.
std::string stage_probabilities() {
  double total = 0.0;
  std::map<std::string, double> pi;
  for (const auto& [kind, w] : kKinds) total += w;
  for (const auto& [kind, w] : kKinds) pi[kind] = kP * w / total;
  const std::vector<std::pair<std::string, double>> unconditional = {
      {"transport", pi["timeout"] + pi["drop"]}, {"service", pi["unknown_tool"]}, {"exec", pi["exec_error"]},
      {"partial_write", pi["partial_write"]},    {"truncate", pi["truncate"]}};
  std::string spec;
  double left = 1.0;  // P(no stage before this one failed)
  for (const auto& [stage, p] : unconditional) {
    spec += (spec.empty() ? "" : ",") + stage + "=" + number(p / left);
    left -= p;
  }
  return spec;
}

std::string kinds_spec() {
  std::string spec;
  for (const auto& [kind, w] : kKinds) spec += (spec.empty() ? "" : ",") + kind + "=" + number(w);
  return spec;
}

// The Wilson score interval of k in n at normal quantile z (Wilson 1927).
std::pair<double, double> wilson(double k, double n, double z) {
  const double centre = (k + z * z / 2) / (n + z * z);
  const double half = z / (n + z * z) * std::sqrt(k * (n - k) / n + z * z / 4);
  return {centre - half, centre + half};
}

// One harness's tasks against a fresh server; the audit's task classes.
json live_classes(const fs::path& dir, const std::string& harness) {
  const fs::path work = dir / "tasks" / harness;
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path box = work / "sandbox", log = work / "calls.jsonl", report = work / "report.jsonl";
  relsim::test::Background serve({relsim::test::relsim_exe(), "tools", "serve", "--port", "0", "--sandbox",
                                   box.string(), "--p", number(kP), "--kinds", kinds_spec(), "--seed", "20261203",
                                   "--log", log.string(), "--hold-ms", "3000"});
  const int port = relsim::test::port_from_banner(serve.read_line(10));
  EXPECT_GT(port, 0);
  if (port <= 0) return json();
  RunOptions options;
  options.cwd = dir.string();
  options.timeout = 300;
  options.new_process_group = true;
  const RunResult tasks = relsim::test::run_program(
      {"node", "tasks.mjs", "--url", "http://127.0.0.1:" + std::to_string(port) + "/mcp", "--harness", harness,
       "--tasks", std::to_string(kTasks), "--steps", std::to_string(kSteps), "--budget-ms", "2000", "--sandbox",
       box.string(), "--journal", (work / "journal").string()},
      options);
  EXPECT_EQ(serve.stop(SIGTERM), 0);
  EXPECT_EQ(tasks.code, 0) << tail(tasks.err);
  std::ofstream(report) << tasks.out;
  const RunResult audit = relsim::test::run_relsim({"tools", "audit", "--log", report.string(), "--server-log",
                                                    log.string(), "--sandbox", box.string(), "--json"});
  EXPECT_EQ(audit.code, 0) << audit.err;
  std::cout << relsim::test::run_relsim({"tools", "audit", "--log", report.string(), "--server-log", log.string(),
                                         "--sandbox", box.string()})
                   .out;
  const json j = json::parse(audit.out, nullptr, false);
  if (!j.is_object()) return json();
  EXPECT_EQ(j["harnesses"][0]["tasks"], kTasks);
  return j["harnesses"][0]["task_classes"];
}

// relsim exact's probability of each class for the same faults.
std::map<std::string, double> exact_classes(const std::string& harness) {
  const RunResult r = relsim::test::run_relsim({"exact", "--p", "0", "--n", std::to_string(kSteps), "--r", "0",
                                                "--tool-faults", stage_probabilities(), "--harness", harness, "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  std::map<std::string, double> out{{"done", j["success"].get<double>()}};
  for (const auto& [name, p] : j["tool_outcomes"].items()) out[name] = p.get<double>();
  return out;
}

void expect_agreement(const std::string& harness) {
  fs::path dir = fs::path(relsim::test::relsim_exe()).parent_path() / "tools";
  const std::string why = relsim::test::npm_install(fs::path(relsim::test::source_dir()) / "examples" / "tools", dir,
                                                    {}, "@modelcontextprotocol/sdk");
  if (!why.empty()) RELSIM_SKIP_OR_FAIL(why);
  const json live = live_classes(dir, harness);
  ASSERT_TRUE(live.is_object());
  std::map<std::string, double> counts;
  for (const auto& [name, c] : live.items()) {
    // The model counts a caught truncation under exec.
    const std::string model_name = name == "tool_error:truncation" ? "tool_error:exec" : name;
    counts[model_name] += c["tasks"].get<double>();
  }
  const std::map<std::string, double> exact = exact_classes(harness);
  double total = 0.0;
  int covered_95 = 0, classes = 0;
  std::map<std::string, bool> seen;
  for (const auto& [name, p] : exact) seen[name] = true;
  for (const auto& [name, k] : counts) seen[name] = true;
  for (const auto& [name, unused] : seen) {
    const double k = counts.count(name) ? counts.at(name) : 0.0;
    const double p = exact.count(name) ? exact.at(name) : 0.0;
    total += p;
    const auto [lo, hi] = wilson(k, kTasks, 3.2905);  // 99.9%
    const auto [lo95, hi95] = wilson(k, kTasks, 1.96);
    ++classes;
    covered_95 += lo95 <= p && p <= hi95;
    std::cout << harness << " " << name << ": live " << k << "/" << kTasks << " [" << lo95 << ", " << hi95
              << "] (95%), exact " << p << "\n";
    EXPECT_TRUE(lo <= p && p <= hi) << name << ": exact " << p << " outside the 99.9% Wilson interval [" << lo << ", "
                                    << hi << "] of " << k << "/" << kTasks;
  }
  EXPECT_NEAR(total, 1.0, 1e-9);  // the model's classes are all of a task's ends (no model faults)
  ::testing::Test::RecordProperty("covered_at_95", std::to_string(covered_95) + "/" + std::to_string(classes));
}

TEST(ToolsTasks, NaiveHarnessTaskClassesAgreeWithExact) { expect_agreement("naive"); }

TEST(ToolsTasks, GuardedHarnessTaskClassesAgreeWithExact) { expect_agreement("guarded"); }

}  // namespace
