// The MCP tools server's parts without a network (docs/tools.md): the plan
// file, the faults drawn from the chain, the sandbox's path guard, and every
// JSON-RPC answer of McpService, each fault's effect on the sandbox and the
// call log included. Expected values come from the protocol's rules and
// plain arithmetic (a sum, a tenth, half a text), not from the code.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "relsim/tools/mcp_service.hpp"
#include "relsim/tools/tool_audit.hpp"
#include "relsim/tools/tool_catalog.hpp"
#include "support/files.hpp"
#include "support/input_error.hpp"

namespace relsim::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using relsim::test::input_error;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = relsim::test::scratch("tools") / name;
  fs::remove_all(dir);
  return dir;
}

std::vector<json> lines_of(const fs::path& file) {
  std::vector<json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

json call(McpService& s, int id, const std::string& tool, const json& args, Delivery* delivery = nullptr) {
  const McpAnswer a = s.handle(
      json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}}
          .dump());
  EXPECT_EQ(a.status, 200);
  if (delivery) *delivery = a.delivery;
  return json::parse(a.body);
}

std::string text_of(const json& reply) { return reply.at("result").at("content").at(0).at("text").get<std::string>(); }
bool is_error(const json& reply) { return reply.at("result").value("isError", false); }

// ---- the plan file -----------------------------------------------------------

TEST(ToolPlan, ReadsOneFaultPerLineAndRefusesWhatIsNotOne) {
  const auto plan = read_tool_plan("{\"fault\":\"timeout\"}\n{\"call\":1,\"fault\":\"ok\"}\n{\"fault\":\"truncate\"}\n");
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0], ToolFault::timeout);
  EXPECT_EQ(plan[1], ToolFault::ok);
  EXPECT_EQ(plan[2], ToolFault::truncate);
  EXPECT_NE(input_error([] { read_tool_plan("{\"fault\":\"timeout\"}\nnot json\n"); }).find("line 2"), std::string::npos);
  EXPECT_NE(input_error([] { read_tool_plan("{\"fault\":\"slow\"}\n"); }).find("'slow' is not a fault"), std::string::npos);
  EXPECT_NE(input_error([] { read_tool_plan("{\"fault\":\"ok\",\"call\":3}\n"); }).find("must be 0"), std::string::npos);
  EXPECT_NE(input_error([] { read_tool_plan("{\"fault\":\"ok\",\"when\":3}\n"); }).find("unknown key 'when'"),
            std::string::npos);
  EXPECT_NE(input_error([] { read_tool_plan("{\"fault\":3}\n"); }).find("must be a string"), std::string::npos);
  EXPECT_NE(input_error([] { read_tool_plan("\n"); }).find("line 1"), std::string::npos);
}

TEST(ToolPlan, CallsPastThePlanAreServed) {
  ToolFaultSource source({ToolFault::drop});
  EXPECT_EQ(source.next(), ToolFault::drop);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(source.next(), ToolFault::ok);
  EXPECT_EQ(source.calls(), 6u);
}

TEST(ToolPlan, WeightsAreReadByName) {
  const ToolFaultWeights w = parse_tool_fault_weights("timeout=1,truncate=3");
  EXPECT_EQ(w.weight[0], 1.0);
  EXPECT_EQ(w.weight[5], 3.0);
  EXPECT_EQ(w.weight[1] + w.weight[2] + w.weight[3] + w.weight[4], 0.0);
  EXPECT_NE(input_error([] { parse_tool_fault_weights("ok=1"); }).find("ok"), std::string::npos);
  EXPECT_NE(input_error([] { parse_tool_fault_weights("late=1"); }).find("late"), std::string::npos);
  EXPECT_FALSE(input_error([] { parse_tool_fault_weights("timeout=-1"); }).empty());
}

// ---- faults drawn from the chain -----------------------------------------------

// Over 400,000 calls: the share of failed calls is p, a failed call follows a
// failed one with probability q, and the faults share out by weight, each
// within 5 standard errors.
TEST(ToolFaultsDrawn, FollowTheChainAndTheWeights) {
  relsim::Model model;
  model.p = 0.2;
  model.q = 0.7;
  ToolFaultWeights w = parse_tool_fault_weights("timeout=1,exec_error=3");
  ToolFaultSource source(model, w, 20261203);
  const int calls = 400'000;
  int bad = 0, bad_after_bad = 0, after_bad = 0, timeouts = 0, others = 0;
  bool last = false;
  for (int k = 0; k < calls; ++k) {
    const ToolFault f = source.next();
    const bool b = f != ToolFault::ok;
    bad += b;
    if (last) {
      ++after_bad;
      bad_after_bad += b;
    }
    timeouts += f == ToolFault::timeout;
    others += b && f != ToolFault::timeout && f != ToolFault::exec_error;
    last = b;
  }
  // The share of bad calls has a variance inflated by the bursts: the
  // long-run variance of a two-state chain, p(1-p)(1+r)/(1-r), r = q - p0.
  const double p0 = model.p * (1 - model.q) / (1 - model.p);
  const double r = model.q - p0;
  const double se_p = std::sqrt(model.p * (1 - model.p) * (1 + r) / (1 - r) / calls);
  EXPECT_NEAR(static_cast<double>(bad) / calls, model.p, 5 * se_p);
  const double q_hat = static_cast<double>(bad_after_bad) / after_bad;
  EXPECT_NEAR(q_hat, model.q, 5 * std::sqrt(model.q * (1 - model.q) / after_bad));
  const double share = static_cast<double>(timeouts) / bad;
  EXPECT_NEAR(share, 0.25, 5 * std::sqrt(0.25 * 0.75 / bad));
  EXPECT_EQ(others, 0);
}

TEST(ToolFaultsDrawn, TheSameSeedGivesTheSameFaults) {
  relsim::Model model;
  model.p = 0.3;
  model.q = 0.6;
  ToolFaultSource a(model, {}, 7), b(model, {}, 7), c(model, {}, 8);
  int same = 0, differ = 0;
  for (int k = 0; k < 1000; ++k) {
    const ToolFault x = a.next(), y = b.next(), z = c.next();
    same += x == y;
    differ += x != z;
  }
  EXPECT_EQ(same, 1000);
  EXPECT_GT(differ, 0);
  relsim::Model bad_model;
  bad_model.p = 1.2;
  EXPECT_NE(input_error([&] { ToolFaultSource(bad_model, {}, 1); }).find("1.2"), std::string::npos);
}

// ---- the sandbox ---------------------------------------------------------------

TEST(ToolSandbox, RefusesEveryPathThatCouldLeaveIt) {
  const fs::path root = fresh_dir("guard");
  Sandbox box(root / "box");
  std::string why;
  EXPECT_FALSE(box.resolve("notes/a.txt", why).empty()) << why;
  for (const std::string& bad : std::vector<std::string>{"", "/etc/passwd", "..", "../x", "a/../../x", "a/..", "./a", "a//b", "a/", "a\\b",
                                std::string("a\0b", 3), "a\nb", std::string(2000, 'a')}) {
    why.clear();
    EXPECT_TRUE(box.resolve(bad, why).empty()) << "accepted '" << bad << "'";
    EXPECT_NE(why.find("is refused"), std::string::npos) << why;
  }
  // A link inside the sandbox that leads out of it.
  fs::create_directories(root / "outside");
  fs::create_directory_symlink(root / "outside", root / "box" / "link");
  why.clear();
  EXPECT_TRUE(box.resolve("link/x.txt", why).empty());
  EXPECT_NE(why.find("leads out of the sandbox"), std::string::npos) << why;
}

// ---- the protocol --------------------------------------------------------------

class McpServiceTest : public ::testing::Test {
 protected:
  McpService make(std::vector<ToolFault> plan = {}) {
    dir = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    ToolsConfig c;
    c.sandbox = dir / "box";
    c.log = dir / "calls.jsonl";
    return McpService(c, ToolFaultSource(std::move(plan)));
  }
  json answer(McpService& s, const std::string& body, int status = 200) {
    const McpAnswer a = s.handle(body);
    EXPECT_EQ(a.status, status) << body;
    return a.body.empty() ? json() : json::parse(a.body);
  }
  fs::path dir;
};

TEST_F(McpServiceTest, AnswersTheProtocolsMethods) {
  McpService s = make();
  const json init = answer(s, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})");
  EXPECT_EQ(init["id"], 1);
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-03-26");
  EXPECT_TRUE(init["result"]["capabilities"].contains("tools"));
  EXPECT_EQ(init["result"]["serverInfo"]["name"], "relsim-tools");
  EXPECT_TRUE(answer(s, R"({"jsonrpc":"2.0","method":"notifications/initialized"})", 202).is_null());
  EXPECT_TRUE(answer(s, R"({"jsonrpc":"2.0","id":9,"result":{}})", 202).is_null());
  EXPECT_EQ(answer(s, R"({"jsonrpc":"2.0","id":"p","method":"ping"})")["result"], json::object());
  const json list = answer(s, R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  std::vector<std::string> names;
  for (const json& t : list["result"]["tools"]) {
    names.push_back(t["name"]);
    EXPECT_EQ(t["inputSchema"]["type"], "object");
    EXPECT_FALSE(t["inputSchema"]["required"].empty());
    EXPECT_EQ(t["inputSchema"]["additionalProperties"], false);
  }
  // The three of the tool-call lab first, then the shared tools (shared_tools_test.cpp).
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"note_write", "dump", "add"}));
  EXPECT_EQ(s.calls(), 0u);  // none of these is a tool call
}

TEST_F(McpServiceTest, BadMessagesGetJsonRpcErrors) {
  McpService s = make();
  const auto code = [&](const std::string& body) { return answer(s, body)["error"]["code"].get<int>(); };
  EXPECT_EQ(code("{not json"), -32700);
  EXPECT_EQ(code(""), -32700);
  EXPECT_EQ(code(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])"), -32600);  // a batch
  EXPECT_EQ(code(R"("ping")"), -32600);
  EXPECT_EQ(code(R"({"id":1,"method":"ping"})"), -32600);
  EXPECT_EQ(code(R"({"jsonrpc":"1.0","id":1,"method":"ping"})"), -32600);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":[1],"method":"ping"})"), -32600);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":7})"), -32600);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1})"), -32600);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})"), -32601);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]})"), -32602);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}})"), -32602);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":[2,3]}})"), -32602);
  EXPECT_EQ(s.calls(), 0u);  // protocol errors are not tool calls
  // Deeply nested input is refused as JSON by the parser's own limits or answered; never a crash.
  const McpAnswer deep = s.handle(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(deep.status, 200);
}

TEST_F(McpServiceTest, ToolsDoWhatTheySayWhenServed) {
  McpService s = make();
  EXPECT_EQ(text_of(call(s, 1, "add", {{"a", 40}, {"b", 2}})), "42");
  EXPECT_EQ(text_of(call(s, 2, "add", {{"a", -9'000'000'000'000}, {"b", 1}})), "-8999999999999");
  EXPECT_EQ(text_of(call(s, 3, "dump", {{"n", 1000}})).size(), 1000u);
  EXPECT_EQ(text_of(call(s, 4, "dump", {{"n", 0}})), "");
  EXPECT_EQ(text_of(call(s, 5, "note_write", {{"path", "notes/a.txt"}, {"text", "hello"}})), "wrote 5 characters to notes/a.txt");
  EXPECT_EQ(relsim::test::slurp(dir / "box" / "notes" / "a.txt"), "hello");
  // Bad arguments: a terse error to the client, the reason in the log.
  for (const json& args : {json{{"a", "2"}, {"b", 3}}, json{{"a", 2}}, json{{"a", 2}, {"b", 3}, {"c", 4}},
                           json{{"a", 2.5}, {"b", 3}}, json{{"a", 9'223'372'036'854'775'807LL}, {"b", 1}}}) {
    const json r = call(s, 6, "add", args);
    EXPECT_TRUE(is_error(r)) << args;
    EXPECT_EQ(text_of(r), "Invalid arguments");
  }
  EXPECT_TRUE(is_error(call(s, 7, "dump", {{"n", 1'000'001}})));
  EXPECT_TRUE(is_error(call(s, 8, "dump", {{"n", -1}})));
  EXPECT_TRUE(is_error(call(s, 9, "note_write", {{"path", "../escape.txt"}, {"text", "x"}})));
  EXPECT_FALSE(fs::exists(dir / "escape.txt"));
  const json unknown = call(s, 10, "note_writer", json::object());
  EXPECT_EQ(unknown["error"]["code"], -32602);
  const auto log = lines_of(dir / "calls.jsonl");
  ASSERT_EQ(log.size(), 14u);
  EXPECT_EQ(log[0]["stage"], "done");
  EXPECT_EQ(log[5]["stage"], "validate");
  EXPECT_NE(log[5]["error"].get<std::string>().find("parameter 'a'"), std::string::npos);
  EXPECT_EQ(log[13]["stage"], "service");
  EXPECT_EQ(log[13]["answer"], "rpc_error");
  EXPECT_EQ(log[13]["sandbox"]["notes/a.txt"], 5);
  for (std::size_t k = 0; k < log.size(); ++k) EXPECT_EQ(log[k]["call"], k);
}

TEST_F(McpServiceTest, EachFaultDoesWhatTheDocsSay) {
  const std::string text = "0123456789abcdefghijklmnopqrstuvwxyzABCD";  // 40 characters
  McpService s = make({ToolFault::timeout, ToolFault::drop, ToolFault::unknown_tool, ToolFault::exec_error,
                       ToolFault::partial_write, ToolFault::truncate, ToolFault::exec_error, ToolFault::partial_write});
  Delivery d{};
  // timeout: served, held.
  EXPECT_EQ(text_of(call(s, 0, "note_write", {{"path", "t.txt"}, {"text", "held"}}, &d)), "wrote 4 characters to t.txt");
  EXPECT_EQ(d, Delivery::hold);
  EXPECT_EQ(relsim::test::slurp(dir / "box" / "t.txt"), "held");
  // drop: served, cut off.
  EXPECT_EQ(text_of(call(s, 1, "add", {{"a", 1}, {"b", 1}}, &d)), "2");
  EXPECT_EQ(d, Delivery::drop);
  // unknown_tool: -32602, the tool never runs.
  EXPECT_EQ(call(s, 2, "note_write", {{"path", "u.txt"}, {"text", "x"}}, &d)["error"]["code"], -32602);
  EXPECT_EQ(d, Delivery::now);
  EXPECT_FALSE(fs::exists(dir / "box" / "u.txt"));
  // exec_error: isError, nothing written.
  const json e = call(s, 3, "note_write", {{"path", "e.txt"}, {"text", "x"}});
  EXPECT_TRUE(is_error(e));
  EXPECT_FALSE(fs::exists(dir / "box" / "e.txt"));
  // partial_write: half the text left behind, isError.
  EXPECT_TRUE(is_error(call(s, 4, "note_write", {{"path", "notes/p.txt"}, {"text", text}})));
  EXPECT_EQ(relsim::test::slurp(dir / "box" / "notes" / "p.txt"), text.substr(0, 20));
  // truncate: a tenth, no marker, no error.
  const json t = call(s, 5, "dump", {{"n", 1000}});
  EXPECT_FALSE(is_error(t));
  EXPECT_EQ(text_of(t).size(), 100u);
  // exec_error and partial_write on a tool without side effects: isError.
  EXPECT_TRUE(is_error(call(s, 6, "add", {{"a", 1}, {"b", 2}})));
  EXPECT_TRUE(is_error(call(s, 7, "add", {{"a", 1}, {"b", 2}})));
  // Past the plan: served.
  EXPECT_EQ(text_of(call(s, 8, "add", {{"a", 1}, {"b", 2}})), "3");

  const auto log = lines_of(dir / "calls.jsonl");
  ASSERT_EQ(log.size(), 9u);
  const std::vector<std::string> faults = {"timeout",       "drop",     "unknown_tool", "exec_error", "partial_write",
                                           "truncate",      "exec_error", "partial_write", "ok"};
  const std::vector<std::string> stages = {"transport", "transport", "service", "exec", "exec",
                                           "done",      "exec",      "exec",    "done"};
  for (std::size_t k = 0; k < log.size(); ++k) {
    EXPECT_EQ(log[k]["fault"], faults[k]) << k;
    EXPECT_EQ(log[k]["stage"], stages[k]) << k;
  }
  EXPECT_EQ(log[4]["sandbox"]["notes/p.txt"], 20);
  EXPECT_NE(log[4]["error"].get<std::string>().find("wrote 20 of 40 bytes"), std::string::npos);
}

TEST_F(McpServiceTest, RefusesABadHoldOrLog) {
  ToolsConfig c;
  c.sandbox = fresh_dir("hold") / "box";
  c.hold = std::chrono::milliseconds(0);
  EXPECT_NE(input_error([&] { McpService(c, ToolFaultSource()); }).find("hold = 0 ms"), std::string::npos);
  c.hold = std::chrono::milliseconds(100);
  c.log = fresh_dir("hold") / "no" / "such" / "dir" / "calls.jsonl";
  EXPECT_NE(input_error([&] { McpService(c, ToolFaultSource()); }).find("cannot be written"), std::string::npos);
}

}  // namespace

// ---- the audit -----------------------------------------------------------------

namespace {

json report_line(const std::string& group, const std::string& harness, const std::string& tool, const json& args,
                 const json& error, const json& caught = nullptr, bool sent = true, const json& chars = nullptr) {
  return {{"group", group},         {"harness", harness},       {"caught_stage", caught}, {"reported", error.is_string()},
          {"error", error},         {"rollback", "none"},       {"result_accepted", !error.is_string()},
          {"tool", tool},           {"arguments", args},        {"sent", sent},           {"result_chars", chars},
          {"side_effect_left", false}};
}

TEST(ToolAudit, CountsTheFactsAnErrorNamesAsWholeWords) {
  std::string report;
  // The tool's name inside a longer word is not the tool's name.
  report += report_line("exec", "h", "add", {{"a", 1}, {"b", 2}}, "addition failed in exec").dump() + "\n";
  // Validate: the schema says a is an integer; the argument is a string.
  report += report_line("validate", "h", "add", {{"a", "2"}, {"b", 3}}, "validate: add: a should be integer, not string",
                        "validate", false)
                .dump() +
            "\n";
  // Truncation: asked 1000, got 100 (and "1000" inside "10000" would not count).
  report += report_line("truncation", "h", "dump", {{"n", 1000}}, "dump gave 100 of 10000", "truncation", true, 100).dump() +
            "\n";
  const ToolAudit audit = audit_tool_calls(report, std::nullopt, std::nullopt);
  ASSERT_EQ(audit.harnesses.size(), 1u);
  const auto& calls = audit.harnesses[0].calls;
  EXPECT_EQ(calls[0].facts, (std::vector<std::string>{"stage"}));
  EXPECT_EQ(calls[0].reported_by, "passed_on");
  EXPECT_EQ(calls[1].facts, (std::vector<std::string>{"stage", "tool", "parameter", "expected", "got"}));
  EXPECT_EQ(calls[1].got_to, "not_sent");
  EXPECT_EQ(calls[2].facts, (std::vector<std::string>{"tool", "got"}));
  EXPECT_EQ(calls[2].facts_possible, 4);
  EXPECT_EQ(calls[2].got_to, "unknown");
  EXPECT_EQ(audit.harnesses[0].escaped, 1);
  EXPECT_EQ(audit.harnesses[0].unlocated, 0);
}

TEST(ToolAudit, LooksForALeftFileInTheSandboxAndMatchesTheServerLog) {
  const fs::path dir = fresh_dir("audit");
  fs::create_directories(dir / "box" / "notes");
  std::ofstream(dir / "box" / "notes" / "a.txt") << "half";
  json line = report_line("exec_side_effect", "h", "note_write", {{"path", "notes/a.txt"}, {"text", "halfhalf"}},
                          "Write failed");
  line["side_effect_left"] = false;  // what the harness says; the sandbox says otherwise
  const std::string report = line.dump() + "\n" +
                             report_line("exec", "h", "add", {{"a", 1}, {"b", 2}}, "Internal error").dump() + "\n";
  const ToolAudit audit = audit_tool_calls(report, std::string("{\"stage\":\"exec\",\"fault\":\"partial_write\"}\n{\"stage\":\"exec\",\"fault\":\"exec_error\"}\n"), dir / "box");
  const auto& calls = audit.harnesses[0].calls;
  EXPECT_TRUE(calls[0].side_effect_left);
  EXPECT_EQ(calls[0].side_effect_from, "sandbox");
  EXPECT_EQ(calls[1].got_to, "exec");
  EXPECT_EQ(audit.harnesses[0].side_effects_left, 1);
  EXPECT_EQ(audit.harnesses[0].unlocated, 2);
  // A log of another run, and reports of two harnesses with one log, are refused.
  EXPECT_NE(input_error([&] { audit_tool_calls(report, std::string("{\"stage\":\"exec\",\"fault\":\"ok\"}\n"), std::nullopt); })
                .find("the server log has 1 calls and the report sent 2"),
            std::string::npos);
  const std::string two = report + report_line("exec", "other", "add", {{"a", 1}, {"b", 2}}, "x").dump() + "\n";
  EXPECT_NE(input_error([&] { audit_tool_calls(two, std::string("{}\n"), std::nullopt); }).find("one harness"),
            std::string::npos);
  EXPECT_NE(input_error([&] { audit_tool_calls("{\"group\":\"exec\"}\n", std::nullopt, std::nullopt); })
                .find("report line 1: \"tool\""),
            std::string::npos);
  EXPECT_NE(input_error([&] { audit_tool_calls("", std::nullopt, std::nullopt); }).find("no lines"), std::string::npos);
}

// A task's class from its calls and the faults the server's log gives them.
TEST(ToolAudit, GivesEachTaskItsClass) {
  const fs::path dir = fresh_dir("tasks");
  fs::create_directories(dir / "box" / "t4");
  std::ofstream(dir / "box" / "t4" / "0.txt") << "half";  // 4 of 8 characters
  const auto line = [](int task, int step, bool accepted, const json& error, const json& caught, const std::string& path) {
    json j = report_line("", "h", "note_write", {{"path", path}, {"text", "halfhalf"}}, error, caught);
    j.erase("group");
    j["task"] = task;
    j["step"] = step;
    j["result_accepted"] = accepted;
    return j.dump() + "\n";
  };
  const std::string report = line(0, 0, true, nullptr, nullptr, "t0/0.txt") + line(0, 1, true, nullptr, nullptr, "t0/1.txt") +
                             line(1, 0, true, nullptr, nullptr, "t1/0.txt") + line(1, 1, true, nullptr, nullptr, "t1/1.txt") +
                             line(2, 0, false, "transport: note_write: late", "transport", "t2/0.txt") +
                             line(3, 0, false, "Internal error", nullptr, "t3/0.txt") +
                             line(4, 0, false, "Write failed", nullptr, "t4/0.txt");
  std::string log;
  for (const char* fault : {"ok", "ok", "truncate", "ok", "timeout", "exec_error", "partial_write"})
    log += json{{"stage", "done"}, {"fault", fault}}.dump() + "\n";
  const ToolAudit audit = audit_tool_calls(report, log, dir / "box");
  const HarnessAudit& h = audit.harnesses[0];
  EXPECT_EQ(h.tasks, 5);
  EXPECT_EQ(h.task_classes, (std::map<std::string, std::int64_t>{{"done", 1},
                                                                 {"side_effect_left", 1},
                                                                 {"silent_wrong", 1},
                                                                 {"tool_error:transport", 1},
                                                                 {"tool_error:unlocated", 1}}));
  EXPECT_EQ(h.escaped, 3);  // the truncation accepted, the two errors passed on
  EXPECT_NE(input_error([&] { audit_tool_calls(report, std::nullopt, std::nullopt); }).find("--server-log"),
            std::string::npos);
}

}  // namespace
}  // namespace relsim::tools
