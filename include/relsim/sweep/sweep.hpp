#pragma once
// Parameter sweeps: the exact engine (and optionally a simulation) at every
// point of a grid over p, q, r, n, b, g and the chain scope, as CSV; and
// over the policy, s, B and, in time mode (docs/time.md), the mean sojourns
// and the time options.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "relsim/parallel/parallel.hpp"

namespace relsim {

struct SweepGrid {
  std::vector<double> p;
  std::vector<double> q;  // empty: q = p at every point (independent faults)
  std::vector<long long> r, n, b{0}, g{0};
  std::vector<ChainScope> chain{ChainScope::fresh};

  // The policy axes. s applies to all but simple, B to budgeted only: a
  // policy gets one point per value of the axes that apply to it.
  std::vector<PolicyKind> policy{PolicyKind::simple};
  std::vector<long long> s{2}, B{0};
  FaultWeights kinds = FaultWeights::in_stream_uniform();
  // Adds the columns of kSweepPolicyColumns after today's (always in time mode).
  bool policy_columns = false;

  // Time mode, when t_good is not empty: t_good and t_bad (seconds) take the
  // place of p and q, which stay empty, as do b and g.
  std::vector<double> t_good, t_bad;
  std::vector<double> request_seconds{0.0}, think_seconds{0.0}, retry_after{0.0};
  std::vector<Backoff> backoff{Backoff::sdk()};
  std::array<double, kFaultKinds> fault_seconds = TimeModel::nan_fault_seconds();
  bool timed() const { return !t_good.empty(); }
};

// Most points one sweep may have.
inline constexpr double kMaxSweepPoints = 1e8;

struct SweepConfig {
  std::int64_t tasks = 0;  // 0: exact columns only
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = 16;
  int threads = 0;
  IntervalKind interval = IntervalKind::wilson;
  double confidence = 0.95;
  bool strict = false;  // reject the grid if any point is invalid, instead of skipping it
  // Fill the exact quantile columns (p50_requests .. p999_requests): the
  // requests distribution at every point, several times the cost of the
  // other exact columns.
  bool quantiles = false;
  // MPI ranks sharing the sweep (parallel.hpp): every rank checks the whole
  // grid, the valid points go round-robin to the ranks (point i to rank
  // i mod ranks), and rank 0 gathers the rows into `csv` in grid order
  // (other ranks' csv is empty). Each point's simulation runs on its rank.
  parallel::Share share;
};

// The CSV column order, fixed: kSweepHeader, then with policy columns
// kSweepPolicyColumns, then in time mode kSweepTimeColumns, then always
// kSweepRequestColumns: the exact share of sent requests that fail and,
// with SweepConfig::quantiles, quantiles of requests per task (empty where
// the distribution is too large to compute), then the same from the simulation (empty without
// --tasks, or where a task can send more requests than the simulation keeps
// counts for). In time mode p
// is the chain's stationary P(bad) and q, b, g and p0 are empty; s is empty
// for simple and B for all but budgeted. The quantiles are empty where they
// have no exact value (jittered waits), the sim_ columns without --tasks;
// sim_p50..p99 are empty when the simulation kept no per-task times.
inline constexpr const char* kSweepHeader =
    "p,q,r,n,b,g,chain,p0,independent,exact,mean_requests,tasks,successes,rate,ci_low,ci_high,covered,seed";
inline constexpr const char* kSweepPolicyColumns = "policy,s,B";
inline constexpr const char* kSweepTimeColumns =
    "t_good,t_bad,request_seconds,think_seconds,backoff,retry_after,mean_seconds,p50_seconds,p90_seconds,"
    "p99_seconds,sim_mean_seconds,sim_mean_low,sim_mean_high,sim_p50_seconds,sim_p90_seconds,sim_p99_seconds";
inline constexpr const char* kSweepRequestColumns =
    "fault_share,p50_requests,p90_requests,p99_requests,p999_requests,"
    "sim_fault_share,sim_p50_requests,sim_p90_requests,sim_p99_requests,sim_p999_requests";
// The header line (no newline) for a grid.
std::string sweep_header(const SweepGrid& grid);

struct SweepOutcome {
  std::string csv;             // header and one row per valid point, in grid order
  std::int64_t rows = 0;
  std::int64_t skipped = 0;    // invalid points left out (never with strict)
  std::string first_skip;      // why the first one was invalid
};

// A grid point's simulation seed: a function of the run seed and the
// point's coordinates (p, q, r, n, b, g, chain), never of its position in
// the grid, so adding values to an axis changes no existing row. A point of
// another policy than simple, or in time mode, mixes its further coordinates
// in (sweep_points.cpp).
std::uint64_t point_seed(std::uint64_t run_seed, const Model& model, long long r, long long n);

// Points in order p, q, r, n, b, g, chain, policy, s, B (time mode: t_good,
// t_bad, r, n, chain, policy, s, B, request_seconds, think_seconds, backoff,
// retry_after), the last varying fastest.
// `progress(done, total)` is called after each point when given (with
// several ranks, after each of this rank's points, done estimated).
SweepOutcome run_sweep(const SweepGrid& grid, const SweepConfig& config,
                       const std::function<void(std::int64_t, std::int64_t)>& progress = {});

}  // namespace relsim
