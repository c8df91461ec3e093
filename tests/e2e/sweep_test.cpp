// relsim sweep end to end: a golden CSV, byte-identical output for any
// thread count, and points that keep their rows when the grid grows. The
// grid's axis parser alone is tests/unit/grid_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "support/run.hpp"

namespace {

struct Output {
  int status = -1;
  std::string out;
};

// relsim sweep ARGS under `env` (e.g. "OMP_NUM_THREADS=2"); stderr is dropped.
Output sweep(const std::string& args, const std::string& env = "") {
  relsim::test::RunOptions options;
  if (!env.empty()) options.env.push_back(env);
  const relsim::test::RunResult run = relsim::test::run_relsim("sweep " + args, options);
  return {run.code, run.out};
}

const char* kGoldenArgs =
    "--p 0.1:0.5:0.2 --q 0.3,0.8 --r 1,2 --n 2 --b 0,1 --chain fresh,continuous --tasks 2000 --seed 20261001";

// Regenerate with RELSIM_UPDATE_GOLDEN=1 (scripts/update_golden.sh), never
// by the test itself otherwise.
TEST(Sweep, MatchesGoldenCsv) {
  const std::string path = std::string(RELSIM_SOURCE_DIR) + "/data/golden/sweep_small.csv";
  const Output now = sweep(kGoldenArgs);
  ASSERT_EQ(now.status, 0);
  if (const char* update = std::getenv("RELSIM_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << now.out;
    GTEST_SKIP() << "golden CSV rewritten: " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << path << " (run scripts/update_golden.sh)";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(now.out, golden.str());
}

TEST(Sweep, ByteIdenticalForOneTwoAndFourThreads) {
  const std::string args = "--p 0.2,0.4 --q 0.5,0.9 --r 2 --n 3 --chain fresh,continuous --tasks 20000";
  const Output one = sweep(args, "OMP_NUM_THREADS=1");
  const Output two = sweep(args, "OMP_NUM_THREADS=2");
  const Output four = sweep(args + " --threads 4");
  ASSERT_EQ(one.status, 0);
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.out, four.out);
  EXPECT_EQ(std::count(one.out.begin(), one.out.end(), '\n'), 1 + 8);
}

TEST(Sweep, AddingAxisValuesChangesNoExistingRow) {
  const Output small = sweep("--p 0.3 --q 0.8 --r 2 --n 2 --tasks 1000");
  const Output grown = sweep("--p 0.2,0.3 --q 0.5,0.8 --r 1,2 --n 2 --tasks 1000");
  ASSERT_EQ(small.status, 0);
  const std::string row = small.out.substr(small.out.find('\n') + 1);
  EXPECT_NE(grown.out.find(row), std::string::npos) << row;
}

TEST(Sweep, SkipsInvalidPointsOrRejectsThemWithStrict) {
  const Output skipped = sweep("--p 0.6,0.9 --q 0.3,0.8 --r 2 --n 2");
  EXPECT_EQ(skipped.status, 0);
  EXPECT_EQ(std::count(skipped.out.begin(), skipped.out.end(), '\n'), 1 + 1);  // only p=0.6,q=0.8 is valid
  EXPECT_NE(sweep("--p 0.6,0.9 --q 0.3,0.8 --r 2 --n 2 --strict").status, 0);
}

}  // namespace
