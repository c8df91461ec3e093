// --require, thresholds for CI (docs/thresholds.md): on the reference
// experiment, whose exact success 0.763675 is known from outside the code
// (docs/model.md: the closed form), a threshold just below it holds and one
// just above it is missed, with one line per threshold missed and exit 1;
// the output itself is the same as without --require (the positive control);
// a bad expression is refused while parsing (exit 2, one line).
#include <gtest/gtest.h>

#include <string>

#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

using relsim::test::expect_input_error;
using relsim::test::run_relsim;

const std::string kReference = "exact --p 0.3 --q 0.8 --r 2 --n 2";

TEST(Require, AThresholdJustBelowTheKnownValueHoldsAndJustAboveIsMissed) {
  const auto plain = run_relsim(kReference);
  ASSERT_EQ(plain.code, 0) << plain.err;
  const auto held = run_relsim(kReference + " --require success>=0.7636,env_error<=0.2364");
  EXPECT_EQ(held.code, 0) << held.err;
  EXPECT_EQ(held.err, "");
  EXPECT_EQ(held.out, plain.out);
  const auto missed = run_relsim(kReference + " --require success>=0.7637");
  EXPECT_EQ(missed.code, 1);
  EXPECT_EQ(missed.out, plain.out);
  EXPECT_EQ(missed.err, "relsim: threshold missed: success>=0.7637 (success = 0.763675)\n");
}

TEST(Require, OneLinePerThresholdMissedAndWhyAMetricIsMissing) {
  // Spaces around the parts are allowed.
  const auto r = run_relsim({"exact", "--p", "0.3", "--q", "0.8", "--r", "2", "--n", "2", "--require",
                             "success >= 0.995, requests_per_task<=45,p99_seconds<=600"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "relsim: threshold missed: success>=0.995 (success = 0.763675)\n"
            "relsim: threshold missed: p99_seconds<=600 (p99_seconds: seconds exist in time mode only (--t-good, "
            "--t-bad))\n");
  // In time mode the seconds are there.
  const auto timed = run_relsim("exact --t-good 600 --t-bad 60 --r 2 --n 3 --backoff list:1,2 --require "
                                "p99_seconds<=600,mean_seconds>0");
  EXPECT_EQ(timed.code, 0) << timed.err;
}

TEST(Require, SimulateGatesOnTheLowEndOfItsInterval) {
  const std::string sim = "simulate --p 0.3 --q 0.8 --r 2 --n 2 --tasks 4000 --seed 7";
  const auto point = run_relsim(sim + " --require success>=0.75");
  EXPECT_EQ(point.code, 0) << point.err;
  const auto low = run_relsim(sim + " --require success_low>=0.76");
  EXPECT_EQ(low.code, 1);
  EXPECT_NE(low.err.find("relsim: threshold missed: success_low>=0.76 (success_low = "), std::string::npos) << low.err;
}

TEST(Require, BadExpressionsAreOneLineNamingTheMetricAndTheAllowedNames) {
  expect_input_error(kReference + " --require sucess>=0.9",
                     "require = 'sucess>=0.9': no metric 'sucess' here: use success, env_error, requests_per_task, "
                     "p99_requests, mean_seconds, mean_seconds_done, p99_seconds");
  expect_input_error(kReference + " --require success=0.9", "is not NAME OP NUMBER: OP is >=, <=, > or <");
  expect_input_error(kReference + " --require success>=high", "'high' is not a finite number");
  expect_input_error(kReference + " --require success>=0.9,", "require = '' is not NAME OP NUMBER");
  expect_input_error("simulate --p 0.3 --r 2 --n 2 --require p99_requests<=9", "use success, success_low");
  expect_input_error("exact --p 0.3 --n 2 --r 1 --solve s --target 0.9 --require success>=0.5",
                     "--require checks the metrics of one run");
}

}  // namespace
