// relsim oracle --fault KIND --times once|always: the oracle over a scripted
// plan, as relsim live --fault runs it, instead of a plan file; exactly one
// of the two. The reference experiment's fault lab: persistent slow headers
// cost a naive loop (s = 2, r = 2) nine requests and a crash, a layered one
// three and an env_error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

using relsim::test::run_relsim;
using relsim::test::RunResult;

const std::string kSlowHeaders = "oracle --fault slow_headers --times always --n 1 --r 2 --s 2 --json";

// Ordered: comparing two outputs then compares their key order too.
nlohmann::ordered_json ordered_json_of(const std::string& args) {
  const RunResult r = run_relsim(args);
  EXPECT_EQ(r.code, 0) << args << ": " << r.err;
  return nlohmann::ordered_json::parse(r.out);
}

TEST(OracleScripted, PersistentSlowHeadersCostNaiveNineRequestsAndACrash) {
  const auto j = ordered_json_of(kSlowHeaders + " --policy naive");
  EXPECT_EQ(j["requests"], 9);
  EXPECT_EQ(j["tasks"], 1);
  EXPECT_EQ(j["outcomes"], nlohmann::ordered_json::parse(R"({"crash:slow_headers": 1})"));
  std::vector<std::string> first;
  for (const auto& [key, value] : j.items())
    if (first.size() < 4) first.push_back(key);
  EXPECT_EQ(first, (std::vector<std::string>{"plan", "fault", "times", "policy"}));
  EXPECT_EQ(j["plan"], "scripted");
  EXPECT_EQ(j["fault"], "slow_headers");
  EXPECT_EQ(j["times"], "always");
  EXPECT_EQ(j["policy"], "naive");
}

TEST(OracleScripted, PersistentSlowHeadersCostLayeredThreeRequestsAndAnEnvError) {
  const auto j = ordered_json_of(kSlowHeaders + " --policy layered");
  EXPECT_EQ(j["requests"], 3);
  EXPECT_EQ(j["outcomes"], nlohmann::ordered_json::parse(R"({"env_error:slow_headers": 1})"));
  // Layered is the default, as for relsim live --fault.
  EXPECT_EQ(ordered_json_of(kSlowHeaders)["outcomes"], j["outcomes"]);
}

TEST(OracleScripted, EqualsTheOracleOverTheSamePlanWrittenToAFile) {
  const std::string script = "--fault cut --times once --policy budgeted --n 3 --r 2 --s 1 --B 4 --tasks 3";
  const RunResult plan = run_relsim("plan " + script);
  ASSERT_EQ(plan.code, 0) << plan.err;
  const std::string file = relsim::test::write_temp("oracle_scripted", "plan.jsonl", plan.out).string();
  auto from_file = ordered_json_of("oracle " + file + " --json --per-task");
  auto scripted = ordered_json_of("oracle " + script + " --json --per-task");
  EXPECT_EQ(scripted["tasks"], 3);
  EXPECT_EQ(from_file["plan"], file);
  for (const char* key : {"plan", "fault", "times"}) scripted.erase(key);
  from_file.erase("plan");
  EXPECT_EQ(scripted.dump(), from_file.dump());
}

TEST(OracleScripted, TextNamesTheScript) {
  const RunResult r = run_relsim("oracle --fault stall --times once --policy naive --n 2 --r 1 --per-task");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("relsim oracle: scripted stall once (", 0), 0u) << r.out;
}

using relsim::test::expect_input_error;

TEST(OracleScripted, RefusesBothOrNeitherAndBadScripts) {
  const RunResult plan = run_relsim("plan --fault cut --times once --n 1 --r 1 --tasks 1");
  ASSERT_EQ(plan.code, 0) << plan.err;
  const std::string file = relsim::test::write_temp("oracle_scripted", "both.jsonl", plan.out).string();
  expect_input_error("oracle " + file + " --fault cut --n 1", "not both");
  expect_input_error("oracle --n 1 --r 2", "give a plan file, or --fault KIND");
  expect_input_error("oracle --fault cut --times sometimes --n 1", "sometimes");
  expect_input_error("oracle --fault lightning --times once --n 1", "lightning");
  expect_input_error("oracle --fault cut --times always", "give --n");
  expect_input_error("oracle " + file + " --times always", "--times applies to a scripted plan only");
  expect_input_error("oracle " + file + " --tasks 3", "--tasks applies to a scripted plan only");
  expect_input_error("oracle --fault cut --n 1 --tasks 0", "tasks = 0");
}

}  // namespace
