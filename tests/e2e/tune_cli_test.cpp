// relsim tune end to end: the --json object's keys, the --csv header, the
// same bytes for any thread count, and bad input refused with one line on
// stderr and exit code 2. The search itself is tests/unit/tune_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
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
                          "p99_note", "front", "best", "anchors", "p99_ties", "notes"})
    EXPECT_TRUE(j.contains(key)) << key;
  const std::set<std::string> point = {"policy",       "s",           "r",           "B",
                                       "backoff",      "success",     "mean_requests", "mean_seconds",
                                       "mean_seconds_done",
                                       "p99_seconds",  "p99_exact",   "p99_method",  "p99_interval",
                                       "max_requests", "meets_target", "snippets"};
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
  // The SDK default is what the SDKs express: maxRetries 2 and no stream retries; a budget is not.
  EXPECT_EQ(j["anchors"][0]["snippets"]["typescript"],
            "import Anthropic from \"@anthropic-ai/sdk\";\nconst client = new Anthropic({ maxRetries: 2 });\n");
  EXPECT_EQ(j["anchors"][0]["snippets"]["python"], "import anthropic\nclient = anthropic.Anthropic(max_retries=2)\n");
  EXPECT_TRUE(j["anchors"][1]["snippets"].is_null());
  for (const auto& f : j["front"])
    EXPECT_EQ(f["snippets"].is_null(), f["policy"] != "layered" || f["backoff"] != "sdk") << f.dump();
  EXPECT_EQ(j["evaluated"].get<long long>() > 0, true);
}

TEST(TuneCli, CsvIsTheFrontWithAFixedHeader) {
  const Captured r = tune_relsim(kSmall + " --target 0.95 --csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "rank,policy,s,r,B,backoff,success,mean_requests,mean_seconds,mean_seconds_done,p99_seconds,p99_method,"
            "p99_low,p99_high,max_requests,cost_mean");
  // With prices the last column holds each schedule's mean cost; without, it is empty.
  EXPECT_EQ(r.out.substr(r.out.find('\n') - 10, 10), ",cost_mean");
  const std::string first_row = r.out.substr(r.out.find('\n') + 1, r.out.find('\n', r.out.find('\n') + 1) - r.out.find('\n') - 1);
  EXPECT_EQ(first_row.back(), ',') << first_row;
  const Captured priced = tune_relsim(kSmall + " --target 0.95 --csv --input-tokens 1000 --output-tokens 100 "
                                               "--price-in 3 --price-out 15");
  ASSERT_EQ(priced.code, 0) << priced.err;
  const std::string priced_row = priced.out.substr(priced.out.find('\n') + 1, priced.out.find('\n', priced.out.find('\n') + 1) - priced.out.find('\n') - 1);
  EXPECT_GT(std::stod(priced_row.substr(priced_row.rfind(',') + 1)), 0.0) << priced_row;
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

// --sdk searches only the SDK's knob (maxRetries, its own backoff); the
// answer lies past the default --s-max 20, so the search widens and says so.
// Brute force: exact at the best s meets the target and at s - 1 does not.
TEST(TuneCli, SdkSpaceWidensPastTheBoundToTheSmallestMaxRetries) {
  const std::string model = "--t-good 1800 --t-bad 90 --n 40 --request-seconds 8 --kinds http_529=1";
  const Captured r = tune_relsim("tune " + model + " --target 0.995 --sdk --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["best"].is_null());
  const int s = j["best"]["s"].get<int>();
  EXPECT_GT(s, 20);
  EXPECT_EQ(j["best"]["r"].get<int>(), 0);
  EXPECT_EQ(j["best"]["backoff"].get<std::string>(), "sdk");
  ASSERT_FALSE(j["notes"].empty());
  EXPECT_NE(j["notes"][0].get<std::string>().find("no schedule met the target with s up to --s-max 20: widened to 40"),
            std::string::npos)
      << j["notes"];
  const auto success = [&](int retries) {
    const Captured e = tune_relsim(fmt::format("exact {} --policy layered --s {} --r 0 --backoff sdk --json", model,
                                               retries));
    return nlohmann::json::parse(e.out)["success"].get<double>();
  };
  EXPECT_GE(success(s), 0.995);
  EXPECT_LT(success(s - 1), 0.995);
  relsim::test::expect_input_error("tune " + model + " --target 0.995 --sdk --r-max 3",
                                   "--sdk searches the SDK's own space: leave out --r-max");
}

// Seconds of the done tasks beside all tasks, named, equal to exact's.
TEST(TuneCli, DoneSecondsBesideAllSeconds) {
  const Captured r = tune_relsim(kSmall + " --target 0.95 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto best = nlohmann::json::parse(r.out)["best"];
  ASSERT_TRUE(best["mean_seconds_done"].is_number());
  const Captured e = tune_relsim(fmt::format(
      "exact --t-good 600 --t-bad 30 --n 5 --request-seconds 1 --kinds cut=1,http_529=1 --policy {} --s {} --r {} "
      "--backoff {} --json",
      best["policy"].get<std::string>(), best["s"].get<int>(), best["r"].get<int>(), best["backoff"].get<std::string>()));
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_DOUBLE_EQ(best["mean_seconds_done"].get<double>(),
                   nlohmann::json::parse(e.out)["mean_seconds_done"].get<double>());
  const Captured table = tune_relsim(kSmall + " --target 0.95");
  EXPECT_NE(table.out.find("mean s all mean s done"), std::string::npos) << table.out;
}

// With --objective p99-seconds, members whose p99 intervals overlap the best
// estimate's are ties: said in a note, ranked cheapest first.
TEST(TuneCli, OverlappingP99IntervalsAreTies) {
  const Captured r = tune_relsim(kSmall + " --target 0.95 --objective p99-seconds --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto ties = j["p99_ties"].get<std::size_t>();
  ASSERT_GT(ties, 1u);
  bool said = false;
  for (const auto& note : j["notes"]) said |= note.get<std::string>().find("tied on p99 seconds") != std::string::npos;
  EXPECT_TRUE(said) << j["notes"];
  for (std::size_t i = 1; i < ties; ++i)
    EXPECT_LE(j["front"][i - 1]["mean_requests"].get<double>(), j["front"][i]["mean_requests"].get<double>());
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
