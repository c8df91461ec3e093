#pragma once
// Parameter sweeps: the exact engine (and optionally a simulation) at every
// point of a grid over p, q, r, n, b, g and the chain scope, as CSV.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/model.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "relsim/parallel/parallel.hpp"

namespace relsim {

struct SweepGrid {
  std::vector<double> p;
  std::vector<double> q;  // empty: q = p at every point (independent faults)
  std::vector<long long> r, n, b{0}, g{0};
  std::vector<ChainScope> chain{ChainScope::fresh};
};

struct SweepConfig {
  std::int64_t tasks = 0;  // 0: exact columns only
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = 16;
  int threads = 0;
  IntervalKind interval = IntervalKind::wilson;
  double confidence = 0.95;
  bool strict = false;  // reject the grid if any point is invalid, instead of skipping it
  // MPI ranks sharing the sweep (parallel.hpp): every rank checks the whole
  // grid, the valid points go round-robin to the ranks (point i to rank
  // i mod ranks), and rank 0 gathers the rows into `csv` in grid order
  // (other ranks' csv is empty). Each point's simulation runs on its rank.
  parallel::Share share;
};

// The CSV column order, fixed.
inline constexpr const char* kSweepHeader =
    "p,q,r,n,b,g,chain,p0,independent,exact,mean_requests,tasks,successes,rate,ci_low,ci_high,covered,seed";

struct SweepOutcome {
  std::string csv;             // header and one row per valid point, in grid order
  std::int64_t rows = 0;
  std::int64_t skipped = 0;    // invalid points left out (never with strict)
  std::string first_skip;      // why the first one was invalid
};

// A grid point's simulation seed: a function of the run seed and the
// point's coordinates (p, q, r, n, b, g, chain), never of its position in
// the grid, so adding values to an axis changes no existing row.
std::uint64_t point_seed(std::uint64_t run_seed, const Model& model, long long r, long long n);

// Points in order p, q, r, n, b, g, chain (the last varies fastest).
// `progress(done, total)` is called after each point when given (with
// several ranks, after each of this rank's points, done estimated).
SweepOutcome run_sweep(const SweepGrid& grid, const SweepConfig& config,
                       const std::function<void(std::int64_t, std::int64_t)>& progress = {});

}  // namespace relsim
