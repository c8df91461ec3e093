// relsim audit end to end (docs/audit.md): the executable over the small plan
// and naive client log in data/audit/ (task 1: slow headers x9, task 2: an
// in-stream overloaded, task 3: a stall left open, task 4: a cut and a 529,
// task 5 never run), and over an audit plan from relsim plan --max-requests.
// Bad input: exit 2, one line on stderr, nothing on stdout, no --out file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using relsim::test::run_relsim;
using relsim::test::RunResult;

// This file's scratch folder (support/files.hpp).
const std::string kAuditScratch = "audit_test";
using relsim::test::scratch;
using relsim::test::write_temp;

std::string data(const std::string& name) { return relsim::test::source_dir() + "/data/audit/" + name; }

using relsim::test::slurp;

RunResult audit(std::vector<std::string> args) {
  args.insert(args.begin(), "audit");
  return run_relsim(args);
}

TEST(AuditCli, InfersTheNaiveLoopAndFindsNoMismatch) {
  const RunResult r = audit({"--plan", data("plan.jsonl"), "--log", data("naive_log.jsonl"), "--infer"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("your loop behaves like naive with s = 2, r = 2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tasks: 5 audited, 1 not run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hangs 1, crashes 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mismatches: 0 tasks"), std::string::npos) << r.out;
}

// Findings in words and --accept (docs/audit.md, Findings): the naive loop
// against layered has three mismatches, each with its meaning; accepting two
// of them as the loop's rules leaves exactly the third, still explained.
TEST(AuditCli, FindingsSayWhatTheLoopDoesAndAcceptedOnesLeaveTheRest) {
  const std::vector<std::string> base = {"--plan", data("plan.jsonl"), "--log", data("naive_log.jsonl"), "--policy",
                                         "layered", "--json"};
  const RunResult all = audit(base);
  EXPECT_EQ(all.code, 1) << all.err;
  const auto j = nlohmann::json::parse(all.out);
  ASSERT_EQ(j["mismatches"]["findings"].size(), 3U);
  EXPECT_EQ(j["mismatches"]["findings"][1]["finding"],
            "a stalled stream hung the task: the client has no idle timeout (stall; --accept stall=hang)");
  std::vector<std::string> accepted = base;
  accepted.insert(accepted.end(), {"--accept", "overloaded=crash,stall=hang"});
  const RunResult some = audit(accepted);
  const auto k = nlohmann::json::parse(some.out);
  EXPECT_EQ(k["mismatches"]["total"], 1);
  EXPECT_EQ(k["accepted"], "overloaded=crash,stall=hang");
  EXPECT_EQ(k["mismatches"]["findings"][0]["finding"],
            "a slow_headers escaped the loop as an exception (crash): the client does not end the task cleanly on it "
            "(slow_headers)");
  relsim::test::expect_input_error({"audit", "--plan", data("plan.jsonl"), "--log", data("naive_log.jsonl"), "--policy",
                                    "layered", "--accept", "overload=crash"},
                                   "'overload=crash' names no fault kind");
}

// --require (docs/thresholds.md): the inferred naive loop has no mismatch but
// 1 hang and 2 crashes in 5 tasks (the test above): a gate on crashes fails
// it with one line, one on mismatches alone passes (the positive control).
TEST(AuditCli, RequireGatesOnHangsAndCrashes) {
  const std::vector<std::string> run = {"--plan", data("plan.jsonl"), "--log", data("naive_log.jsonl"), "--infer"};
  auto with = [&](const std::string& spec) {
    std::vector<std::string> args = run;
    args.insert(args.end(), {"--require", spec});
    return audit(args);
  };
  const RunResult passed = with("mismatches<=0");
  EXPECT_EQ(passed.code, 0) << passed.err;
  EXPECT_EQ(passed.out, audit(run).out);
  const RunResult failed = with("mismatches<=0,crashes<=0,hangs<1");
  EXPECT_EQ(failed.code, 1);
  EXPECT_EQ(failed.err,
            "relsim: threshold missed: crashes<=0 (crashes = 2)\nrelsim: threshold missed: hangs<1 (hangs = 1)\n");
}

TEST(AuditCli, AgainstLayeredTheNaiveLoopMismatchesWithJsonAndCsv) {
  const fs::path csv = scratch(kAuditScratch) / "per_task.csv";
  const RunResult r = audit({"--plan", data("plan.jsonl"), "--log", data("naive_log.jsonl"), "--policy", "layered",
                             "--json", "--out", csv.string()});
  EXPECT_EQ(r.code, 1) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"tasks", "mismatches", "policy", "consistent", "closest", "headline_rule",
                                            "retry_header", "waits", "accepted", "fallback", "amplification", "hangs",
                                            "outcomes", "requests"}));
  EXPECT_EQ(j["policy"], nlohmann::ordered_json::parse(R"({"policy": "layered", "s": 2, "r": 2, "B": null})"));
  EXPECT_TRUE(j["consistent"].empty());
  // Slow headers x9: 9 sent where layered sends 3; the overloaded crash and the
  // stall hang each a request where layered sends 3 (a retry, then two calls).
  EXPECT_EQ(j["mismatches"]["total"], 3);
  EXPECT_EQ(j["mismatches"]["by_kind"], nlohmann::ordered_json::parse(R"({"overloaded": 1, "slow_headers": 1, "stall": 1})"));
  EXPECT_EQ(j["requests"]["sent"], 17);
  EXPECT_EQ(j["requests"]["layered"], 15);
  EXPECT_EQ(j["requests"]["per_call_max"], 9);
  EXPECT_EQ(j["hangs"], 1);
  const std::string rows = slurp(csv);
  EXPECT_EQ(rows.substr(0, rows.find('\n')),
            "task,requests_expected,requests_sent,outcome_expected,outcome_reported,hang,verdict,checks,"
            "requests_per_call,detail");
  EXPECT_NE(rows.find("\n1,3,9,env_error:slow_headers,crash,0,mismatch,requests outcome,9,"), std::string::npos) << rows;
  EXPECT_NE(rows.find("\n3,3,1,done,hang,1,mismatch,requests outcome,1,"), std::string::npos) << rows;
  EXPECT_NE(rows.find("\n4,4,4,done,done,0,ok,,2 2,\n"), std::string::npos) << rows;
}

// Splits one CSV line with no quoted field.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// A JSON array of words or numbers as the CSV writes it: space-separated.
std::string spaced(const nlohmann::ordered_json& list) {
  std::string out;
  for (const auto& v : list) out += (out.empty() ? "" : " ") + (v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

TEST(AuditCli, JsonPerTaskHoldsTheCsvRowsWithTypes) {
  const fs::path csv = scratch(kAuditScratch) / "json_per_task.csv";
  const RunResult r = audit({"--plan", data("plan.jsonl"), "--log", data("naive_log.jsonl"), "--policy", "naive",
                             "--json", "--per-task", "--out", csv.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  ASSERT_TRUE(j.contains("per_task")) << r.out;
  const auto& rows = j["per_task"];
  std::stringstream lines(slurp(csv));
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "task,requests_expected,requests_sent,outcome_expected,outcome_reported,hang,verdict,checks,"
                  "requests_per_call,detail");
  ASSERT_EQ(rows.size(), 5u);
  for (const auto& row : rows) {
    ASSERT_TRUE(std::getline(lines, line));
    ASSERT_EQ(line.find('"'), std::string::npos) << line;
    const std::vector<std::string> f = csv_fields(line);
    ASSERT_EQ(f.size(), 10u) << line;
    std::vector<std::string> keys;
    for (const auto& [k, v] : row.items()) keys.push_back(k);
    EXPECT_EQ(keys, (std::vector<std::string>{"task", "requests_expected", "requests_sent", "outcome_expected",
                                              "outcome_reported", "hang", "verdict", "checks", "requests_per_call",
                                              "detail"}));
    EXPECT_TRUE(row["task"].is_number_integer() && row["requests_sent"].is_number_integer()) << row;
    EXPECT_EQ(row["task"].dump(), f[0]);
    EXPECT_EQ(row["requests_expected"].dump(), f[1]);
    EXPECT_EQ(row["requests_sent"].dump(), f[2]);
    EXPECT_EQ(row["outcome_expected"], f[3]);
    EXPECT_EQ(row["outcome_reported"], f[4]);
    ASSERT_TRUE(row["hang"].is_boolean()) << row;
    EXPECT_EQ(row["hang"].get<bool>() ? "1" : "0", f[5]);
    EXPECT_EQ(row["verdict"], f[6]);
    EXPECT_EQ(spaced(row["checks"]), f[7]);
    EXPECT_EQ(spaced(row["requests_per_call"]), f[8]);
    EXPECT_EQ(row["detail"], f[9]);
  }
  // Task 0 two good calls; task 1 nine slow headers in its one call, a
  // crash as naive's; task 3 the hang.
  EXPECT_EQ(rows[0]["requests_per_call"], nlohmann::ordered_json::parse("[1, 1]"));
  EXPECT_EQ(rows[1]["task"], 1);
  EXPECT_EQ(rows[1]["requests_per_call"], nlohmann::ordered_json::parse("[9]"));
  EXPECT_EQ(rows[1]["outcome_expected"], "crash:slow_headers");
  EXPECT_TRUE(rows[3]["hang"].get<bool>());
  EXPECT_EQ(rows[3]["verdict"], "ok");
}

TEST(AuditCli, JsonWithoutPerTaskHasNoPerTaskKey) {
  const RunResult r = audit({"--plan", data("plan.jsonl"), "--log", data("naive_log.jsonl"), "--policy", "naive",
                             "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(nlohmann::ordered_json::parse(r.out).contains("per_task"));
}

TEST(AuditCli, AuditsAPlanFromRelsimPlanMaxRequests) {
  const fs::path plan = scratch(kAuditScratch) / "plan.jsonl";
  const RunResult made = run_relsim({"plan", "--p", "0.3", "--q", "0.8", "--r", "2", "--n", "2", "--s", "2", "--policy",
                                     "layered", "--tasks", "3", "--max-requests", "9", "--out", plan.string()});
  ASSERT_EQ(made.code, 0) << made.err;
  // Nothing ran yet: a log with its header alone audits no task.
  const fs::path log =
      write_temp(kAuditScratch, "empty_log.jsonl", "{\"relsim_log\": 1, \"port\": 1, \"plan_tasks\": 3}\n");
  const RunResult r = audit({"--plan", plan.string(), "--log", log.string(), "--policy", "layered"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("tasks: 0 audited, 3 not run"), std::string::npos) << r.out;
}

void expect_audit_input_error(std::vector<std::string> args, const std::string& part) {
  const fs::path out = scratch(kAuditScratch) / "never.csv";
  args.push_back("--out");
  args.push_back(out.string());
  relsim::test::expect_input_error_result(audit(args), part);
  EXPECT_FALSE(fs::exists(out));
}

TEST(AuditCli, BadInputIsOneLineExitTwoAndNoOutputFile) {
  const std::string plan = data("plan.jsonl"), log = data("naive_log.jsonl");
  expect_audit_input_error({"--plan", plan, "--log", data("other_plan_log.jsonl"), "--infer"},
                           "other_plan_log.jsonl:5: the log is from another plan: task 1");
  std::string text = slurp(log);
  const fs::path truncated = write_temp(kAuditScratch, "truncated.jsonl", text.substr(0, text.size() - 20));
  const auto lines = std::count(text.begin(), text.end(), '\n');
  expect_audit_input_error({"--plan", plan, "--log", truncated.string(), "--infer"},
                           "truncated.jsonl:" + std::to_string(lines) + ": not a JSON object");
  const fs::path word = write_temp(kAuditScratch, "word.csv", "task,outcome,detail\n0,finished,\n");
  expect_audit_input_error({"--plan", plan, "--log", log, "--infer", "--outcomes", word.string()},
                           "outcome 'finished' is not an outcome");
  const fs::path unknown = write_temp(kAuditScratch, "unknown.csv", "task,outcome,detail\n0,done,\n6,done,\n");
  expect_audit_input_error({"--plan", plan, "--log", log, "--infer", "--outcomes", unknown.string()},
                           "unknown.csv:3: an outcome for task 6");
  std::string with_b = slurp(plan);
  with_b.replace(with_b.find("\"b\": 0"), 6, "\"b\": 2");
  const fs::path plan_b = write_temp(kAuditScratch, "plan_b.jsonl", with_b);
  expect_audit_input_error({"--plan", plan_b.string(), "--log", log, "--infer"}, "the plan has b = 2");
  expect_audit_input_error({"--plan", plan, "--log", log}, "give --policy");
  expect_audit_input_error({"--plan", plan, "--log", log, "--policy", "budgeted"}, "B = 0 is out of range");
  expect_audit_input_error({"--plan", plan, "--log", log, "--infer", "--wait-tolerance", "-1"}, "wait-tolerance");
}

}  // namespace
