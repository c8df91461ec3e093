// The options every command shares, as a new user meets them (issue: the
// numbers people ask first): --burst-mean L in place of --q (q = 1 - 1/L;
// the reference experiment's q = 0.8 is bursts of 5 on average), --seed
// read the same strict way everywhere, and CLI11's parse errors in the
// project's one-line style with a hint.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

using relsim::test::run_relsim;

using relsim::test::expect_input_error;

TEST(BurstMean, FiveIsTheReferenceExperimentsQOfPoint8) {
  // The reference experiment (p = 0.3, q = 0.8, r = 2, n = 2): 0.763675.
  const auto by_q = run_relsim("exact --p 0.3 --q 0.8 --r 2 --n 2 --json");
  const auto by_l = run_relsim("exact --p 0.3 --burst-mean 5 --r 2 --n 2 --json");
  ASSERT_EQ(by_l.code, 0) << by_l.err;
  const auto j = nlohmann::json::parse(by_l.out);
  EXPECT_NEAR(j["success"].get<double>(), 0.763675, 5e-7);
  EXPECT_EQ(by_l.out, by_q.out);
  // A burst of 1 on average: no bad request follows a bad one (q = 0).
  EXPECT_EQ(run_relsim("exact --p 0.3 --burst-mean 1 --r 2 --n 2 --json").out,
            run_relsim("exact --p 0.3 --q 0 --r 2 --n 2 --json").out);
}

TEST(BurstMean, EveryCommandWithTheModelTakesIt) {
  EXPECT_EQ(run_relsim("simulate --p 0.3 --burst-mean 5 --r 2 --n 2 --tasks 2000 --json").out,
            run_relsim("simulate --p 0.3 --q 0.8 --r 2 --n 2 --tasks 2000 --json").out);
  EXPECT_EQ(run_relsim("plan --p 0.3 --burst-mean 5 --r 2 --n 2 --tasks 20").out,
            run_relsim("plan --p 0.3 --q 0.8 --r 2 --n 2 --tasks 20").out);
  EXPECT_EQ(run_relsim("fleet --p 0.05 --burst-mean 4 --agents 5 --json").out,
            run_relsim("fleet --p 0.05 --q 0.75 --agents 5 --json").out);
}

TEST(BurstMean, SweepTakesItAsAnAxisAndWritesQ) {
  const auto r = run_relsim("sweep --p 0.3 --burst-mean 1,5,10 --r 2 --n 2");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto by_q = run_relsim("sweep --p 0.3 --q 0,0.8,0.9 --r 2 --n 2");
  EXPECT_EQ(r.out, by_q.out);
}

TEST(BurstMean, BadValuesAreOneLine) {
  expect_input_error("exact --p 0.3 --burst-mean 0.5 --r 2 --n 2", "burst mean = 0.5 is out of range");
  expect_input_error("exact --p 0.3 --burst-mean 5 --q 0.8 --r 2 --n 2", "give --q or --burst-mean, not both");
  expect_input_error("sweep --p 0.3 --burst-mean 5 --q 0.8 --r 2 --n 2", "give --q or --burst-mean, not both");
  expect_input_error("sweep --p 0.3 --burst-mean 0.2,5 --r 2 --n 2", "burst mean = 0.2 is out of range");
  // p = 0.9 allows q >= 8/9: bursts of 2 (q = 0.5) are too short for it.
  expect_input_error("exact --p 0.9 --burst-mean 2 --r 2 --n 2", "q = 0.5");
  expect_input_error("exact --t-good 10 --t-bad 1 --burst-mean 5 --r 2 --n 2", "--burst-mean does not apply in time mode");
}

TEST(Seed, EveryCommandReadsItTheSameStrictWay) {
  for (const std::string cmd : {"simulate --p 0.3 --r 2 --n 2", "plan --p 0.3 --r 2 --n 2 --tasks 1",
                                "sweep --p 0.3 --r 2 --n 2 --tasks 10", "fleet --agents 2", "demo --no-live"}) {
    expect_input_error(cmd + " --seed -1", "seed = '-1' is not an integer in [0, 18446744073709551615]");
    expect_input_error(cmd + " --seed 18446744073709551616", "is not an integer in [0, 18446744073709551615]");
    expect_input_error(cmd + " --seed 1e3", "seed = '1e3'");
  }
  for (const std::string cmd : {"simulate", "plan", "sweep", "live", "fit", "tune", "fleet", "demo"}) {
    const auto help = run_relsim(cmd + " --help");
    EXPECT_NE(help.out.find("--seed SEED="), std::string::npos) << cmd << "\n" << help.out;
    EXPECT_NE(help.out.find("an integer in [0, 2^64 - 1]"), std::string::npos) << cmd;
  }
  // The largest seed is taken.
  EXPECT_EQ(run_relsim("plan --p 0.3 --r 2 --n 2 --tasks 1 --seed 18446744073709551615").code, 0);
}

TEST(ParseErrors, ARangeWhereOneNumberGoesPointsToSweep) {
  expect_input_error("exact --p 0.3 --r 0:20:1 --n 2", "--r = '0:20:1' is not a number: a range or a list");
  expect_input_error("exact --p 0.3,0.4 --r 2 --n 2", "relsim sweep");
  expect_input_error("exact --p abc --r 2 --n 2", "--p = 'abc' is not a number");
}

}  // namespace
