// relsim exact and simulate with --tool-faults and --harness
// (docs/tool_model.md): the JSON's tool fields, the table's block, the same
// bytes for any thread count, and bad input as one line and exit 2.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "support/input_error_cli.hpp"
#include "support/run.hpp"
#include "support/run_json.hpp"

namespace {

using relsim::test::expect_input_error;
using relsim::test::run_relsim;
using Json = nlohmann::json;

const std::string kModel = "--p 0.1 --q 0.5 --n 10 --r 2";
const std::string kFaults = "transport=0.01,exec=0.02,partial_write=0.01,truncate=0.02,rollback=0.1";

using relsim::test::json_of;

TEST(ToolModelCli, ExactJsonEchoesTheToolModelAndSumsToOne) {
  for (const std::string harness : {"naive", "guarded"}) {
    const Json j = json_of("exact " + kModel + " --tool-faults " + kFaults + " --harness " + harness + " --json");
    EXPECT_EQ(j["tool_faults"], kFaults);
    EXPECT_EQ(j["harness"], harness);
    EXPECT_EQ(j["success"].get<double>(), j["outcomes"]["done"].get<double>());
    double sum = 0.0, wrong = 0.0;
    for (const auto& [name, x] : j["outcomes"].items()) sum += x.get<double>();
    for (const auto& [name, x] : j["tool_outcomes"].items()) {
      sum += x.get<double>();
      if (name == "silent_wrong" || name == "side_effect_left") wrong += x.get<double>();
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << harness;
    EXPECT_NEAR(j["wrong"].get<double>(), wrong, 1e-15) << harness;
    EXPECT_EQ(j["tool_outcomes"].contains("silent_wrong"), harness == "naive");
    EXPECT_EQ(j["tool_outcomes"].contains("tool_error:transport"), harness == "guarded");
    EXPECT_TRUE(j["requests_quantiles"].is_null());
  }
}

TEST(ToolModelCli, WithoutToolFaultsTheJsonHasNoToolKeys) {
  const Json j = json_of("exact " + kModel + " --json");
  EXPECT_FALSE(j.contains("tool_outcomes"));
  EXPECT_FALSE(j.contains("harness"));
  const Json s = json_of("simulate " + kModel + " --json");
  EXPECT_FALSE(s.contains("tool_outcomes"));
}

TEST(ToolModelCli, TablesPrintTheToolBlock) {
  const auto e = run_relsim("exact " + kModel + " --tool-faults " + kFaults + " --harness naive");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("tool calls             naive harness, " + kFaults), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("    silent_wrong"), std::string::npos) << e.out;
  const auto s = run_relsim("simulate " + kModel + " --tool-faults " + kFaults + " --tasks 2000");
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_NE(s.out.find("guarded harness"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("    tool_error:exec"), std::string::npos) << s.out;
}

TEST(ToolModelCli, SimulateCoversExactAndPrintsTheSameBytesForAnyThreadCount) {
  const std::string args = "simulate " + kModel + " --tool-faults " + kFaults + " --harness naive --tasks 100000 --json";
  const auto one = run_relsim(args + " --threads 1");
  const auto two = run_relsim(args + " --threads 2");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
  const Json j = Json::parse(one.out);
  for (const auto& [name, x] : j["tool_outcome_rates"].items()) {
    // 5 standard errors around the exact value (not the interval, which is 1.96).
    const double p = x["exact"].get<double>();
    EXPECT_NEAR(x["rate"].get<double>(), p, 5.0 * std::sqrt(p * (1.0 - p) / 100000.0) + 1e-12) << name;
    EXPECT_EQ(j["tool_outcomes"][name].get<std::int64_t>(),
              static_cast<std::int64_t>(std::llround(x["rate"].get<double>() * 100000.0)));
  }
}

TEST(ToolModelCli, BadInputIsOneLineAndExitTwo) {
  for (const std::string& cmd : {"exact " + kModel, "simulate " + kModel}) {
    expect_input_error(cmd + " --tool-faults exec=1.2", "exec = '1.2'");
    expect_input_error(cmd + " --tool-faults exec=-0.1", "exec = '-0.1'");
    expect_input_error(cmd + " --tool-faults foo=0.1", "'foo'");
    expect_input_error(cmd + " --tool-faults exec=0.1,exec=0.2", "'exec' twice");
    expect_input_error(cmd + " --tool-faults exec", "item 'exec'");
    expect_input_error(cmd + " --tool-faults exec=0.1 --harness foo", "harness = 'foo'");
    expect_input_error(cmd + " --harness naive", "harness = 'naive' needs --tool-faults");
    expect_input_error(cmd + " --tool-faults exec=0.1 --chain continuous", "chain = continuous");
  }
  for (const std::string cmd : {"exact", "simulate"})
    expect_input_error(cmd + " --t-good 3600 --t-bad 120 --r 2 --n 10 --tool-faults exec=0.1",
                       "tool-faults = 'exec=0.1': time mode");
  expect_input_error("exact " + kModel + " --tool-faults exec=0.1 --method enumerate", "method = 'enumerate'");
  expect_input_error("exact " + kModel + " --tool-faults exec=0.1 --csv -", "leave out --csv");
  expect_input_error("exact --p 0.1 --n 10 --tool-faults exec=0.1 --target 0.9 --solve r", "--solve");
}

}  // namespace
