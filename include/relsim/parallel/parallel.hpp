#pragma once
// Optional MPI (docs/scaling.md). Work is split between ranks by index, never
// by thread count or timing, and reduced exactly: integer totals are summed,
// floating-point partial sums are gathered to rank 0 and added there in one
// fixed global order. So any number of ranks prints the same bytes as one
// process. Built without MPI (RELSIM_HAVE_MPI undefined), or run without
// mpirun, everything here is the single-process case: rank 0 of 1.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace relsim::parallel {

// Which part of a job this process runs: rank `rank` of `ranks`.
struct Share {
  int rank = 0;
  int ranks = 1;

  bool single() const { return ranks <= 1; }
  bool root() const { return rank == 0; }
  // This rank's contiguous range [first, last) of the indices 0 .. count-1,
  // the first count % ranks ranks taking one more.
  std::pair<std::int64_t, std::int64_t> range(std::int64_t count) const;
};

// True when relsim was built with MPI.
bool built_with_mpi();

// Starts MPI (MPI_Init_thread, FUNNELED: only the main thread calls MPI, the
// OpenMP threads never do) when built with it, and finalises it on
// destruction. One per process, owned by run_cli.
class Session {
 public:
  Session(int& argc, char**& argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

// MPI_COMM_WORLD's rank and size once a Session runs; {0, 1} otherwise.
Share world();

// Element-wise sum over the ranks of `share`, the result on every rank.
// Integers, so the order of the additions does not matter.
void sum_all(std::vector<std::int64_t>& values, const Share& share);

// Rank r holds rows [first, last) = share.range(rows) of a rows x width
// table; rank 0 gets the whole table, rows in global order (other ranks get
// an empty vector). With one rank, returns `mine`.
std::vector<double> gather_rows(const std::vector<double>& mine, std::int64_t rows, std::int64_t width,
                                const Share& share);

// `values` of rank 0 copied to every rank of `share`.
void broadcast(std::vector<double>& values, const Share& share);

// Every rank's strings gathered to rank 0, rank 0's first, then rank 1's...
// (other ranks get an empty vector).
std::vector<std::string> gather_strings(const std::vector<std::string>& mine, const Share& share);

// For a command that is not split over ranks (check, plan, oracle, live, demo,
// serve): rank 0 runs `job` and prints; the other ranks wait for it, asleep
// rather than spinning in a collective, and return its exit code. A failure
// inside `job` ends the whole job from rank 0 (abort_job).
int on_root(const std::function<int()>& job, const Share& share);

// Ends a job of several ranks after this rank has failed: the message is
// printed once (by rank 0, or by the failing rank when rank 0 did not fail
// as well), then MPI_Abort ends every rank with `code`. Never returns.
[[noreturn]] void abort_job(const std::string& line, int code);

}  // namespace relsim::parallel
