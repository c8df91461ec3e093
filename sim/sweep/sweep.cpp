#include "relsim/sweep/sweep.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/montecarlo/simulate.hpp"

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

std::uint64_t point_seed(std::uint64_t run_seed, const Model& model, long long r, long long n) {
  std::uint64_t h = mix(run_seed);
  for (std::uint64_t part : {bits_of(model.p), bits_of(model.q), static_cast<std::uint64_t>(r),
                             static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(model.b),
                             static_cast<std::uint64_t>(model.g), static_cast<std::uint64_t>(model.chain)})
    h = mix(h ^ part);
  return h;
}

namespace {

void check_sweep_input(const SweepGrid& grid, const SweepConfig& config) {
  if (grid.p.empty() || grid.r.empty() || grid.n.empty() || grid.b.empty() || grid.g.empty() || grid.chain.empty())
    throw InputError("sweep: every axis needs at least one value");
  if (config.tasks < 0 || config.tasks > kMaxTasks)
    throw InputError(fmt::format("tasks = {} is out of range: tasks must be in [0, {}] (0: exact only)", config.tasks,
                                 kMaxTasks));
  if (!(config.confidence > 0.0 && config.confidence < 1.0))
    throw InputError(fmt::format("confidence = {} is out of range: it must be in (0, 1)", config.confidence));
}

struct Point {
  Model model;
  Policy policy;
  long long r, n;
};

struct GridPoints {
  std::vector<Point> valid;  // in grid order
  std::int64_t total = 0;    // all points of the grid, valid or not
};

// Every point of the grid, in order p, q, r, n, b, g, chain; the invalid
// ones are counted in out.skipped (or, with config.strict, rejected).
GridPoints grid_points(const SweepGrid& grid, const SweepConfig& config, SweepOutcome& out) {
  std::vector<std::optional<double>> q_axis(grid.q.begin(), grid.q.end());
  if (q_axis.empty()) q_axis.push_back(std::nullopt);  // q = p at each point
  GridPoints points;
  points.total = static_cast<std::int64_t>(grid.p.size() * q_axis.size() * grid.r.size() * grid.n.size() *
                                           grid.b.size() * grid.g.size() * grid.chain.size());
  for (double p : grid.p)
    for (const std::optional<double>& q : q_axis)
      for (long long r : grid.r)
        for (long long n : grid.n)
          for (long long b : grid.b)
            for (long long g : grid.g)
              for (ChainScope chain : grid.chain) {
                Model model{p, q.value_or(p), b, g, chain};
                Policy policy{n, static_cast<int>(std::clamp<long long>(r, -1, kMaxRetries + 1))};
                try {
                  validate(model);
                  if (r < 0 || r > kMaxRetries)
                    throw InputError(fmt::format("r = {} is out of range: r must be in [0, {}]", r, kMaxRetries));
                  validate(policy);
                } catch (const InputError& e) {
                  if (config.strict) throw InputError(fmt::format("sweep --strict: {}", e.what()));
                  if (out.skipped++ == 0) out.first_skip = e.what();
                  continue;
                }
                points.valid.push_back({model, policy, r, n});
              }
  return points;
}

// One CSV row (no newline): the exact columns, then the simulated ones, or
// empty ones when config.tasks is 0.
std::string point_row(const Point& pt, const SweepConfig& config) {
  const Model& model = pt.model;
  ExactOptions eopt;
  eopt.distribution = false;
  const ExactResult ex = exact_matrix(model, pt.policy, eopt);
  std::string row = fmt::format("{},{},{},{},{},{},{},{:.17g},{:.17g},{:.17g},{:.17g}", model.p, model.q, pt.r, pt.n,
                                model.b, model.g, to_string(model.chain), model.p0(),
                                independent_success(model.p, pt.policy), ex.success, ex.mean_requests);
  if (config.tasks == 0) return row + ",,,,,,,";
  SimConfig sc;
  sc.tasks = config.tasks;
  sc.seed = point_seed(config.seed, model, pt.r, pt.n);
  sc.lanes = config.lanes;
  sc.threads = config.threads;
  const SimResult sim = simulate(model, pt.policy, sc);
  // Tasks of one lane are correlated in the continuous scope;
  // design_effect() is 1 for the fresh scope.
  const Interval ci =
      effective_interval(config.interval, sim.successes, sim.tasks, config.confidence, sim.design_effect());
  row += fmt::format(",{},{},{:.17g},{:.17g},{:.17g},{},{}", sim.tasks, sim.successes,
                     static_cast<double>(sim.successes) / static_cast<double>(sim.tasks), ci.low, ci.high,
                     ci.covers(ex.success) ? "true" : "false", sc.seed);
  return row;
}

// Rank 0's CSV from every rank's rows (gather_strings: rank 0's rows, then
// rank 1's, ...), where rank k's j-th row is point k + j ranks.
std::string csv_in_grid_order(const std::vector<std::string>& rows, std::size_t points, std::size_t ranks) {
  std::vector<std::size_t> next(ranks, 0), offset(ranks, 0);
  for (std::size_t k = 1; k < ranks; ++k)
    offset[k] = offset[k - 1] + (points > k - 1 ? (points - (k - 1) + ranks - 1) / ranks : 0);
  std::string csv = std::string(kSweepHeader) + "\n";
  for (std::size_t i = 0; i < points; ++i) {
    const std::size_t k = i % ranks;
    csv += rows.at(offset[k] + next[k]++) + "\n";
  }
  return csv;
}

}  // namespace

SweepOutcome run_sweep(const SweepGrid& grid, const SweepConfig& config,
                       const std::function<void(std::int64_t, std::int64_t)>& progress) {
  check_sweep_input(grid, config);
  SweepOutcome out;
  const GridPoints grid_pts = grid_points(grid, config, out);
  const std::vector<Point>& points = grid_pts.valid;
  const std::int64_t total = grid_pts.total;

  const parallel::Share& share = config.share;
  const auto ranks = static_cast<std::size_t>(std::max(share.ranks, 1));
  std::vector<std::string> mine;  // rows of points rank, rank + ranks, ...
  std::int64_t done = out.skipped;
  for (std::size_t i = static_cast<std::size_t>(share.rank); i < points.size(); i += ranks) {
    mine.push_back(point_row(points[i], config));
    done = std::min<std::int64_t>(total, done + static_cast<std::int64_t>(ranks));
    if (progress) progress(i + ranks >= points.size() ? total : done, total);
  }
  if (points.empty() && progress) progress(total, total);

  const std::vector<std::string> rows = parallel::gather_strings(mine, share);
  if (!share.root()) return out;
  out.csv = csv_in_grid_order(rows, points.size(), ranks);
  out.rows = static_cast<std::int64_t>(points.size());
  return out;
}

}  // namespace relsim
