// relsim tune end to end: the --json object's keys, the --csv header, the
// same bytes for any thread count, and bad input refused with one line on
// stderr and exit code 2. The search itself is tests/unit/tune_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

using Captured = relsim::test::RunResult;

// A small space, quick to search: seconds, not minutes.
const std::string kSmall =
    "tune --t-good 600 --t-bad 30 --n 5 --request-seconds 1 --kinds cut=1,http_529=1 --s-max 2 --r-max 2 "
    "--budgets 2,3 --bases 0.5,2 --caps 8 --jitters 0,0.25 --lists none 1,3 --p99-tasks 2000";

Captured tune_relsim(const std::string& args, const std::vector<std::string>& env = {}) {
  relsim::test::RunOptions options;
  options.env = env;
  return relsim::test::run_relsim(relsim::test::split_args(args), options);
}

std::set<std::string> keys(const nlohmann::json& object) {
  std::set<std::string> out;
  for (auto it = object.begin(); it != object.end(); ++it) out.insert(it.key());
  return out;
}

using relsim::test::expect_input_error;

TEST(TuneCli, JsonHasTheFrontAnchorsAndTheirFields) {
  const Captured r = tune_relsim(kSmall + " --target 0.95 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"target", "objective", "n", "chain", "kinds", "time", "space", "evaluated",
                          "meeting_target", "s_matters", "r_matters", "dimensions", "p99_tasks", "p99_work", "seed",
                          "p99_note", "front", "best", "anchors"})
    EXPECT_TRUE(j.contains(key)) << key;
  const std::set<std::string> point = {"policy",       "s",           "r",           "B",
                                       "backoff",      "success",     "mean_requests", "mean_seconds",
                                       "p99_seconds",  "p99_exact",   "p99_method",  "p99_interval",
                                       "max_requests", "meets_target"};
  ASSERT_TRUE(j["front"].is_array());
  ASSERT_FALSE(j["front"].empty());
  for (const auto& f : j["front"]) {
    EXPECT_EQ(keys(f), point);
    EXPECT_GE(f["success"].get<double>(), 0.95);
  }
  EXPECT_EQ(j["best"], j["front"][0]);
  ASSERT_EQ(j["anchors"].size(), 3u);
  std::set<std::string> anchor = point;
  for (const char* extra : {"name", "description", "on_front", "dominated_by"}) anchor.insert(extra);
  std::vector<std::string> names;
  for (const auto& a : j["anchors"]) {
    EXPECT_EQ(keys(a), anchor);
    names.push_back(a["name"]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"sdk-default", "10-attempts", "aws-standard"}));
  EXPECT_EQ(j["evaluated"].get<long long>() > 0, true);
}

TEST(TuneCli, CsvIsTheFrontWithAFixedHeader) {
  const Captured r = tune_relsim(kSmall + " --target 0.95 --csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "rank,policy,s,r,B,backoff,success,mean_requests,mean_seconds,p99_seconds,p99_method,p99_low,p99_high,"
            "max_requests");
  const Captured json = tune_relsim(kSmall + " --target 0.95 --json");
  const auto front = nlohmann::json::parse(json.out)["front"].size();
  EXPECT_EQ(static_cast<std::size_t>(std::count(r.out.begin(), r.out.end(), '\n')), 1 + front);
}

TEST(TuneCli, SameBytesForOneAndTwoThreads) {
  const Captured one = tune_relsim(kSmall + " --target 0.95 --json --objective p99-seconds", {"OMP_NUM_THREADS=1"});
  const Captured two = tune_relsim(kSmall + " --target 0.95 --json --objective p99-seconds --threads 2");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
}

TEST(TuneCli, BadInputIsOneLineAndExitTwo) {
  expect_input_error(kSmall + " --target 1");
  expect_input_error(kSmall + " --target 0");
  expect_input_error(kSmall + " --target 1.5");
  expect_input_error(kSmall + " --target 0.99 --objective cheapest");
  expect_input_error(kSmall + " --target 0.99 --backoff sdk");
  expect_input_error(kSmall + " --target 0.99 --lists 1,-2");
  expect_input_error(kSmall + " --target 0.99 --policies naive");
  expect_input_error("tune --target 0.99 --n 5");  // no chain in seconds
  expect_input_error("tune --target 0.99 --n 5 --t-good 0 --t-bad 30");
  expect_input_error("tune --target 0.99 --n 5 --t-good 600 --t-bad -1");
  // 101 x 99 (s, r) pairs x 200 bases: over 10^6 schedules.
  expect_input_error("tune --target 0.99 --n 5 --t-good 600 --t-bad 30 --kinds cut=1,http_529=1 --policies layered "
                     "--s-max 100 --r-max 98 --bases 0.01:2:0.01 --caps 1000 --jitters 0");
}

}  // namespace
