// End to end under MPI: `mpirun -np 2 relsim ...` prints the same bytes as one
// process (docs/scaling.md), and a bad input ends the whole job quickly with
// one error line. Skipped when relsim was built without MPI or mpirun is
// missing (a failure under CI=true).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "relsim/parallel/parallel.hpp"
#include "support/files.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kExe = RELSIM_EXE;

using Captured = relsim::test::RunResult;
using relsim::test::split_args;

using relsim::test::slurp;

// One OpenMP thread per process.
relsim::test::RunOptions one_thread() {
  relsim::test::RunOptions o;
  o.env = {"OMP_NUM_THREADS=1"};
  return o;
}

// As root (CI containers) Open MPI wants --allow-run-as-root; two ranks on a
// one-core runner need --oversubscribe. `timeout` bounds a hang (and, as it
// runs mpirun in a process group of its own, kills every rank then).
std::vector<std::string> mpirun(int ranks, const std::string& args) {
  std::vector<std::string> argv = {"timeout", "60", "mpirun", "--allow-run-as-root", "--oversubscribe",
                                   "--mca", "btl", "self,vader", "-np", std::to_string(ranks), kExe};
  for (const std::string& a : split_args(args)) argv.push_back(a);
  return argv;
}

// relsim ARGS as one process, and under `mpirun -np RANKS`.
Captured run_one(const std::string& args) { return relsim::test::run_relsim(args, one_thread()); }
Captured run_mpi(int ranks, const std::string& args) {
  return relsim::test::run_program(mpirun(ranks, args), one_thread());
}

// Why the MPI tests cannot run here, or "" when they can.
std::string mpi_missing() {
  if (!relsim::parallel::built_with_mpi()) return "relsim was built without MPI (configure with -DRELSIM_MPI=ON)";
  if (relsim::test::find_program("mpirun").empty()) return "mpirun is not on PATH (apt-get install openmpi-bin)";
  return "";
}

#define SKIP_WITHOUT_MPI()                                          \
  do {                                                              \
    const std::string why = mpi_missing();                          \
    if (!why.empty()) RELSIM_SKIP_OR_FAIL(why);                     \
  } while (0)

// How many of stderr's lines are relsim's own `relsim: error:` lines.
int error_lines(const std::string& err) {
  std::istringstream lines(err);
  int ours = 0;
  for (std::string line; std::getline(lines, line);) ours += line.rfind("relsim: error:", 0) == 0;
  return ours;
}

void expect_same_output(const std::string& args) {
  const Captured one = run_one(args);
  const Captured two = run_mpi(2, args);
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

TEST(Mpi, TwoRanksFleetPrintsTheSameBytes) {
  SKIP_WITHOUT_MPI();
  expect_same_output("fleet --agents 300 --tenants 3 --start poisson:25 --duration 60 --quota 400 --capacity 30 "
                     "--queue 40 --header-timeout 3 --pool 20 --throttle grpc:10,0.1 --policy layered --p 0.05 --q 0.5 "
                     "--r 2 --n 3 --replicates 5 --json");
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
  const Captured c = run_mpi(2, "simulate --p 1.5 --r 2 --n 2 --tasks 1000");
  EXPECT_NE(c.code, 0);
  EXPECT_NE(c.code, 124) << "timed out";
  EXPECT_TRUE(c.out.empty()) << c.out;
  EXPECT_EQ(error_lines(c.err), 1) << c.err;
}

// Commands that are not split run on rank 0 alone: one copy of the output,
// and the same exit code as one process.
TEST(Mpi, UnsplitCommandsPrintOnce) {
  SKIP_WITHOUT_MPI();
  const std::string known = std::string(RELSIM_SOURCE_DIR) + "/data/known_values.csv";
  expect_same_output("check " + known);
  expect_same_output("plan --p 0.3 --q 0.8 --r 2 --n 2 --tasks 50 --seed 7");
  expect_same_output("exact --p 0.3 --q 0.8 --r 2 --n 2 --json");
  const Captured help = run_mpi(2, "simulate --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_EQ(help.out, run_one("simulate --help").out);
}

// A failure of rank 0 alone (the other rank waits, it runs nothing) still ends
// the job at once with one line.
TEST(Mpi, FailureOnRankZeroAloneEndsTheJob) {
  SKIP_WITHOUT_MPI();
  const Captured c = run_mpi(2, "check /nonexistent/known_values.csv");
  EXPECT_EQ(c.code, 2) << c.err;
  EXPECT_TRUE(c.out.empty()) << c.out;
  EXPECT_EQ(error_lines(c.err), 1) << c.err;
}

// The pid of the relsim process of `rank` whose command line contains
// `marker` (so that tests running side by side never pick each other's
// ranks), from the environment Open MPI gives each rank; 0 when none is there
// yet.
pid_t rank_pid(int rank, const std::string& marker) {
  const std::string want = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    if (fs::read_symlink(entry.path() / "exe", ec) != fs::path(kExe) || ec) continue;
    if (slurp(entry.path() / "cmdline").find(marker) == std::string::npos) continue;
    const std::string env = slurp(entry.path() / "environ");
    std::size_t at = 0;
    for (std::size_t end; (end = env.find('\0', at)) != std::string::npos; at = end + 1)
      if (env.compare(at, end - at, want) == 0) return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

// A rank killed mid-run ends the whole job: non-zero, no hang (mpirun is
// bounded by `timeout`), and no output file, whole or partial.
TEST(Mpi, KilledRankEndsTheJobWithoutAnOutputFile) {
  SKIP_WITHOUT_MPI();
  const fs::path dir = fs::temp_directory_path() / ("relsim_mpi_kill." + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path csv = dir / "sweep.csv";
  // Long enough that it is still running when killed (minutes on one core).
  std::vector<std::string> argv =
      mpirun(2, "sweep --p 0.1:0.9:0.1 --q 0.95 --r 2 --n 50 --tasks 100000000 --out");
  argv.push_back(csv.string());
  relsim::test::Background job(argv, one_thread());
  pid_t victim = 0;
  for (int i = 0; i < 600 && victim == 0; ++i) {  // up to 30 s for mpirun to start the ranks
    ::usleep(50'000);
    victim = rank_pid(1, csv.string());
  }
  ASSERT_NE(victim, 0) << "rank 1 never appeared";
  ::usleep(300'000);  // let it get into the work
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  const int code = job.wait();
  ASSERT_FALSE(job.signaled());
  EXPECT_NE(code, 0);
  EXPECT_NE(code, 124) << "mpirun hung until the timeout";
  EXPECT_TRUE(job.read_rest(10).empty());
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) left.push_back(entry.path().string());
  EXPECT_TRUE(left.empty()) << "left behind: " << left.front();
  fs::remove_all(dir);
}

}  // namespace
