// The tool-call fault lab (examples/tools/README.md): examples/tools/lab.mjs
// drives a naive and a guarded harness on the official MCP SDK against
// `relsim tools serve` over a 4-line plan (timeout, exec_error, partial_write,
// truncate; later calls ok) and six groups of calls: transport, exec,
// exec_side_effect, truncation, service (a tool name the server lacks) and
// validate (a string for an integer). The lab's table, pinned here:
//   naive    6 of 6 escape (no stage caught); 5 report an error that carries
//            no locating fact (stage, parameter, expected, got), the
//            truncation reports nothing and is accepted; the half-written
//            notes/a.txt stays; the server sees 6 tools/call.
//   guarded  transport 1, service 1, validate 1, exec 2 (exec_side_effect
//            rolled back from its undo record: no side effect left), the
//            truncation marked (caught_stage "truncation"); the server sees 4
//            tools/call (the last two never leave the harness).
// `relsim tools audit` then reads the lab's lines with the server's log and
// the sandbox, and must find the same table on its own: the facts counted
// from the error texts, the half-written file in the sandbox, how far each
// call got from the log.
// A fresh server, sandbox and journal per harness: the plan counts calls
// from 0. The packages (examples/tools/package-lock.json) are installed as
// the other harness tests do: npm ci --ignore-scripts into BUILD/tools.
// Skipped when node or npm is missing or npm ci fails (a failure under
// CI=true). Nothing is timed: the 3000 ms hold against the 1000 ms budget
// only decides which side gives up first.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
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
using relsim::test::slurp;
using relsim::test::tail;

// harness.mjs NOTE_TEXT: 40 characters, of which partial_write leaves 20.
const std::string kNoteText = "relsim tools lab: forty characters long.";
const std::vector<std::string> kGroups = {"transport", "exec", "exec_side_effect", "truncation", "service", "validate"};
const std::vector<std::string> kLocatingFacts = {"stage", "parameter", "expected", "got"};

using relsim::test::build_dir;

// One harness's run: its JSON lines by group, the server's log by call, and
// the sandbox and journal it left.
struct LabRun {
  std::map<std::string, json> groups;
  std::vector<json> log;  // sorted by "call"
  fs::path sandbox, journal;
  RunResult lab;
  json audit;  // relsim tools audit --json over the lab's lines, the server's log and the sandbox
  int server_code = -1;
  std::string banner;
};

LabRun run_lab(const fs::path& dir, const std::string& harness) {
  LabRun r;
  const fs::path work = dir / "runs" / harness;
  fs::remove_all(work);
  r.sandbox = work / "sandbox";
  r.journal = work / "journal";
  fs::create_directories(r.sandbox);
  const fs::path plan = work / "plan.jsonl", log = work / "log.jsonl";
  std::ofstream(plan) << "{\"fault\": \"timeout\"}\n{\"fault\": \"exec_error\"}\n"
                         "{\"fault\": \"partial_write\"}\n{\"fault\": \"truncate\"}\n";

  relsim::test::Background serve({relsim::test::relsim_exe(), "tools", "serve", "--port", "0", "--sandbox",
                                   r.sandbox.string(), "--plan", plan.string(), "--log", log.string(), "--hold-ms",
                                   "3000"});
  r.banner = serve.read_line(10);
  const int port = relsim::test::port_from_banner(r.banner);
  EXPECT_EQ(r.banner.rfind("relsim tools: listening on http://127.0.0.1:", 0), 0u) << r.banner;
  EXPECT_GT(port, 0) << r.banner;
  if (port <= 0) return r;

  RunOptions options;
  options.cwd = dir.string();
  options.timeout = 120;  // the lab's own waits: 1 s budget, up to 10 s draining the held answer
  options.new_process_group = true;
  r.lab = relsim::test::run_program({"node", "lab.mjs", "--url", "http://127.0.0.1:" + std::to_string(port) + "/mcp",
                                     "--harness", harness, "--budget-ms", "1000", "--sandbox", r.sandbox.string(),
                                     "--journal", r.journal.string()},
                                    options);
  r.server_code = serve.stop(SIGTERM);
  std::cout << harness << ":\n" << r.lab.out << tail(r.lab.err, 5);

  std::istringstream lines(r.lab.out);
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("group") && j["group"].is_string()) r.groups[j["group"].get<std::string>()] = j;
  }
  std::istringstream logged(slurp(log));
  for (std::string line; std::getline(logged, line);) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("call")) r.log.push_back(j);
  }
  std::sort(r.log.begin(), r.log.end(),
            [](const json& a, const json& b) { return a.value("call", -1) < b.value("call", -1); });

  const fs::path report = work / "report.jsonl";
  std::ofstream(report) << r.lab.out;
  const RunResult audit = relsim::test::run_relsim({"tools", "audit", "--log", report.string(), "--server-log",
                                                    log.string(), "--sandbox", r.sandbox.string(), "--json"});
  EXPECT_EQ(audit.code, 0) << audit.err;
  r.audit = json::parse(audit.out, nullptr, false);
  return r;
}

// Installs examples/tools' packages into BUILD/tools; "" on success, else why not.
std::string install_tools(fs::path& dir) {
  dir = build_dir() / "tools";
  return relsim::test::npm_install(fs::path(relsim::test::source_dir()) / "examples" / "tools", dir, {},
                                   "@modelcontextprotocol/sdk");
}

// The common checks: the lab ran all six groups in order, the server stopped cleanly.
void expect_complete(const LabRun& r, const std::string& harness) {
  EXPECT_EQ(r.lab.code, 0) << tail(r.lab.out + r.lab.err);
  EXPECT_EQ(r.server_code, 0);
  ASSERT_EQ(r.groups.size(), kGroups.size()) << r.lab.out;
  std::istringstream lines(r.lab.out);
  std::vector<std::string> order;
  for (std::string line; std::getline(lines, line);) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("group")) order.push_back(j["group"].get<std::string>());
  }
  EXPECT_EQ(order, kGroups);
  for (const auto& [group, j] : r.groups) EXPECT_EQ(j["harness"], json(harness)) << j.dump();
}

// One field of every call the audit lists, in order.
std::vector<json> audited(const LabRun& r, const char* key) {
  std::vector<json> out;
  if (!r.audit.is_object() || r.audit["harnesses"].size() != 1) {
    ADD_FAILURE() << "the audit is not one harness's: " << r.audit.dump();
    return out;
  }
  for (const json& c : r.audit["harnesses"][0]["per_call"]) out.push_back(c[key]);
  return out;
}

// The tools and faults of the server's log, in call order.
std::vector<std::string> logged(const LabRun& r, const char* key) {
  std::vector<std::string> out;
  for (const json& j : r.log) out.push_back(j.value(key, "?"));
  return out;
}

#define RELSIM_NEED_TOOLS_LAB(dir)                     \
  do {                                                 \
    const std::string why = install_tools(dir);        \
    if (!why.empty()) RELSIM_SKIP_OR_FAIL(why);        \
  } while (0)

TEST(ToolsLab, NaiveHarnessLetsAllSixEscapeAndLeavesTheHalfWrittenFile) {
  fs::path dir;
  RELSIM_NEED_TOOLS_LAB(dir);
  const LabRun r = run_lab(dir, "naive");
  expect_complete(r, "naive");
  if (r.groups.size() != kGroups.size()) return;

  int escaped = 0, reported = 0;
  for (const std::string& group : kGroups) {
    const json& j = r.groups.at(group);
    SCOPED_TRACE(j.dump());
    escaped += j["caught_stage"].is_null();
    reported += j["reported"] == json(true);
    ASSERT_TRUE(j["facts"].is_object());
    for (const std::string& fact : kLocatingFacts) EXPECT_FALSE(j["facts"].contains(fact)) << fact;
    EXPECT_EQ(j["rollback"], json("none"));
    EXPECT_EQ(j["side_effect_left"], json(group == "exec_side_effect"));
    EXPECT_EQ(j["result_accepted"], json(group == "truncation"));
    EXPECT_EQ(j["reported"], json(group != "truncation"));
    if (group == "truncation") {
      EXPECT_TRUE(j["error"].is_null());
      EXPECT_EQ(j["facts"], json::object());
    } else {
      EXPECT_TRUE(j["error"].is_string() && !j["error"].get<std::string>().empty());
    }
  }
  EXPECT_EQ(escaped, 6);
  EXPECT_EQ(reported, 5);

  // The server saw all six calls, the model's own two mistakes included.
  EXPECT_EQ(r.log.size(), 6u) << r.lab.out;
  EXPECT_EQ(logged(r, "tool"), (std::vector<std::string>{"add", "add", "note_write", "dump", "note_writer", "add"}));
  EXPECT_EQ(logged(r, "fault"),
            (std::vector<std::string>{"timeout", "exec_error", "partial_write", "truncate", "ok", "ok"}));
  // The half-written note stays: the first half of the text.
  const fs::path note = r.sandbox / "notes" / "a.txt";
  ASSERT_TRUE(fs::exists(note));
  EXPECT_EQ(slurp(note), kNoteText.substr(0, kNoteText.size() / 2));

  // relsim tools audit reads the same: 6/6 escaped, 5 errors with nothing to
  // locate them, the half-written file found in the sandbox.
  const json& h = r.audit["harnesses"][0];
  EXPECT_EQ(h["escaped"], 6);
  EXPECT_EQ(h["reported"], 5);
  EXPECT_EQ(h["unlocated"], 5);
  EXPECT_EQ(h["side_effects_left"], 1);
  EXPECT_EQ(h["caught"], json::object());
  EXPECT_EQ(audited(r, "reported_by"),
            (std::vector<json>{"passed_on", "passed_on", "passed_on", "nobody", "passed_on", "passed_on"}));
  EXPECT_EQ(audited(r, "facts"), std::vector<json>(6, json::array()));
  EXPECT_EQ(audited(r, "side_effect_from")[2], "sandbox");
  EXPECT_EQ(audited(r, "got_to"),
            (std::vector<json>{"transport", "exec", "exec", "done", "service", "validate"}));
}

TEST(ToolsLab, GuardedHarnessCatchesEachAtItsStageAndRollsBackThePartialWrite) {
  fs::path dir;
  RELSIM_NEED_TOOLS_LAB(dir);
  const LabRun r = run_lab(dir, "guarded");
  expect_complete(r, "guarded");
  if (r.groups.size() != kGroups.size()) return;

  const std::map<std::string, std::string> stage = {{"transport", "transport"}, {"exec", "exec"},
                                                    {"exec_side_effect", "exec"}, {"truncation", "truncation"},
                                                    {"service", "service"}, {"validate", "validate"}};
  std::map<std::string, int> by_stage;
  for (const std::string& group : kGroups) {
    const json& j = r.groups.at(group);
    SCOPED_TRACE(j.dump());
    ASSERT_TRUE(j["caught_stage"].is_string());
    ++by_stage[j["caught_stage"].get<std::string>()];
    EXPECT_EQ(j["caught_stage"], json(stage.at(group)));
    EXPECT_EQ(j["reported"], json(true));
    EXPECT_TRUE(j["error"].is_string());
    ASSERT_TRUE(j["facts"].is_object());
    EXPECT_EQ(j["facts"].value("stage", ""), stage.at(group));
    EXPECT_EQ(j["side_effect_left"], json(false));
    EXPECT_EQ(j["rollback"], json(group == "exec_side_effect" ? "done" : "none"));
    EXPECT_EQ(j["result_accepted"], json(false));
  }
  EXPECT_EQ(by_stage, (std::map<std::string, int>{
                          {"transport", 1}, {"service", 1}, {"validate", 1}, {"exec", 2}, {"truncation", 1}}));
  const json& validate = r.groups.at("validate")["facts"];
  EXPECT_EQ(validate, (json{{"stage", "validate"}, {"tool", "add"}, {"parameter", "a"}, {"expected", "integer"},
                            {"got", "string"}}));
  EXPECT_EQ(r.groups.at("service")["facts"], (json{{"stage", "service"}, {"tool", "note_writer"}}));
  EXPECT_EQ(r.groups.at("truncation")["facts"],
            (json{{"stage", "truncation"}, {"tool", "dump"}, {"expected", "1000"}, {"got", "100"}}));

  // Only the four planned calls reached the server.
  EXPECT_EQ(r.log.size(), 4u) << r.lab.out;
  EXPECT_EQ(logged(r, "tool"), (std::vector<std::string>{"add", "add", "note_write", "dump"}));
  EXPECT_EQ(logged(r, "fault"), (std::vector<std::string>{"timeout", "exec_error", "partial_write", "truncate"}));
  // The partial write was undone, and its undo record replayed and removed.
  EXPECT_FALSE(fs::exists(r.sandbox / "notes" / "a.txt"));
  ASSERT_TRUE(fs::is_directory(r.journal));
  EXPECT_TRUE(fs::is_empty(r.journal));

  // relsim tools audit reads the same: each caught at its own stage, every
  // locating fact that applies named, nothing left, the last two never sent.
  const json& h = r.audit["harnesses"][0];
  EXPECT_EQ(h["escaped"], 0);
  EXPECT_EQ(h["unlocated"], 0);
  EXPECT_EQ(h["side_effects_left"], 0);
  EXPECT_EQ(h["rolled_back"], 1);
  EXPECT_EQ(h["caught"], (json{{"exec", 2}, {"service", 1}, {"transport", 1}, {"truncation", 1}, {"validate", 1}}));
  EXPECT_EQ(audited(r, "reported_by"), std::vector<json>(6, "harness"));
  EXPECT_EQ(audited(r, "facts")[2], (json{"stage", "tool"}));
  EXPECT_EQ(audited(r, "facts")[3], (json{"stage", "tool", "expected", "got"}));
  EXPECT_EQ(audited(r, "facts")[5], (json{"stage", "tool", "parameter", "expected", "got"}));
  EXPECT_EQ(audited(r, "facts_possible"), (std::vector<json>{2, 2, 2, 4, 2, 5}));
  EXPECT_EQ(audited(r, "got_to"),
            (std::vector<json>{"transport", "exec", "exec", "done", "not_sent", "not_sent"}));
}

}  // namespace
