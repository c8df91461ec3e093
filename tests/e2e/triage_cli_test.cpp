// relsim exact --triage (docs/bughunt.md): a testing agent's verdict rates as
// the executable prints them, against the closed forms of a fresh chain
// written here, and its bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "support/input_error_cli.hpp"
#include "support/run.hpp"
#include "support/run_json.hpp"

namespace {

using relsim::test::expect_input_error;
using relsim::test::run_relsim;
using Json = nlohmann::json;

using relsim::test::json_of;

TEST(TriageCli, JsonHasTheRatesOfBothTestersAndBothVersions) {
  // p = 0.3, q = 0.8: a careful tester with one reload right away fails both
  // loads with p q = 0.24; two silent steps later, with p (p + (1 - p) λ^3),
  // λ = q - p0 = 0.8 - 0.3 × 0.2 / 0.7.
  const Json careful = json_of("exact --triage careful --p 0.3 --q 0.8 --json");
  for (const char* key : {"triage", "reloads", "p", "q", "b", "g", "chain", "false_bug", "env_error", "missed_bug",
                          "healthy", "buggy"})
    EXPECT_TRUE(careful.contains(key)) << key;
  EXPECT_NEAR(careful["env_error"].get<double>(), 0.24, 1e-12);
  EXPECT_EQ(careful["false_bug"].get<double>(), 0.0);
  EXPECT_EQ(careful["missed_bug"].get<double>(), 0.0);
  EXPECT_NEAR(careful["buggy"]["bug"].get<double>(), 0.76, 1e-12);
  EXPECT_NEAR(careful["healthy"]["mean_loads"].get<double>(), 1.3, 1e-12);
  const double lambda = 0.8 - 0.3 * 0.2 / 0.7;
  EXPECT_NEAR(json_of("exact --triage careful --p 0.3 --q 0.8 --b 2 --json")["env_error"].get<double>(),
              0.3 * (0.3 + 0.7 * std::pow(lambda, 3)), 1e-12);
  const Json naive = json_of("exact --triage naive --p 0.3 --q 0.8 --json");
  EXPECT_NEAR(naive["false_bug"].get<double>(), 0.3, 1e-12);
  EXPECT_TRUE(naive["reloads"].is_null());
  EXPECT_EQ(naive["buggy"]["bug"].get<double>(), 1.0);
}

TEST(TriageCli, TheTableNamesTheTesterAndTheChain) {
  const auto r = run_relsim("exact --triage careful --reloads 2 --p 0.1 --burst-mean 5 --b 3 --chain continuous --g 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("reloaded up to 2 times"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 silent steps between two loads"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("continuous chain (1 silent step between runs)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("healthy app: PASS"), std::string::npos) << r.out;
}

TEST(TriageCli, BadInputIsOneLineAndExitTwo) {
  expect_input_error("exact --triage sloppy --p 0.3", "triage = 'sloppy'");
  expect_input_error("exact --triage careful --reloads -1 --p 0.3", "reloads = -1");
  expect_input_error("exact --triage careful --reloads 1001 --p 0.3", "reloads = 1001");
  expect_input_error("exact --triage naive --reloads 2 --p 0.3", "never reloads");
  expect_input_error("exact --triage careful --r 2 --p 0.3", "leave out --n and --r");
  expect_input_error("exact --triage careful --n 2 --p 0.3", "leave out --n and --r");
  expect_input_error("exact --reloads 2 --p 0.3 --r 1 --n 1", "--reloads needs --triage careful");
  expect_input_error("exact --triage careful --p 1.2", "1.2");
  expect_input_error("exact --triage careful --p 0.3 --target 0.9 --solve r", "--solve");
  expect_input_error("exact --p 0.3 --r 1", "--n is required");
}

}  // namespace
