// End to end under MPI: `mpirun -np 2 relsim ...` prints the same bytes as one
// process (docs/scaling.md), and a bad input ends the whole job quickly with
// one error line. Skipped when relsim was built without MPI or mpirun is
// missing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "relsim/parallel.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kExe = RELSIM_EXE;

struct Captured {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `command` through the shell with one OpenMP thread per process.
Captured run(const std::string& command) {
  const fs::path dir = fs::temp_directory_path() / ("relsim_mpi_test." + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / "out", err = dir / "err";
  const std::string line =
      "OMP_NUM_THREADS=1 " + command + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(line.c_str());
  Captured c;
  c.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  c.out = slurp(out);
  c.err = slurp(err);
  fs::remove_all(dir);
  return c;
}

// As root (CI containers) Open MPI wants --allow-run-as-root; two ranks on a
// one-core runner need --oversubscribe. `timeout` bounds a hang.
std::string mpirun(int ranks) {
  return "timeout 60 mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np " + std::to_string(ranks) +
         " " + kExe + " ";
}

bool mpi_usable() {
  return relsim::parallel::built_with_mpi() && std::system("command -v mpirun >/dev/null 2>&1") == 0;
}

#define SKIP_WITHOUT_MPI()                                                               \
  if (!mpi_usable()) GTEST_SKIP() << "relsim was built without MPI or mpirun is missing"

void expect_same_output(const std::string& args) {
  const Captured one = run(kExe + " " + args);
  const Captured two = run(mpirun(2) + args);
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_FALSE(one.out.empty());
  EXPECT_EQ(two.out, one.out) << "relsim " << args;
}

TEST(Mpi, TwoRanksSimulateFreshPrintsTheSameBytes) {
  SKIP_WITHOUT_MPI();
  expect_same_output("simulate --p 0.3 --q 0.8 --r 2 --n 4 --tasks 300000 --json");
}

TEST(Mpi, TwoRanksSimulateContinuousPrintsTheSameBytes) {
  SKIP_WITHOUT_MPI();
  expect_same_output("simulate --p 0.3 --q 0.8 --r 1 --n 3 --chain continuous --lanes 5 --tasks 100000 --json");
}

TEST(Mpi, TwoRanksSimulateNaivePolicyPrintsTheSameBytes) {
  SKIP_WITHOUT_MPI();
  expect_same_output("simulate --policy naive --p 0.2 --q 0.6 --r 2 --n 3 --tasks 20000 --json");
}

TEST(Mpi, TwoRanksSweepWritesTheSameCsv) {
  SKIP_WITHOUT_MPI();
  expect_same_output("sweep --p 0.1:0.3:0.1 --q 0.5,0.9 --r 0,2 --n 3 --chain fresh,continuous --tasks 5000");
}

TEST(Mpi, TwoRanksEnumerationGivesTheSameBits) {
  SKIP_WITHOUT_MPI();
  expect_same_output("exact --p 0.3 --q 0.8 --r 1 --n 11 --method enumerate --json");
  expect_same_output("exact --p 0.3 --q 0.8 --r 1 --n 11 --chain continuous --method both --json");
}

TEST(Mpi, BadInputEndsTheJobWithOneLine) {
  SKIP_WITHOUT_MPI();
  const Captured c = run(mpirun(2) + "simulate --p 1.5 --r 2 --n 2 --tasks 1000");
  EXPECT_NE(c.code, 0);
  EXPECT_NE(c.code, 124) << "timed out";
  EXPECT_TRUE(c.out.empty()) << c.out;
  std::istringstream lines(c.err);
  int ours = 0;
  for (std::string line; std::getline(lines, line);) ours += line.rfind("relsim: error:", 0) == 0;
  EXPECT_EQ(ours, 1) << c.err;
}

}  // namespace
