// The numbers people ask first, as the executable prints them (issue: the
// numbers people ask first): the fault share beside p, the bursts in
// requests, quantiles of requests per task in exact, simulate and sweep,
// --target --solve, and the command line's own polish (unknown options
// named, no {false} in any --help, the demo saying what it proves).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/input_error_cli.hpp"
#include "support/run.hpp"
#include "support/run_json.hpp"

namespace {

using relsim::test::expect_input_error;
using relsim::test::run_relsim;
using Json = nlohmann::json;

// The example: 30 calls per task, 2% of requests failing in bursts of about 5.
const std::string kExample = "--p 0.02 --burst-mean 5 --n 30";

using relsim::test::json_of;

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string f;
  while (std::getline(s, f, ',')) out.push_back(f);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

TEST(FirstNumbersCli, ExactPrintsTheShareBesidePAndTheBurstsInRequests) {
  const auto r = run_relsim("exact " + kExample + " --r 3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("mean burst             5 chain steps (1/(1 - q))"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mean gap               245 chain steps between bursts (1/p0)"), std::string::npos);
  EXPECT_NE(r.out.find("fault share            0.0135233"), std::string::npos);
  EXPECT_NE(r.out.find("requests quantiles     p50 30, p90 30, p99 33, p99.9 34, max 120"), std::string::npos);
  const Json j = json_of("exact " + kExample + " --r 3 --json");
  EXPECT_NEAR(j["mean_burst_length"].get<double>(), 5.0, 1e-12);
  // (1 - p) / (p (1 - q)) = 0.98 / 0.004.
  EXPECT_NEAR(j["mean_gap"].get<double>(), 245.0, 1e-9);
  EXPECT_NEAR(j["fault_share"].get<double>(), j["mean_bad_requests"].get<double>() / j["mean_requests"].get<double>(),
              1e-15);
  for (const char* part : {"all", "done", "failed"})
    for (const char* key : {"p50", "p90", "p99", "p999", "max"})
      EXPECT_TRUE(j["requests_quantiles"][part][key].is_number_integer()) << part << " " << key;
}

TEST(FirstNumbersCli, WithoutTheDistributionTheQuantilesSaySo) {
  const Json j = json_of("exact " + kExample + " --r 3 --distribution-work 0 --json");
  EXPECT_TRUE(j["requests_quantiles"].is_null());
  EXPECT_NE(j["requests_quantiles_note"].get<std::string>().find("--distribution-work"), std::string::npos);
  EXPECT_TRUE(j["fault_share"].is_number());  // the means are always there
  const auto r = run_relsim("exact " + kExample + " --r 3 --distribution-work 0");
  EXPECT_NE(r.out.find("requests quantiles     not computed"), std::string::npos) << r.out;
}

TEST(FirstNumbersCli, SimulateGivesTheObservedShareNextToTheExactOne) {
  const Json j = json_of("simulate " + kExample + " --r 3 --tasks 200000 --json");
  const double observed = j["fault_share"].get<double>(), exact = j["exact_fault_share"].get<double>();
  EXPECT_NEAR(observed, double(j["bad_requests"].get<std::int64_t>()) / double(j["requests"].get<std::int64_t>()),
              1e-15);
  EXPECT_NEAR(observed, exact, 0.03 * exact);
  EXPECT_NEAR(exact, json_of("exact " + kExample + " --r 3 --json")["fault_share"].get<double>(), 1e-15);
  EXPECT_NEAR(j["mean_burst_length"].get<double>(), 5.0, 1e-12);
  const Json& q = j["requests_quantiles"]["all"];
  EXPECT_EQ(q["p50"], 30);
  EXPECT_LE(q["p99"].get<int>(), q["p999"].get<int>());
}

TEST(FirstNumbersCli, SweepAppendsTheShareAndQuantileColumns) {
  const auto plain = run_relsim("sweep --p 0.3 --q 0.3,0.8 --r 2 --n 2");
  ASSERT_EQ(plain.code, 0) << plain.err;
  std::istringstream lines(plain.out);
  std::string header, row;
  std::getline(lines, header);
  const std::string tail =
      ",seed,fault_share,p50_requests,p90_requests,p99_requests,p999_requests,sim_fault_share,sim_p50_requests,"
      "sim_p90_requests,sim_p99_requests,sim_p999_requests";
  EXPECT_EQ(header.substr(header.size() - tail.size()), tail);
  std::getline(lines, row);
  auto f = fields(row);
  const auto cols = fields(header);
  ASSERT_EQ(f.size(), cols.size()) << row;
  const auto at = [&](const std::vector<std::string>& v, const std::string& name) {
    return v[static_cast<std::size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin())];
  };
  EXPECT_NEAR(std::stod(at(f, "fault_share")), 0.3, 1e-12);  // independent faults: exactly p
  EXPECT_EQ(at(f, "p50_requests"), "");                      // only with --quantiles
  EXPECT_EQ(at(f, "sim_fault_share"), "");                   // only with --tasks

  const auto full = run_relsim("sweep --p 0.3 --q 0.8 --r 2 --n 2 --quantiles --tasks 20000");
  ASSERT_EQ(full.code, 0) << full.err;
  std::istringstream full_lines(full.out);
  std::getline(full_lines, header);
  std::getline(full_lines, row);
  f = fields(row);
  const Json exact = json_of("exact --p 0.3 --q 0.8 --r 2 --n 2 --json");
  EXPECT_NEAR(std::stod(at(f, "fault_share")), exact["fault_share"].get<double>(), 1e-15);
  for (const char* level : {"p50", "p90", "p99", "p999"})
    EXPECT_EQ(at(f, std::string(level) + "_requests"), exact["requests_quantiles"]["all"][level].dump()) << level;
  EXPECT_NEAR(std::stod(at(f, "sim_fault_share")), exact["fault_share"].get<double>(), 0.03);
  EXPECT_NE(at(f, "sim_p99_requests"), "");
}

TEST(FirstNumbersCli, SolveAnswersTheExampleQuestion) {
  // "How many retries do I need for 99%?"
  const auto r = run_relsim("exact " + kExample + " --target 0.99 --solve r");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("smallest r with P(success) >= 0.99: r = 12"), std::string::npos) << r.out;
  const Json j = json_of("exact " + kExample + " --target 0.99 --solve r --json");
  EXPECT_EQ(j["value"], 12);
  EXPECT_EQ(j["r"], 12);
  EXPECT_EQ(j["below"]["value"], 11);
  // The engine run by hand on both sides of the answer.
  EXPECT_GE(json_of("exact " + kExample + " --r 12 --json")["success"].get<double>(), 0.99);
  EXPECT_LT(json_of("exact " + kExample + " --r 11 --json")["success"].get<double>(), 0.99);
  EXPECT_NEAR(j["success"].get<double>(), json_of("exact " + kExample + " --r 12 --json")["success"].get<double>(),
              1e-15);
}

TEST(FirstNumbersCli, SolveForBAndBAndS) {
  const Json b = json_of("exact " + kExample + " --r 3 --target 0.99 --solve b --json");
  EXPECT_EQ(b["value"], 3);
  EXPECT_EQ(b["b"], 3);
  const Json budget = json_of("exact " + kExample + " --r 3 --s 3 --policy budgeted --kinds http_529=1,cut=1 "
                              "--target 0.95 --solve B --json");
  EXPECT_EQ(budget["value"], 6);
  const Json s = json_of("exact " + kExample + " --r 1 --policy layered --kinds http_529=1 --target 0.99 --solve s --json");
  EXPECT_EQ(s["value"], 12);  // pre-response faults only: the HTTP layer's s does what simple's r does
  // q < p: only b = 0 is tried, and the note says why.
  const Json anti = json_of("exact --p 0.3 --q 0.1 --n 2 --r 2 --target 0.9 --solve b --json");
  EXPECT_EQ(anti["value"], 0);
  EXPECT_EQ(anti["evaluations"], 1);
  EXPECT_NE(anti["note"].get<std::string>().find("q < p"), std::string::npos);
}

TEST(FirstNumbersCli, SolveWithoutAnAnswerExitsOne) {
  // Stream faults only: the HTTP layer never retries them, so no s helps.
  const auto r = run_relsim("exact " + kExample + " --r 3 --policy layered --kinds cut=1 --target 0.99 --solve s --json");
  EXPECT_EQ(r.code, 1) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["found"], false);
  EXPECT_TRUE(j["value"].is_null());
  EXPECT_EQ(j["below"]["value"], 100);
  const auto words = run_relsim("exact " + kExample + " --r 3 --policy layered --kinds cut=1 --target 0.99 --solve s");
  EXPECT_NE(words.out.find("no s in [0, 100] meets P(success) >= 0.99"), std::string::npos) << words.out;
}

TEST(FirstNumbersCli, SolveRefusesWhatItCannotDo) {
  expect_input_error("exact " + kExample + " --r 3 --target 0.99", "--target needs --solve");
  expect_input_error("exact " + kExample + " --r 3 --solve b", "--solve needs --target");
  expect_input_error("exact " + kExample + " --target 0.99 --solve b", "--r is required");
  expect_input_error("exact " + kExample + " --r 3 --target 0.99 --solve r", "leave out --r");
  expect_input_error("exact " + kExample + " --r 3 --target 1.5 --solve b", "target = 1.5 is out of range");
  expect_input_error("exact " + kExample + " --r 3 --target 0.99 --solve q", "use r, s, b or B");
  expect_input_error("exact " + kExample + " --r 3 --target 0.99 --solve s", "simple policy has no HTTP-layer");
  expect_input_error("exact " + kExample + " --r 3 --target 0.99 --solve B", "give --policy budgeted");
  expect_input_error("exact --t-good 60 --t-bad 5 --n 3 --r 1 --target 0.99 --solve b", "time mode has no silent");
  expect_input_error("exact " + kExample + " --r 3 --target 0.99 --solve b --method both", "--method matrix");
  expect_input_error("exact " + kExample, "--r is required");
}

TEST(FirstNumbersCli, SolveWorksInTimeMode) {
  const Json j = json_of("exact --t-good 60 --t-bad 5 --n 3 --backoff list:1,2,4 --target 0.99 --solve r --json");
  ASSERT_TRUE(j["found"].get<bool>());
  const int r = j["value"].get<int>();
  const std::string base = "exact --t-good 60 --t-bad 5 --n 3 --backoff list:1,2,4 --json --r ";
  EXPECT_GE(json_of(base + std::to_string(r))["success"].get<double>(), 0.99);
  if (r > 0) { EXPECT_LT(json_of(base + std::to_string(r - 1))["success"].get<double>(), 0.99); }
}

TEST(FirstNumbersCli, AnUnknownOptionIsNamedBeforeAMissingOne) {
  expect_input_error("exact --bogus", "--bogus is not an option of relsim exact");
  expect_input_error("simulate --p 0.3 --r 1 --n 1 --taks 10", "--taks is not an option of relsim simulate");
  expect_input_error("sweep --bogus=3 --p 0.3", "--bogus is not an option of relsim sweep");
  expect_input_error("--bogus exact --p 0.3", "--bogus is not an option of relsim:");
}

TEST(FirstNumbersCli, NoHelpShowsFalse) {
  const auto top = run_relsim("--help");
  ASSERT_EQ(top.code, 0);
  for (const char* cmd : {"exact", "check", "plan", "oracle", "simulate", "sweep", "demo", "live", "serve", "audit",
                          "fit", "tune", "ui", "fleet"}) {
    const auto r = run_relsim(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_EQ(r.out.find("{false}"), std::string::npos) << cmd << ":\n" << r.out;
    EXPECT_NE(top.out.find(std::string("  ") + cmd + " "), std::string::npos) << cmd << " missing from relsim --help";
  }
}

TEST(FirstNumbersCli, LiveSaysItsDefaultPolicyDiffers) {
  const auto r = run_relsim("live --help");
  EXPECT_NE(r.out.find("live alone defaults to layered"), std::string::npos) << r.out;
  EXPECT_NE(run_relsim("exact --help").out.find("--policy TEXT=simple"), std::string::npos);
}

TEST(FirstNumbersCli, DemoSaysWhatItProvesWithATightLine) {
  const auto r = run_relsim("demo --no-live");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  1000000 tasks                    946695/1000000  [0.9463, 0.9471]      yes"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  1000000 tasks                    764339/1000000  [0.7635, 0.7652]      yes"),
            std::string::npos);
  EXPECT_NE(r.out.find("covered: whether the interval holds the exact value"), std::string::npos);
  EXPECT_NE(r.out.find("exact 36.4%"), std::string::npos);
  const Json j = json_of("demo --no-live --json");
  EXPECT_EQ(j["bursty"]["tight"]["tasks"], 1000000);
  EXPECT_TRUE(j["bursty"]["tight"]["covered"].get<bool>());
  EXPECT_NEAR(j["bursty"]["exact_fault_share"].get<double>(), 0.364379, 1e-6);
  expect_input_error("demo --tight-tasks -1", "tight-tasks = -1 is out of range");
}

}  // namespace
