// relsim plan and oracle in time mode: the oracle over a plan made with the
// time options counts what `relsim simulate` counts in time mode for the same
// seed, policy and tasks, and reports the same mean wall time; bad input is
// one line and exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"
#include "support/run_json.hpp"

namespace {

using relsim::test::RunResult;

using relsim::test::json_of;
using relsim::test::run_relsim;

// Its entries above zero.
nlohmann::json nonzero(const nlohmann::json& counts) {
  nlohmann::json out = nlohmann::json::object();
  for (auto it = counts.begin(); it != counts.end(); ++it)
    if (it.value().get<long long>() > 0) out[it.key()] = it.value();
  return out;
}

void expect_same(const std::string& tag, const std::string& options) {
  const std::string plan = (relsim::test::scratch(tag) / "plan.jsonl").string();
  const RunResult made = run_relsim("plan " + options + " --out " + plan);
  ASSERT_EQ(made.code, 0) << made.err;
  const auto oracle = json_of("oracle " + plan + " --json");
  const auto sim = json_of("simulate " + options + " --json");
  EXPECT_EQ(oracle["successes"], sim["successes"]) << tag;
  EXPECT_EQ(oracle["requests"], sim["requests"]) << tag;
  EXPECT_EQ(nonzero(oracle["outcomes"]), nonzero(sim["outcomes"])) << tag;
  EXPECT_EQ(nonzero(oracle["faults"]), nonzero(sim["faults"])) << tag;
  EXPECT_EQ(oracle["mean_seconds"], sim["mean_seconds"]) << tag;
  EXPECT_GT(oracle["mean_seconds"].get<double>(), 0.0) << tag;
  EXPECT_EQ(oracle["time"]["backoff"], sim["backoff"]) << tag;
  EXPECT_EQ(oracle["time"]["t_good"], sim["t_good"]) << tag;
}

TEST(PlanTimeCli, LayeredWithRetryAfterAndJitterMatchesSimulate) {
  expect_same("layered", "--t-good 20 --t-bad 8 --request-seconds 0.7 --retry-after 2.5 --policy layered --s 2 "
                         "--r 2 --n 3 --kinds http_429=3,cut=1 --tasks 2000 --seed 17");
}

TEST(PlanTimeCli, SimpleWithListBackoffAndThinkMatchesSimulateContinuous) {
  expect_same("simple", "--t-good 30 --t-bad 10 --request-seconds 0.5 --think-seconds 3 --backoff list:1,2,4 "
                        "--r 2 --n 2 --chain continuous --lanes 5 --tasks 2000 --seed 3");
}

TEST(PlanTimeCli, BadInputIsOneLineAndExit2) {
  for (const char* args : {"plan --t-good 60 --t-bad 10 --r 1 --n 1 --fault cut",
                           "plan --t-good 60 --t-bad 10 --r 1 --n 1 --times always",
                           "plan --t-good 60 --t-bad 10 --r 1 --n 1 --b 2",
                           "plan --t-good 60 --t-bad 10 --r 1 --n 1 --max-requests 4",
                           "plan --p 0.3 --r 1 --n 1 --backoff list:1,2"}) {
    relsim::test::expect_input_error(args);
  }
  const std::string plan = (relsim::test::scratch("refuse") / "plan.jsonl").string();
  ASSERT_EQ(run_relsim("plan --t-good 60 --t-bad 10 --r 1 --n 2 --tasks 20 --out " + plan).code, 0);
  const RunResult other = run_relsim("oracle " + plan + " --r 2");
  EXPECT_EQ(other.code, 2) << other.err;
  EXPECT_NE(other.err.find("drop the policy options"), std::string::npos) << other.err;
  EXPECT_EQ(run_relsim("oracle " + plan + " --r 1").code, 0);
}

}  // namespace
