// relsim exact and simulate with a fallback to a second provider
// (docs/model.md, Fallback): the closed form for independent providers from
// the command line, simulate within 5 standard errors of exact (success,
// requests, cost; independent and correlated; every policy) with the same
// bytes for 1 and 2 threads, and bad input as one line and exit 2.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "support/input_error_cli.hpp"
#include "support/run.hpp"
#include "support/run_json.hpp"

namespace fallback_cli_test {

using relsim::test::expect_input_error;
using relsim::test::json_of;
using relsim::test::run_relsim;
using Json = nlohmann::json;

const std::string kPrices =
    " --input-tokens 20000 --output-tokens 800 --price-in 3 --price-out 15 --price-in2 1 --price-out2 5";

TEST(FallbackCli, IndependentProvidersGiveTheClosedForm) {
  // p 0.3, p2 0.1, r 2, n 2, K 2: (1 - 0.3^2 x 0.1)^2 = 0.982081.
  const Json j = json_of("exact --p 0.3 --r 2 --n 2 --fallback-after 2 --p2 0.1 --json");
  EXPECT_NEAR(j["success"].get<double>(), 0.982081, 1e-12);
  EXPECT_NEAR(j["independent"].get<double>(), 0.982081, 1e-15);
  EXPECT_EQ(j["fallback"]["after"], 2);
  EXPECT_EQ(j["fallback"]["p2_marginal"].get<double>(), 0.1);
  // K 1 sends every retry to the second: (1 - 0.3 x 0.1^2)^2.
  EXPECT_NEAR(json_of("exact --p 0.3 --r 2 --n 2 --fallback-after 1 --p2 0.1 --json")["success"].get<double>(),
              std::pow(1.0 - 0.3 * 0.01, 2), 1e-12);
  // A correlated outage has no closed form here, and costs success.
  const Json shared =
      json_of("exact --p 0.3 --r 2 --n 2 --fallback-after 2 --p2 0.1 --shared-p 0.05 --shared-burst-mean 10 --json");
  EXPECT_TRUE(shared["independent"].is_null());
  EXPECT_LT(shared["success"].get<double>(), j["success"].get<double>());
  EXPECT_NEAR(shared["fallback"]["p_marginal"].get<double>(), 1.0 - 0.7 * 0.95, 1e-15);
  // The table names the fallback and the second provider's prices.
  const auto table = run_relsim("exact --p 0.3 --q 0.8 --r 2 --n 2 --fallback-after 2 --p2 0.1" + kPrices);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("fallback               after 2 failed requests of a call, to p2 = 0.1"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("second provider      in at $1/M, out at $5/M; a good request $0.024"), std::string::npos)
      << table.out;
}

TEST(FallbackCli, SimulateMatchesExactAndIsTheSameForAnyThreadCount) {
  const std::string cases[] = {
      "--p 0.3 --q 0.8 --r 2 --n 2 --fallback-after 2 --p2 0.1 --burst-mean2 3",
      "--p 0.3 --q 0.8 --r 2 --n 2 --fallback-after 1 --p2 0.1 --burst-mean2 3 --shared-p 0.05 --shared-burst-mean 10",
      "--p 0.2 --q 0.7 --r 1 --n 3 --policy layered --s 2 --b 1 --g 2 --kinds cut=1,http_529=1 --fallback-after 3 "
      "--p2 0.15 --q2 0.5 --kinds2 stall=1,http_429=1 --shared-p 0.02",
      "--p 0.25 --burst-mean 4 --r 2 --n 2 --policy budgeted --B 4 --kinds cut=1,http_529=1,http_400=0.1 "
      "--fallback-after 2 --p2 0.2",
  };
  constexpr double kTasks = 100000;
  for (const std::string& model : cases) {
    SCOPED_TRACE(model);
    const std::string sim = "simulate " + model + kPrices + " --tasks 100000 --seed 20261206 --json";
    const auto one = run_relsim(sim + " --threads 1");
    const auto two = run_relsim(sim + " --threads 2");
    ASSERT_EQ(one.code, 0) << one.err;
    EXPECT_EQ(one.out, two.out);
    const Json s = Json::parse(one.out);
    const Json e = json_of("exact " + model + kPrices + " --json");
    const double p = e["success"].get<double>();
    EXPECT_EQ(s["exact"].get<double>(), p);
    EXPECT_NEAR(s["rate"].get<double>(), p, 5.0 * std::sqrt(p * (1.0 - p) / kTasks));
    EXPECT_NEAR(s["cost_mean"].get<double>(), e["cost_mean"].get<double>(), 5.0 * s["cost_sd"].get<double>() / std::sqrt(kTasks));
    // Requests per task: within 5 standard errors, the sd from exact's own distribution.
    double second_moment = 0.0;
    for (const Json& bin : e["requests"])
      second_moment += bin["probability"].get<double>() * std::pow(bin["requests"].get<double>(), 2);
    const double mean = e["mean_requests"].get<double>();
    EXPECT_NEAR(s["requests"].get<double>() / kTasks, mean, 5.0 * std::sqrt((second_moment - mean * mean) / kTasks));
    // Every fault the run drew is listed, the second provider's kinds too.
    long long listed = 0;
    for (const auto& [kind, count] : s["faults"].items()) listed += count.get<long long>();
    EXPECT_EQ(listed, s["bad_requests"].get<long long>());
    EXPECT_EQ(s["kernel"], "walk");
  }
}

TEST(FallbackCli, TimeModeTakesTheSecondProviderInSeconds) {
  const std::string timed = "exact --t-good 600 --t-bad 60 --r 2 --n 4 --request-seconds 5 --backoff list:1,2,4 "
                            "--kinds http_529=1,cut=1";
  const Json alone = json_of(timed + " --json");
  const Json j = json_of(timed + " --fallback-after 2 --t-good2 900 --t-bad2 30 --json");
  EXPECT_EQ(j["fallback"]["t_good2"].get<double>(), 900.0);
  EXPECT_NEAR(j["fallback"]["p2"].get<double>(), 30.0 / 930.0, 1e-15);
  EXPECT_GT(j["success"].get<double>(), alone["success"].get<double>());
  EXPECT_TRUE(j["seconds_quantiles"].is_object());
  const Json shared = json_of(timed + " --fallback-after 2 --t-good2 900 --t-bad2 30 --shared-t-good 3000 "
                              "--shared-t-bad 120 --json" + kPrices);
  EXPECT_LT(shared["success"].get<double>(), j["success"].get<double>());
  EXPECT_NEAR(shared["fallback"]["p_marginal"].get<double>(), 1.0 - (600.0 / 660.0) * (3000.0 / 3120.0), 1e-15);
  EXPECT_GT(shared["cost_mean"].get<double>(), 0.0);
  expect_input_error(timed + " --fallback-after 2 --p2 0.1", "in time mode needs --t-good2 and --t-bad2");
  expect_input_error(timed + " --fallback-after 2 --t-good2 900", "in time mode needs --t-good2 and --t-bad2");
  expect_input_error(timed + " --fallback-after 2 --t-good2 900 --t-bad2 30 --p2 0.1",
                     "--p2: in time mode the chains are in seconds");
  expect_input_error(timed + " --fallback-after 2 --t-good2 900 --t-bad2 30 --shared-t-bad 9",
                     "--shared-t-bad needs --shared-t-good");
  expect_input_error(timed + " --fallback-after 2 --t-good2 0 --t-bad2 30", "t-good2 = 0 is out of range");
  expect_input_error("exact --p 0.3 --r 2 --n 2 --fallback-after 2 --p2 0.1 --t-good2 9 --t-bad2 1",
                     "--t-good2 applies in time mode only");
}

// simulate in seconds with a fallback and a cooldown: the fallback's own
// exact figures beside it, the requests to the second provider, and the
// cooldown's options read strictly.
TEST(FallbackCli, SimulateInSecondsTakesTheFallbackAndACooldown) {
  const std::string timed = "simulate --t-good 600 --t-bad 60 --r 2 --n 4 --request-seconds 5 --backoff list:1,2,4 "
                            "--kinds http_529=1,cut=1 --tasks 20000 --fallback-after 1 --t-good2 900 --t-bad2 30";
  const Json plain = json_of(timed + " --json" + kPrices);
  EXPECT_EQ(plain["covered"], true);
  EXPECT_EQ(plain["mean_seconds_covered"], true);
  EXPECT_EQ(plain["cost_covered"], true);
  EXPECT_GT(plain["second_requests"].get<long long>(), 0);
  EXPECT_LT(plain["second_requests"].get<long long>(), plain["requests"].get<long long>());
  EXPECT_FALSE(plain.contains("exact_note"));
  const Json cooled = json_of(timed + " --cooldown-fails 1 --cooldown-seconds 60 --json" + kPrices);
  EXPECT_EQ(cooled["fallback"]["cooldown"], (Json{{"fails", 1}, {"window", 60.0}, {"seconds", 60.0}}));
  EXPECT_TRUE(cooled["covered"].is_null());
  EXPECT_TRUE(cooled["cost_covered"].is_null());
  EXPECT_NE(cooled["exact_note"].get<std::string>().find("no exact value"), std::string::npos);
  EXPECT_EQ(cooled["exact"], plain["exact"]);  // the fallback's without the cooldown
  EXPECT_GT(cooled["second_requests"].get<long long>(), plain["second_requests"].get<long long>());
  // A cooldown of 0 s is none: the same draws, the same counts.
  const Json zero = json_of(timed + " --cooldown-fails 1 --cooldown-seconds 0 --json" + kPrices);
  for (const char* key : {"successes", "requests", "second_requests", "mean_seconds", "cost_mean"})
    EXPECT_EQ(zero[key], plain[key]) << key;
  expect_input_error(timed + " --cooldown-fails 0", "cooldown-fails = 0 is out of range");
  expect_input_error(timed + " --cooldown-fails 2 --cooldown-window 0", "cooldown-window = 0 is out of range");
  expect_input_error(timed + " --cooldown-fails 2 --cooldown-seconds -1", "cooldown-seconds = -1 is out of range");
  expect_input_error(timed + " --cooldown-seconds 5", "--cooldown-seconds needs --cooldown-fails");
  expect_input_error("simulate --t-good 600 --t-bad 60 --r 2 --n 2 --cooldown-fails 1",
                     "--cooldown-fails needs --fallback-after");
  expect_input_error("simulate --p 0.3 --r 2 --n 2 --fallback-after 1 --p2 0.1 --cooldown-fails 1",
                     "--cooldown-fails applies in time mode only");
}

// tune with a fallback in seconds: said in the JSON and the table, refused in steps.
TEST(FallbackCli, TuneSearchesWithTheFallback) {
  const std::string tune = "tune --target 0.9 --n 5 --t-good 300 --t-bad 60 --request-seconds 4 --kinds cut=1,http_529=2 "
                           "--s-max 2 --r-max 2 --budgets 2,4 --no-grid --lists none --no-widen --p99-tasks 0";
  const Json alone = json_of(tune + " --json");
  const Json j = json_of(tune + " --fallback-after 2 --t-good2 300 --t-bad2 20 --json");
  EXPECT_EQ(j["fallback"]["after"], 2);
  EXPECT_TRUE(alone["best"].is_null());  // nothing in this space reaches 0.9 alone
  ASSERT_TRUE(j["best"].is_object());
  EXPECT_GE(j["best"]["success"].get<double>(), 0.9);
  EXPECT_NE(run_relsim(tune + " --fallback-after 2 --t-good2 300 --t-bad2 20").out.find("never falls back"),
            std::string::npos);
  expect_input_error(tune + " --fallback-after 2 --p2 0.1", "in time mode needs --t-good2 and --t-bad2");
  expect_input_error(tune + " --fallback-after 10001 --t-good2 300 --t-bad2 20", "fallback-after = 10001");
}

// --solve with a fallback: the smallest value is the one a scan of exact
// finds, in steps and in seconds; the search starts where a call sends at
// least K requests (below that the fallback is no policy's).
TEST(FallbackCli, SolveFindsWhatAScanOfExactFinds) {
  const auto scan = [](const std::string& model, const char* param, int from, double target) {
    for (int v = from; v <= 40; ++v)
      if (json_of(fmt::format("exact {} --{} {} --json", model, param, v))["success"].get<double>() >= target) return v;
    return -1;
  };
  const std::string steps = "--p 0.3 --q 0.8 --n 2 --fallback-after 2 --p2 0.1 --burst-mean2 3";
  const Json r = json_of("exact " + steps + " --target 0.99 --solve r --json");
  EXPECT_EQ(r["value"], scan(steps, "r", 1, 0.99)) << r.dump();
  EXPECT_EQ(r["fallback"]["after"], 2);
  const std::string late = "--p 0.3 --q 0.8 --n 2 --fallback-after 5 --p2 0.1";
  const Json k5 = json_of("exact " + late + " --target 0.999 --solve r --json");
  EXPECT_EQ(k5["low"], 4);  // r + 1 >= 5
  EXPECT_EQ(k5["value"], scan(late, "r", 4, 0.999)) << k5.dump();
  const std::string layered = "--p 0.3 --q 0.8 --n 2 --policy layered --r 1 --kinds http_529=1 --fallback-after 3 "
                              "--p2 0.1";
  const Json s = json_of("exact " + layered + " --target 0.995 --solve s --json");
  EXPECT_EQ(s["value"], scan(layered, "s", 1, 0.995)) << s.dump();
  const std::string timed = "--t-good 600 --t-bad 60 --request-seconds 5 --n 5 --fallback-after 2 --t-good2 900 "
                            "--t-bad2 30";
  const Json t = json_of("exact " + timed + " --target 0.99 --solve r --json");
  EXPECT_EQ(t["value"], scan(timed, "r", 1, 0.99)) << t.dump();
}

TEST(FallbackCli, BadInputIsOneLineAndExitTwo) {
  const std::string model = "exact --p 0.3 --q 0.8 --r 2 --n 2";
  expect_input_error(model + " --p2 0.1", "--p2 needs --fallback-after");
  expect_input_error(model + " --fallback-after 2", "--fallback-after needs --p2");
  expect_input_error(model + " --fallback-after 0 --p2 0.1", "fallback-after = 0: must be a whole number in [1, 3]");
  expect_input_error(model + " --fallback-after 4 --p2 0.1", "fallback-after = 4: must be a whole number in [1, 3]");
  expect_input_error(model + " --fallback-after 1 --p2 1.2", "second provider: p = 1.2 is out of range");
  expect_input_error(model + " --fallback-after 1 --p2 0.1 --q2 0.5 --burst-mean2 3", "not both");
  expect_input_error(model + " --fallback-after 1 --p2 0.6 --q2 0.1", "second provider: q = 0.1 is out of range");
  expect_input_error(model + " --fallback-after 1 --p2 0.1 --shared-burst-mean 5", "--shared-burst-mean needs --shared-p");
  expect_input_error(model + " --fallback-after 1 --p2 0.1 --kinds2 cut=-1", "cut");
  expect_input_error(model + " --fallback-after 1 --p2 0.1 --shared-p -0.5", "shared-p = -0.5 is out of range");
  expect_input_error(model + " --fallback-after 1 --p2 0.1 --shared-p 1", "shared-p = 1 is out of range");
  expect_input_error(model + " --fallback-after 1 --p2 0.1 --shared-p 0", "shared-p = 0 is out of range");
  expect_input_error(model + " --fallback-after 1 --p2 0.1 --burst-mean2 0.5", "burst-mean2 = 0.5 is out of range");
  expect_input_error("simulate --p 0.3 --r 2 --n 2 --fallback-after 1 --p2 0.1 --shared-p nan", "shared-p = nan");
  expect_input_error(model + " --fallback-after 1 --p2 0.1 --price-in2 1", "--price-in2 needs --price-in");
  expect_input_error(model + " --fallback-after 1 --p2 0.1 --method both", "--method matrix only");
  expect_input_error("exact --t-good 600 --t-bad 60 --r 2 --n 2 --fallback-after 1 --p2 0.1", "time mode");
  expect_input_error("simulate --p 0.3 --r 2 --n 2 --chain continuous --fallback-after 1 --p2 0.1",
                     "covers the fresh scope only");
}

}  // namespace fallback_cli_test
