#include "relsim/sweep/sweep.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "relsim/core/csv.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/core/count_quantiles.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/exact/report.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/simulate_time.hpp"
#include "sweep/sweep_points.hpp"

namespace relsim {
namespace {

// A bijective mix of 64 bits: one SplitMix64 step from state x.
std::uint64_t mix(std::uint64_t x) { return rng::splitmix64(x); }

std::uint64_t bits_of(double x) {
  std::uint64_t u = 0;
  static_assert(sizeof u == sizeof x);
  std::memcpy(&u, &x, sizeof u);
  return u;
}

}  // namespace

// The discrete quantile columns need the distribution only where it has
// mass: bins below this are dropped from its ends, far below the levels
// 0.5 .. 0.999 (relsim exact keeps them, down to 1e-300).
constexpr double kSweepPruneBelow = 1e-18;

std::string sweep_header(const SweepGrid& grid) {
  std::string header = kSweepHeader;
  if (grid.policy_columns || grid.timed()) header += std::string(",") + kSweepPolicyColumns;
  if (grid.timed()) header += std::string(",") + kSweepTimeColumns;
  header += std::string(",") + kSweepRequestColumns;
  return header;
}

std::uint64_t point_seed(std::uint64_t run_seed, const Model& model, long long r, long long n) {
  std::uint64_t h = mix(run_seed);
  for (std::uint64_t part : {bits_of(model.p), bits_of(model.q), static_cast<std::uint64_t>(r),
                             static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(model.b),
                             static_cast<std::uint64_t>(model.g), static_cast<std::uint64_t>(model.chain)})
    h = mix(h ^ part);
  return h;
}

namespace {

using sweep_detail::SweepPoint;

void check_sweep_input(const SweepConfig& config) {
  if (config.tasks < 0 || config.tasks > kMaxTasks)
    throw InputError(fmt::format("tasks = {} is out of range: tasks must be in [0, {}] (0: exact only)", config.tasks,
                                 kMaxTasks));
  if (!(config.confidence > 0.0 && config.confidence < 1.0))
    throw InputError(fmt::format("confidence = {} is out of range: it must be in (0, 1)", config.confidence));
}

SimConfig sim_config(const SweepPoint& pt, const SweepGrid& grid, const SweepConfig& config) {
  SimConfig sc;
  sc.tasks = config.tasks;
  sc.seed = pt.seed;
  sc.lanes = config.lanes;
  sc.threads = config.threads;
  sc.kinds = grid.kinds;
  return sc;
}

// The simulated columns of today's header: tasks .. seed.
// The independent column: the closed form, empty for a policy it does not cover.
std::string independent_cell(double p, const Policy& policy, const FaultWeights& kinds) {
  const std::optional<double> value = independent_success(p, policy, kinds);
  return value ? fmt::format("{:.17g}", *value) : std::string();
}

std::string sim_columns(const SimResult& sim, double exact, const SweepConfig& config, std::uint64_t seed) {
  // Tasks of one lane are correlated in the continuous scope;
  // design_effect() is 1 for the fresh scope.
  const Interval ci =
      effective_interval(config.interval, sim.successes, sim.tasks, config.confidence, sim.design_effect());
  return fmt::format(",{},{},{:.17g},{:.17g},{:.17g},{},{}", sim.tasks, sim.successes,
                     static_cast<double>(sim.successes) / static_cast<double>(sim.tasks), ci.low, ci.high,
                     ci.covers(exact) ? "true" : "false", seed);
}

std::string policy_columns(const Policy& policy) {
  const bool s = policy.kind != PolicyKind::simple, budget = policy.kind == PolicyKind::budgeted;
  return fmt::format(",{},{},{}", to_string(policy.kind), s ? std::to_string(policy.s) : "",
                     budget ? std::to_string(policy.B) : "");
}

// ",a,b,c,d" for the quantiles, or as many empty fields.
std::string quantile_fields(const std::optional<CountQuantiles>& q) {
  if (!q) return std::string(kCountLevels.size(), ',');
  std::string s;
  for (const std::int64_t x : q->at) s += fmt::format(",{}", x);
  return s;
}

// The columns of kSweepRequestColumns, from the exact result and the
// simulation (nullptr without --tasks).
std::string request_columns(const ExactResult& ex, const SimResult* sim) {
  std::string row = fmt::format(",{:.17g}", ex.fault_share());
  row += quantile_fields(requests_quantiles(ex).all);
  if (!sim) return row + std::string(1 + kCountLevels.size(), ',');
  row += fmt::format(",{:.17g}", sim->fault_share());
  return row + quantile_fields(outcome_quantiles(sim->done_by_requests, sim->env_by_requests).all);
}

// One CSV row (no newline) of a discrete point: the exact columns, then the
// simulated ones, or empty ones when config.tasks is 0.
std::string discrete_row(const SweepPoint& pt, const SweepGrid& grid, const SweepConfig& config) {
  const Model& model = pt.model;
  ExactOptions eopt;
  eopt.kinds = grid.kinds;
  eopt.distribution = config.quantiles;
  eopt.prune_below = kSweepPruneBelow;
  const ExactResult ex = exact_matrix(model, pt.policy, eopt);
  std::string row = fmt::format("{},{},{},{},{},{},{},{:.17g},{},{:.17g},{:.17g}", model.p, model.q, pt.r, pt.n,
                                model.b, model.g, to_string(model.chain), model.p0(),
                                independent_cell(model.p, pt.policy, grid.kinds), ex.success, ex.mean_requests);
  std::optional<SimResult> sim;
  if (config.tasks == 0) {
    row += ",,,,,,,";
  } else {
    sim = simulate(model, pt.policy, sim_config(pt, grid, config));
    row += sim_columns(*sim, ex.success, config, pt.seed);
  }
  if (grid.policy_columns) row += policy_columns(pt.policy);
  return row + request_columns(ex, sim ? &*sim : nullptr);
}

// Time mode: p is the stationary P(bad); q, b, g and p0 have no meaning.
std::string time_row(const SweepPoint& pt, const SweepGrid& grid, const SweepConfig& config) {
  const TimeModel& time = *pt.time;
  ExactOptions eopt;
  eopt.kinds = grid.kinds;
  eopt.distribution = config.quantiles || time.fixed_times();  // for the exact quantiles
  const ExactResult ex = exact_time(time, pt.policy, eopt);
  const double p = time.chain.bad_share();
  std::string row = fmt::format("{},,{},{},,,{},,{},{:.17g},{:.17g}", p, pt.r, pt.n, to_string(time.scope),
                                independent_cell(p, pt.policy, grid.kinds), ex.success, ex.mean_requests);
  std::optional<TimeSimResult> sim;
  if (config.tasks == 0) {
    row += ",,,,,,,";
  } else {
    TimeSimOptions topt;
    topt.confidence = config.confidence;
    sim = simulate_time(time, pt.policy, sim_config(pt, grid, config), topt);
    row += sim_columns(sim->counts, ex.success, config, pt.seed);
  }
  row += policy_columns(pt.policy);
  row += fmt::format(",{},{},{},{},{},{},{:.17g}", pt.t_good, pt.t_bad, time.request_seconds, time.think_seconds,
                     csv_field(to_string(time.backoff)), time.retry_after, ex.mean_seconds);
  const Quantiles& q = ex.seconds_quantiles;
  row += ex.seconds_complete ? fmt::format(",{},{},{}", q.p50, q.p90, q.p99) : ",,,";
  if (!sim) return row + ",,,,,," + request_columns(ex, nullptr);
  row += fmt::format(",{:.17g},{:.17g},{:.17g}", sim->mean_seconds, sim->mean_interval.low, sim->mean_interval.high);
  if (!sim->quantiles_available) row += ",,,";
  else
    for (const SimQuantile& sq : sim->quantiles) row += fmt::format(",{}", sq.seconds);
  return row + request_columns(ex, &sim->counts);
}

std::string point_row(const SweepPoint& pt, const SweepGrid& grid, const SweepConfig& config) {
  return pt.time ? time_row(pt, grid, config) : discrete_row(pt, grid, config);
}

// Rank 0's CSV from every rank's rows (gather_strings: rank 0's rows, then
// rank 1's, ...), where rank k's j-th row is point k + j ranks.
std::string csv_in_grid_order(const std::vector<std::string>& rows, std::size_t points, std::size_t ranks,
                              const std::string& header) {
  std::vector<std::size_t> next(ranks, 0), offset(ranks, 0);
  for (std::size_t k = 1; k < ranks; ++k)
    offset[k] = offset[k - 1] + (points > k - 1 ? (points - (k - 1) + ranks - 1) / ranks : 0);
  std::string csv = header + "\n";
  for (std::size_t i = 0; i < points; ++i) {
    const std::size_t k = i % ranks;
    csv += rows.at(offset[k] + next[k]++) + "\n";
  }
  return csv;
}

}  // namespace

SweepOutcome run_sweep(const SweepGrid& grid, const SweepConfig& config,
                       const std::function<void(std::int64_t, std::int64_t)>& progress) {
  check_sweep_input(config);
  SweepOutcome out;
  const sweep_detail::SweepPoints grid_pts = sweep_detail::sweep_points(grid, config);
  out.skipped = grid_pts.skipped;
  out.first_skip = grid_pts.first_skip;
  const std::vector<SweepPoint>& points = grid_pts.valid;
  const std::int64_t total = grid_pts.total;

  const parallel::Share& share = config.share;
  const auto ranks = static_cast<std::size_t>(std::max(share.ranks, 1));
  std::vector<std::string> mine;  // rows of points rank, rank + ranks, ...
  std::int64_t done = out.skipped;
  for (std::size_t i = static_cast<std::size_t>(share.rank); i < points.size(); i += ranks) {
    mine.push_back(point_row(points[i], grid, config));
    done = std::min<std::int64_t>(total, done + static_cast<std::int64_t>(ranks));
    if (progress) progress(i + ranks >= points.size() ? total : done, total);
  }
  if (points.empty() && progress) progress(total, total);

  const std::vector<std::string> rows = parallel::gather_strings(mine, share);
  if (!share.root()) return out;
  out.csv = csv_in_grid_order(rows, points.size(), ranks, sweep_header(grid));
  out.rows = static_cast<std::int64_t>(points.size());
  return out;
}

}  // namespace relsim
