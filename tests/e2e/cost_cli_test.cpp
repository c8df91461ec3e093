// relsim exact with prices (docs/model.md, Cost): the JSON's cost keys and
// billing echo, the table's rows, the cost in time mode, --require on the
// cost metrics, and bad input as one line and exit 2 with no output.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "support/input_error_cli.hpp"
#include "support/run.hpp"
#include "support/run_json.hpp"

namespace {

using relsim::test::expect_input_error;
using relsim::test::json_of;
using relsim::test::run_relsim;
using Json = nlohmann::json;

const std::string kModel = "exact --p 0.3 --q 0.8 --r 2 --n 2";
const std::string kPrices = " --input-tokens 20000 --output-tokens 800 --price-in 3 --price-out 15";

TEST(CostCli, ExactJsonHasTheCostKeysAndWhatEachRequestCosts) {
  const Json j = json_of(kModel + kPrices + " --json");
  const Json& b = j["billing"];
  EXPECT_EQ(b["break_at"],
            "cut=0.5,no_stop=1,malformed=0,overloaded=0,stall=0,max_tokens=1,bad_tool_args=1,duplicate_event=1,stall_first=0");
  // 20000 x 3 / 1e6 + 800 x 15 / 1e6, and the in-stream kinds at their breaks.
  EXPECT_NEAR(b["request_cost"]["ok"].get<double>(), 0.072, 1e-15);
  EXPECT_NEAR(b["request_cost"]["cut"].get<double>(), 0.066, 1e-15);
  EXPECT_NEAR(b["request_cost"]["no_stop"].get<double>(), 0.072, 1e-15);
  EXPECT_NEAR(b["request_cost"]["stall"].get<double>(), 0.06, 1e-15);
  // The default kinds are all in-stream: every request is billed at least
  // its input, a done task at least two good requests.
  const double mean = j["cost_mean"].get<double>();
  EXPECT_GT(mean, 0.06 * j["mean_requests"].get<double>() - 1e-12);
  EXPECT_LT(mean, 0.072 * j["mean_requests"].get<double>() + 1e-12);
  EXPECT_GE(j["cost_mean_done"].get<double>(), 0.144 - 1e-12);
  ASSERT_TRUE(j["cost_quantiles"].is_object());
  EXPECT_LE(j["cost_quantiles"]["p50"].get<double>(), j["cost_quantiles"]["p99"].get<double>());
  // Without prices, no cost keys.
  const Json plain = json_of(kModel + " --json");
  EXPECT_FALSE(plain.contains("cost_mean"));
  EXPECT_FALSE(plain.contains("billing"));
}

TEST(CostCli, RefusedFaultsBillNothingAndBreakAtMovesTheBreak) {
  const Json refused = json_of(kModel + kPrices + " --kinds http_529=1 --json");
  EXPECT_EQ(refused["billing"]["request_cost"]["http_529"].get<double>(), 0.0);
  EXPECT_NEAR(refused["cost_mean_done"].get<double>(), 0.144, 1e-12);  // two good requests, nothing else billed
  const Json late = json_of(kModel + kPrices + " --kinds stall=1 --break-at stall=1 --json");
  EXPECT_NEAR(late["billing"]["request_cost"]["stall"].get<double>(), 0.072, 1e-15);
  EXPECT_NEAR(late["cost_mean"].get<double>(), 0.072 * late["mean_requests"].get<double>(), 1e-12);
}

TEST(CostCli, TableRowsTimeModeAndRequire) {
  const auto table = run_relsim(kModel + kPrices);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("mean cost"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("cost p50, p90, p99"), std::string::npos) << table.out;
  const Json timed = json_of("exact --t-good 600 --t-bad 60 --r 2 --n 4 --request-seconds 5 --backoff list:1,2,4" +
                             kPrices + " --json");
  EXPECT_GT(timed["cost_mean"].get<double>(), 0.0);
  EXPECT_TRUE(timed["cost_quantiles"].is_object());
  const auto missed = run_relsim(kModel + kPrices + " --require cost_mean<=0.01");
  EXPECT_EQ(missed.code, 1) << missed.err;
  EXPECT_NE(missed.err.find("threshold missed: cost_mean<=0.01"), std::string::npos) << missed.err;
  const auto held = run_relsim(kModel + kPrices + " --require cost_mean<=1,p99_cost<=1");
  EXPECT_EQ(held.code, 0) << held.err;
}

// The simulated cost (the general walk, each request's cost to the
// nano-dollar) against the exact engine's: the mean within 5 standard
// errors, the done tasks' mean within 5 of theirs, the p50 and p90 equal
// to the exact distribution's, the same bytes for 1 and 2 threads.
TEST(CostCli, SimulateMatchesExactAndIsTheSameForAnyThreadCount) {
  const std::string cases[] = {
      "--p 0.3 --q 0.8 --r 2 --n 2",
      "--p 0.1 --burst-mean 4 --r 2 --n 5 --policy layered --s 2 --kinds cut=1,http_529=2,stall=1",
      "--p 0.2 --q 0.6 --r 1 --n 3 --policy naive --s 2 --kinds slow_headers=1,overloaded=1 --break-at overloaded=0.3",
      // A cached prefix, written by the first billed request: in steps and in seconds.
      "--p 0.3 --q 0.8 --r 2 --n 3 --kinds http_529=2,cut=1 --cached-tokens 15000",
      "--t-good 300 --t-bad 60 --request-seconds 2 --r 2 --n 3 --kinds http_529=2,cut=1 --cached-tokens 12000 "
      "--cache-read 0.25 --cache-write 4",
  };
  for (const std::string& model : cases) {
    SCOPED_TRACE(model);
    const std::string sim = "simulate " + model + kPrices + " --tasks 100000 --seed 20261206 --json";
    const auto one = run_relsim(sim + " --threads 1");
    const auto two = run_relsim(sim + " --threads 2");
    ASSERT_EQ(one.code, 0) << one.err;
    EXPECT_EQ(one.out, two.out);
    const Json s = Json::parse(one.out);
    const Json e = json_of("exact " + model + kPrices + " --json");
    const double se = s["cost_sd"].get<double>() / std::sqrt(100000.0);
    EXPECT_NEAR(s["cost_mean"].get<double>(), e["cost_mean"].get<double>(), 5.0 * se);
    EXPECT_EQ(s["exact_cost_mean"].get<double>(), e["cost_mean"].get<double>());
    EXPECT_NEAR(s["cost_mean_done"].get<double>(), e["cost_mean_done"].get<double>(), 5.0 * se / std::sqrt(e["success"].get<double>()));
    for (const char* level : {"p50", "p90"})
      EXPECT_NEAR(s["cost_quantiles"][level].get<double>(), e["cost_quantiles"][level].get<double>(), 1e-9) << level;
    if (model.find("--t-good") == std::string::npos) { EXPECT_EQ(s["kernel"], "walk"); }  // time mode has its own walk
  }
}

TEST(CostCli, BadInputIsOneLineAndExitTwo) {
  expect_input_error(kModel + kPrices + " --price-in -1", "price-in = -1 is out of range");
  expect_input_error(kModel + kPrices + " --input-tokens 1.5", "input-tokens = 1.5 is out of range");
  expect_input_error(kModel + kPrices + " --break-at cut=1.5", "cut = '1.5' is out of range");
  expect_input_error(kModel + kPrices + " --break-at http_529=0.5", "never billed");
  expect_input_error(kModel + " --price-in 3 --price-out 15 --input-tokens 100", "--output-tokens is missing");
  expect_input_error(kModel + kPrices + " --cached-tokens 99999999", "cached-tokens = 99999999 is out of range");
  expect_input_error(kModel + kPrices + " --cache-read 0.3", "--cache-read needs --cached-tokens");
  expect_input_error(kModel + " --cached-tokens 100", "--cached-tokens needs the prices");
  expect_input_error(kModel + kPrices + " --cached-tokens 100 --fallback-after 1 --p2 0.1",
                     "a cached prefix with a fallback is not modelled yet");
  expect_input_error(kModel + " --break-at cut=0.2", "the cost needs all four");
  expect_input_error(kModel + kPrices + " --method enumerate", "--method matrix only");
  expect_input_error("exact --p 0.02 --burst-mean 5 --n 30 --target 0.99 --solve r" + kPrices, "print no cost");
  expect_input_error("simulate --t-good 600 --t-bad 60 --r 2 --n 2 --chain continuous" + kPrices,
                     "covers the fresh scope only yet");
  expect_input_error("simulate --p 0.3 --q 0.8 --r 2 --n 2 --chain continuous" + kPrices, "covers the fresh scope only");
  expect_input_error("simulate --p 0.3 --q 0.8 --r 2 --n 2 --price-in 3", "is missing");
}

}  // namespace
