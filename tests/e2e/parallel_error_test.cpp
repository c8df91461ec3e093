// An internal error inside simulate()'s OpenMP region (a failed
// RELSIM_ASSERT) leaves relsim as the command line promises: one line on
// stderr, "relsim: internal error: ...", exit code 3 and nothing on stdout,
// never std::terminate's abort (exit 134) or a core dump. The error is made
// on purpose by the test hook RELSIM_TEST_FAIL_TASK=N
// (sim/montecarlo/fail_task_hook.hpp), which raises it where simulate()
// takes up task N, on one of two threads, in the simple policy's chunk
// kernels and in the general walk of the other policies.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "support/run.hpp"

namespace {

using Captured = relsim::test::Run;

const std::string kSimulate = "simulate --p 0.3 --q 0.8 --r 2 --n 2 --tasks 20000 --threads 2";

Captured simulate_failing_task(const std::string& args) {
  relsim::test::RunOptions options;
  options.env = {"RELSIM_TEST_FAIL_TASK=5"};
  return relsim::test::run_relsim(kSimulate + " " + args, options);
}

void expect_one_internal_error(const Captured& run, const std::string& what) {
  EXPECT_FALSE(run.signaled) << what << ": ended by a signal, code " << run.code;
  EXPECT_EQ(run.code, 3) << what << "\nstderr: " << run.err;
  EXPECT_EQ(run.out, "") << what;
  EXPECT_EQ(run.err.rfind("relsim: internal error: ", 0), 0u) << what << "\nstderr: " << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << what << "\nstderr: " << run.err;
  EXPECT_NE(run.err.find("task 5"), std::string::npos) << what << "\nstderr: " << run.err;
}

TEST(ParallelError, SimplePolicyKernelsReportOneLine) {
  expect_one_internal_error(simulate_failing_task("--chain fresh"), "simple, fresh");
  expect_one_internal_error(simulate_failing_task("--chain continuous"), "simple, continuous");
}

TEST(ParallelError, GeneralWalkReportsOneLine) {
  expect_one_internal_error(simulate_failing_task("--policy layered --s 2 --chain fresh"), "layered, fresh");
  expect_one_internal_error(simulate_failing_task("--policy layered --s 2 --chain continuous"), "layered, continuous");
}

TEST(ParallelError, HookOutsideTheRunChangesNothing) {
  const Captured plain = relsim::test::run_relsim(kSimulate);
  relsim::test::RunOptions options;
  options.env = {"RELSIM_TEST_FAIL_TASK=20000"};  // one past the last task
  const Captured hooked = relsim::test::run_relsim(kSimulate, options);
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(hooked.code, 0) << hooked.err;
  EXPECT_EQ(hooked.out, plain.out);
}

}  // namespace
