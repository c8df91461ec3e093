// relsim live end to end: the embedded server, the retrying client and the
// oracle agree task by task, and the live counts equal the simulator's for
// the same seed (the plan holds its draws).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "support/run.hpp"

namespace {

struct CliRun {
  int status = -1;
  std::string out;
};

// relsim ARGS; its stdout (stderr is dropped).
CliRun run(const std::string& args) {
  const relsim::test::RunResult r = relsim::test::run_relsim(args);
  return {r.code, r.out};
}

TEST(LiveCli, BurstyReferenceRunHasZeroMismatchesAndTheSimulatorsCounts) {
  const std::string model = "--p 0.3 --q 0.8 --r 2 --n 2 --tasks 120 --seed 7";
  const CliRun live = run("live " + model + " --policy simple --json");
  ASSERT_EQ(live.status, 0) << live.out;
  const auto j = nlohmann::json::parse(live.out);
  EXPECT_EQ(j["tasks"], 120);
  EXPECT_EQ(j["mismatches"], 0);
  EXPECT_EQ(j["wrong"], 0);
  const CliRun sim = run("simulate " + model + " --json");
  ASSERT_EQ(sim.status, 0);
  const auto s = nlohmann::json::parse(sim.out);
  EXPECT_EQ(j["successes"], s["successes"]);
  EXPECT_EQ(j["requests"], s["requests"]);
}

TEST(LiveCli, MixedKindsUnderLayeredMatchTheOracle) {
  const CliRun live = run(
      "live --p 0.3 --q 0.8 --r 2 --n 2 --s 2 --policy layered --tasks 60 --seed 3 "
      "--kinds cut=1,stall=1,slow_headers=2,http_529=1,overloaded=1,http_400=0.2 --json");
  ASSERT_EQ(live.status, 0) << live.out;
  const auto j = nlohmann::json::parse(live.out);
  EXPECT_EQ(j["mismatches"], 0);
  EXPECT_EQ(j["wrong"], 0);
}

TEST(LiveCli, PersistentSlowHeadersCostNaiveNineRequestsOverHttp) {
  const CliRun live = run("live --fault slow_headers --times always --policy naive --n 1 --r 2 --s 2 --json");
  ASSERT_EQ(live.status, 0) << live.out;
  const auto j = nlohmann::json::parse(live.out);
  EXPECT_EQ(j["requests"], 9);
  EXPECT_EQ(j["outcomes"]["crash:slow_headers"], 1);
  EXPECT_EQ(j["mismatches"], 0);
}

}  // namespace
