// relsim simulate end to end: the executable's JSON is byte-identical for
// any thread count, carries the documented keys, and bad input is one line on
// stderr with exit code 2. The engine itself is tests/unit/simulate_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/run.hpp"

namespace {

using relsim::test::RunResult;
using relsim::test::split_args;

// Runs the built relsim with `args` under `env` (e.g. "OMP_NUM_THREADS=2").
RunResult simulate_relsim(const std::string& env, const std::vector<std::string>& args) {
  relsim::test::RunOptions options;
  if (!env.empty()) options.env.push_back(env);
  return relsim::test::run_relsim(args, options);
}

// split_args, where '' is one empty argument (as the shell reads it).
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out = split_args(line);
  for (std::string& w : out)
    if (w == "''") w.clear();
  return out;
}

TEST(SimulateCli, JsonIsByteIdenticalForAnyThreadCount) {
  for (const std::string scope : {"fresh", "continuous"}) {
    const std::string args = "simulate --p 0.3 --q 0.8 --r 2 --n 2 --b 1 --tasks 200003 --seed 99 --json --chain " + scope;
    const RunResult base = simulate_relsim("OMP_NUM_THREADS=1", split_args(args));
    ASSERT_EQ(base.code, 0) << base.err;
    ASSERT_NE(base.out.find("\"tasks\": 200003"), std::string::npos) << base.out;
    for (const std::string env : {"OMP_NUM_THREADS=2", "OMP_NUM_THREADS=4"}) {
      const RunResult other = simulate_relsim(env, split_args(args));
      EXPECT_EQ(other.code, 0);
      EXPECT_EQ(other.out, base.out) << env << " " << scope;
    }
    for (const std::string threads : {"1", "3"}) {
      const RunResult other = simulate_relsim("OMP_NUM_THREADS=2", split_args(args + " --threads " + threads));
      EXPECT_EQ(other.out, base.out) << "--threads " << threads << " " << scope;
    }
  }
}

TEST(SimulateCli, JsonCarriesTheDocumentedKeys) {
  const RunResult run =
      simulate_relsim("", split_args("simulate --p 0.3 --q 0.8 --r 2 --n 2 --json --kinds cut=1,stall=3"));
  ASSERT_EQ(run.code, 0) << run.err;
  for (const char* key : {"\"tasks\": 400", "\"seed\": 20261001", "\"successes\"", "\"rate\"", "\"ci_low\"",
                          "\"ci_high\"", "\"interval\": \"wilson\"", "\"confidence\"", "\"exact\": 0.7636754285714",
                          "\"covered\"", "\"requests\"", "\"faults\": {\"cut\": ", "\"stall\": ", "\"p\"", "\"q\"",
                          "\"r\"", "\"n\"", "\"b\"", "\"g\"", "\"chain\": \"fresh\"", "\"lanes\""})
    EXPECT_NE(run.out.find(key), std::string::npos) << key << " in " << run.out;
  EXPECT_EQ(run.out.find("no_stop"), std::string::npos);  // weight 0: not listed
}

TEST(SimulateCli, ReferenceExperimentShowsExactIntervalRequestsAndFaults) {
  const RunResult run = simulate_relsim("", split_args("simulate --p 0.3 --q 0.8 --r 2 --n 2"));
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  for (const char* text : {"/400", "95% wilson interval", "exact P(success)         0.763675428571", "interval covers exact",
                           "requests sent", "faults injected", "cut", "no_stop", "malformed", "overloaded", "stall"})
    EXPECT_NE(run.out.find(text), std::string::npos) << text << " in\n" << run.out;
}

TEST(SimulateCli, BadInputsExitTwoWithOneLineOnStderr) {
  const std::string base = "simulate --p 0.3 --q 0.8 --r 2 --n 2 ";
  for (const std::string bad : {"--tasks 0", "--tasks 1000000000001", "--tasks -5", "--confidence 1.5",
                                "--confidence 0", "--kinds cut=-1", "--kinds bogus=1", "--kinds ''", "--kinds cut=0",
                                "--kinds cut=1,cut=2", "--kinds cut", "--lanes 0", "--lanes 1000001",
                                "--interval foo", "--threads -1", "--seed -1", "--seed 12x", "--chain sideways"}) {
    const RunResult run = simulate_relsim("", words(base + bad));
    EXPECT_EQ(run.code, 2) << bad;
    EXPECT_EQ(run.out, "") << bad;
    EXPECT_EQ(run.err.rfind("relsim: error: ", 0), 0u) << bad << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << bad << ": " << run.err;
  }
}

}  // namespace
