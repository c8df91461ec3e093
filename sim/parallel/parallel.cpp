#include "relsim/parallel/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#ifdef RELSIM_HAVE_MPI
#include <mpi.h>
#endif

#include "relsim/core/error.hpp"

namespace relsim::parallel {

std::pair<std::int64_t, std::int64_t> Share::range(std::int64_t count) const {
  const std::int64_t k = std::max(ranks, 1), base = count / k, extra = count % k;
  const std::int64_t first = rank * base + std::min<std::int64_t>(rank, extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

#ifdef RELSIM_HAVE_MPI
namespace {

bool running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

// Counts and displacements of MPI's v-collectives are ints.
int as_count(std::int64_t n) {
  RELSIM_ASSERT(n >= 0 && n <= 0x7fffffff);
  return static_cast<int>(n);
}

// Set by mpirun/mpiexec (Open MPI, MPICH's Hydra) or Slurm's PMI/PMIx. A
// plain run starts no MPI at all: a singleton MPI_Init would only add start-up
// time to a process that is rank 0 of 1 anyway.
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

}  // namespace

bool built_with_mpi() { return true; }

Session::Session(int& argc, char**& argv) {
  if (running() || !launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  // Errors end the job (the default handler); relsim checks no return codes.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

Session::~Session() {
  if (running()) MPI_Finalize();
}

Share world() {
  if (!running()) return {};
  Share s;
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.ranks);
  return s;
}

void sum_all(std::vector<std::int64_t>& values, const Share& share) {
  if (share.single()) return;
  MPI_Allreduce(MPI_IN_PLACE, values.data(), as_count(static_cast<std::int64_t>(values.size())), MPI_INT64_T, MPI_SUM,
                MPI_COMM_WORLD);
}

std::vector<double> gather_rows(const std::vector<double>& mine, std::int64_t rows, std::int64_t width,
                                const Share& share) {
  if (share.single()) return mine;
  std::vector<int> counts(static_cast<std::size_t>(share.ranks)), displs(counts.size());
  for (int r = 0; r < share.ranks; ++r) {
    const auto [first, last] = Share{r, share.ranks}.range(rows);
    counts[static_cast<std::size_t>(r)] = as_count((last - first) * width);
    displs[static_cast<std::size_t>(r)] = as_count(first * width);
  }
  RELSIM_ASSERT(static_cast<int>(mine.size()) == counts[static_cast<std::size_t>(share.rank)]);
  std::vector<double> all(share.root() ? static_cast<std::size_t>(rows * width) : 0);
  MPI_Gatherv(mine.data(), counts[static_cast<std::size_t>(share.rank)], MPI_DOUBLE, all.data(), counts.data(),
              displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return all;
}

void broadcast(std::vector<double>& values, const Share& share) {
  if (share.single()) return;
  std::int64_t size = static_cast<std::int64_t>(values.size());
  MPI_Bcast(&size, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  values.resize(static_cast<std::size_t>(size));
  MPI_Bcast(values.data(), as_count(size), MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

std::vector<std::string> gather_strings(const std::vector<std::string>& mine, const Share& share) {
  if (share.single()) return mine;
  // Each string as its length (8 bytes) then its bytes, all in one buffer.
  std::string packed;
  for (const std::string& s : mine) {
    const auto n = static_cast<std::uint64_t>(s.size());
    packed.append(reinterpret_cast<const char*>(&n), sizeof n);
    packed += s;
  }
  const int size = as_count(static_cast<std::int64_t>(packed.size()));
  std::vector<int> sizes(static_cast<std::size_t>(share.ranks)), displs(sizes.size());
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    displs[r] = as_count(total);
    total += sizes[r];
  }
  std::string all(share.root() ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(packed.data(), size, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (std::size_t at = 0; at < all.size();) {
    std::uint64_t n = 0;
    std::copy_n(all.data() + at, sizeof n, reinterpret_cast<char*>(&n));
    at += sizeof n;
    out.push_back(all.substr(at, n));
    at += n;
  }
  return out;
}

int on_root(const std::function<int()>& job, const Share& share) {
  if (share.single()) return job();
  int code = share.root() ? job() : 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return code;
    // A waiting rank costs no core: `relsim serve` may run for hours.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void abort_job(const std::string& line, int code) {
  const Share me = world();
  if (!me.root()) {
    // Input is checked alike on every rank, so a bad one fails rank 0 too,
    // which then prints the one line and ends the job. Rank 0 gets this long
    // to do so; past it the failure is this rank's own, and it reports it.
    std::this_thread::sleep_for(std::chrono::seconds(3));
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
}

#else  // built without MPI: one process, rank 0 of 1

bool built_with_mpi() { return false; }
Session::Session(int&, char**&) {}
Session::~Session() = default;
Share world() { return {}; }
void sum_all(std::vector<std::int64_t>&, const Share&) {}
std::vector<double> gather_rows(const std::vector<double>& mine, std::int64_t, std::int64_t, const Share&) {
  return mine;
}
void broadcast(std::vector<double>&, const Share&) {}
int on_root(const std::function<int()>& job, const Share&) { return job(); }
std::vector<std::string> gather_strings(const std::vector<std::string>& mine, const Share&) { return mine; }
void abort_job(const std::string& line, int code) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::_Exit(code);
}

#endif

}  // namespace relsim::parallel
