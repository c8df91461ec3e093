// relsim tune: every schedule of the space through the exact time engine,
// then the Pareto front of those meeting the target (include/relsim/sweep/tune.hpp).
#include "relsim/sweep/tune.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/montecarlo/simulate_time.hpp"

namespace relsim {
namespace {

// Schedules evaluated between two progress reports (a Ctrl-C in Python is
// seen at a report: 64 of the longest schedules take well under a second).
constexpr std::int64_t kProgressBlock = 64;

// Distribution bins of less mass are dropped when p99 is computed, the
// coarsest first: the support shrinks tenfold and more, and the quantile is
// still exact whenever the dropped mass cannot move it (certified_quantile).
constexpr double kTunePrunes[] = {1e-10, 1e-14};

// The smallest x with P(X <= x) >= level, when the mass `pruned` dropped
// from the distribution cannot change it: the bins kept up to x hold at
// least `level` and those before x plus all that was dropped less.
// Otherwise nothing (the caller computes the whole distribution).
std::optional<double> certified_quantile(const std::vector<SecondsBin>& bins, double pruned, double level) {
  constexpr double kSlack = 1e-12;  // rounding of the sums
  double below = 0.0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    double at = below;
    std::size_t j = i;
    for (; j < bins.size() && bins[j].seconds == bins[i].seconds; ++j) at += bins[j].probability;
    if (at >= level + kSlack) {
      if (below + pruned < level - kSlack) return bins[i].seconds;
      return std::nullopt;
    }
    below = at;
    i = j - 1;
  }
  return std::nullopt;
}

// The schedules of one policy come one after another (tune_schedules), and
// each thread walks a policy's call states once for all its backoffs.
WalkMemo& thread_memo() {
  thread_local WalkMemo memo;
  return memo;
}

// The fallback for one schedule: a K at or over the most requests its calls
// send is no fallback, written as K = that most (to_second_provider).
std::optional<Fallback> fallback_for(const TuneConfig& config, const Policy& policy) {
  std::optional<Fallback> fb = config.fallback;
  if (fb) fb->after = std::min(fb->after, policy.max_requests_per_call());
  return fb;
}

// Fixed waits: p99 of the exact wall-time distribution, pruned as far as
// the quantile allows, or in full; nothing when it is over the work cap.
std::optional<double> exact_p99(const TimeModel& time, const Policy& policy, const TuneConfig& config) {
  ExactOptions options;
  options.walk_memo = &thread_memo();
  options.kinds = config.kinds;
  options.fallback = fallback_for(config, policy);
  options.max_distribution_work = config.p99_work;
  options.done_seconds = false;
  for (const double prune : kTunePrunes) {
    options.prune_below = prune;
    const ExactResult r = exact_time(time, policy, options);
    if (!r.seconds_complete) return std::nullopt;  // pruning less would cost more
    if (const auto q = certified_quantile(r.seconds, r.pruned_mass, 0.99)) return q;
  }
  options.prune_below = ExactOptions{}.prune_below;
  const ExactResult r = exact_time(time, policy, options);
  if (!r.seconds_complete) return std::nullopt;
  return r.seconds_quantiles.p99;
}

// Jittered waits: p99 from a seeded simulation on one thread (the caller
// runs schedules in parallel), so the value is the same for any thread count.
void simulated_p99(const TuneConfig& config, const TimeModel& time, const Policy& policy, TunePoint& p) {
  p.p99_method = time.request_law.empty() ? P99Method::jittered : P99Method::drawn;
  if (config.p99_tasks <= 0) return;
  SimConfig sim;
  sim.tasks = config.p99_tasks;
  sim.seed = config.seed;
  sim.threads = 1;
  sim.kinds = config.kinds;
  sim.fallback = fallback_for(config, policy);
  TimeSimResult r;
  try {
    r = simulate_time(time, policy, sim);
  } catch (const InputError&) {
    return;  // a task that could outlast simulate_time's clock: no estimate, said by p99_method
  }
  if (!r.quantiles_available) return;
  const SimQuantile& q = r.quantiles[2];
  RELSIM_ASSERT(q.percent == 99);
  p.p99_seconds = q.seconds;
  p.p99_interval = q.interval;
  p.p99_method = P99Method::simulated;
}

double p99_or_infinity(const TunePoint& p) {
  return p.p99_seconds ? *p.p99_seconds : std::numeric_limits<double>::infinity();
}

// The mean cost as a dimension: 0 for every point without prices.
double cost_or_zero(const TunePoint& p) { return std::isnan(p.cost_mean) ? 0.0 : p.cost_mean; }

bool same_point(const TunePoint& a, const TunePoint& b, bool with_p99) {
  return a.success == b.success && a.mean_requests == b.mean_requests && a.mean_seconds == b.mean_seconds &&
         cost_or_zero(a) == cost_or_zero(b) && (!with_p99 || p99_or_infinity(a) == p99_or_infinity(b));
}

// points[i] = evaluate(i) for i in [0, count), `threads` OpenMP threads,
// each point on its own: the bits do not depend on the thread count.
template <class Evaluate>
void evaluate_all(std::vector<TunePoint>& points, std::int64_t count, int threads, Evaluate&& evaluate,
                  const std::function<void(std::int64_t, std::int64_t)>& progress) {
  for (std::int64_t first = 0; first < count; first += kProgressBlock) {
    const std::int64_t last = std::min(count, first + kProgressBlock);
    FirstError error;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads > 0 ? threads : omp_get_max_threads())
    for (std::int64_t i = first; i < last; ++i)
      error.run([&] { points[static_cast<std::size_t>(i)] = evaluate(i); });
    error.rethrow();
    if (progress) progress(last, count);
  }
}

// The indices (into points) of the target-meeting points that no earlier
// point in the order (success down, then each cost up, then index) weakly
// dominates. Any point that weakly dominates another comes before it in
// that order, so checking against the front kept so far suffices.
std::vector<std::size_t> pareto_front(const std::vector<TunePoint>& points, bool with_p99) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].meets_target) order.push_back(i);
  const auto key = [&](std::size_t i) {
    const TunePoint& p = points[i];
    return std::tuple{-p.success, p.mean_requests, p.mean_seconds, cost_or_zero(p), with_p99 ? p99_or_infinity(p) : 0.0,
                      i};
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<std::size_t> front;
  for (const std::size_t i : order) {
    const bool dominated = std::any_of(front.begin(), front.end(), [&](std::size_t f) {
      return weakly_dominates(points[f], points[i], with_p99);
    });
    if (!dominated) front.push_back(i);
  }
  return front;
}

double objective_value(const TunePoint& p, TuneObjective objective) {
  switch (objective) {
    case TuneObjective::requests: return p.mean_requests;
    case TuneObjective::mean_seconds: return p.mean_seconds;
    case TuneObjective::p99_seconds: return p99_or_infinity(p);
    case TuneObjective::cost: return cost_or_zero(p);
  }
  return p.mean_requests;
}

// Best by the objective first; ties by success, then the costs, then search order.
void sort_by_objective(std::vector<std::size_t>& front, const std::vector<TunePoint>& points,
                       TuneObjective objective) {
  const auto key = [&](std::size_t i) {
    const TunePoint& p = points[i];
    return std::tuple{objective_value(p, objective), -p.success, p.mean_requests, p.mean_seconds,
                      cost_or_zero(p), p99_or_infinity(p), i};
  };
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
}

// p99 seconds as an interval: the simulated one's, or the exact value alone.
std::optional<Interval> p99_range(const TunePoint& p) {
  if (p.p99_interval) return p.p99_interval;
  if (p.p99_seconds) return Interval{*p.p99_seconds, *p.p99_seconds};
  return std::nullopt;
}

// With the p99-seconds objective, the members whose p99 interval overlaps
// the best point estimate's are tied on p99: they go first, ranked among
// themselves by the cheapest (mean requests, then mean seconds, then the
// higher success; not success first, which would always pick the most
// retries for a gain of 1e-15). Returns how many are tied (1: none beside
// the best).
std::size_t rank_p99_ties(std::vector<std::size_t>& front, const std::vector<TunePoint>& points) {
  if (front.empty()) return 0;
  const std::optional<Interval> best = p99_range(points[front[0]]);
  if (!best) return 1;
  const auto tied = [&](std::size_t i) {
    const std::optional<Interval> r = p99_range(points[i]);
    return r && r->low <= best->high && best->low <= r->high;
  };
  const auto split = std::stable_partition(front.begin(), front.end(), tied);
  std::stable_sort(front.begin(), split, [&](std::size_t a, std::size_t b) {
    const TunePoint &x = points[a], &y = points[b];
    return std::tuple{x.mean_requests, x.mean_seconds, -x.success} <
           std::tuple{y.mean_requests, y.mean_seconds, -y.success};
  });
  return static_cast<std::size_t>(split - front.begin());
}

void check_config(const TuneConfig& config) {
  if (!(config.target > 0.0 && config.target < 1.0))
    throw InputError(fmt::format("target = {} is out of range: it must be in (0, 1), e.g. 0.99", config.target));
  Policy probe;
  probe.n = config.n;
  probe.kind = PolicyKind::layered;
  validate(probe);
  validate(config.time);
  config.kinds.checked_total();
  if (config.objective == TuneObjective::cost && !config.billing)
    throw InputError("objective = 'cost' needs prices: give --input-tokens, --output-tokens, --price-in and "
                     "--price-out");
  if (config.billing) validate(*config.billing);
  if (config.fallback) {
    if (!config.fallback->timed())
      throw InputError("fallback-after: tune works in seconds, so the second provider's chain is too: give "
                       "--t-good2 and --t-bad2");
    if (config.fallback->cooldown)
      throw InputError("cooldown: tune searches with the exact engine, which has no cooldown; relsim simulate "
                       "gives it");
    validate(*config.fallback, widest_tune_policy(config.n));
  }
  if (!(config.p99_work >= 0.0))
    throw InputError(fmt::format("p99-work = {} is out of range: it must be >= 0", config.p99_work));
  if (config.p99_tasks < 0 || config.p99_tasks > kMaxTimedTasks)
    throw InputError(fmt::format("p99-tasks = {} is out of range: it must be in [0, {}]", config.p99_tasks,
                                 kMaxTimedTasks));
}

void place_anchors(TuneResult& result, const TuneConfig& config, bool with_p99) {
  result.anchors = tune_anchor_schedules(config.n);
  for (TuneAnchor& a : result.anchors) {
    a.point = evaluate_schedule(config, a.point.schedule, true);
    for (std::size_t f = 0; f < result.front.size(); ++f)
      if (weakly_dominates(result.front[f], a.point, with_p99) && !same_point(result.front[f], a.point, with_p99)) {
        a.dominated_by = f;
        break;
      }
  }
}

}  // namespace

Policy widest_tune_policy(std::int64_t n) {
  Policy most;
  most.n = n;
  most.kind = PolicyKind::layered;
  most.s = 99;
  most.r = 99;
  static_assert(100 * 100 == kMaxRequestsPerCall);
  return most;
}

std::string_view to_string(TuneObjective objective) {
  switch (objective) {
    case TuneObjective::requests: return "requests";
    case TuneObjective::mean_seconds: return "mean-seconds";
    case TuneObjective::p99_seconds: return "p99-seconds";
    case TuneObjective::cost: return "cost";
  }
  return "requests";
}

TuneObjective parse_tune_objective(std::string_view word) {
  for (const auto o : {TuneObjective::requests, TuneObjective::mean_seconds, TuneObjective::p99_seconds,
                       TuneObjective::cost})
    if (word == to_string(o)) return o;
  throw InputError(
      fmt::format("objective = '{}' is not an objective: use requests, mean-seconds, p99-seconds or cost", word));
}

std::string_view to_string(P99Method method) {
  switch (method) {
    case P99Method::exact: return "exact";
    case P99Method::simulated: return "simulated";
    case P99Method::jittered: return "jittered";
    case P99Method::drawn: return "drawn-durations";
    case P99Method::too_large: return "too-large";
    case P99Method::not_computed: return "not-computed";
  }
  return "not-computed";
}

std::vector<TuneAnchor> tune_anchor_schedules(std::int64_t n) {
  const auto schedule = [n](PolicyKind kind, int s, int r, int B, Backoff backoff) {
    TunePoint p;
    p.schedule.policy.kind = kind;
    p.schedule.policy.n = n;
    p.schedule.policy.s = s;
    p.schedule.policy.r = r;
    p.schedule.policy.B = B;
    p.schedule.backoff = std::move(backoff);
    return p;
  };
  Backoff aws;
  aws.base = 0.1;
  aws.cap = 20.0;
  aws.jitter = 1.0;
  return {
      {"sdk-default", "the official SDKs alone: 2 HTTP-layer retries, backoff min(0.5 2^k, 8) s, 25% jitter",
       schedule(PolicyKind::layered, 2, 0, 0, Backoff::sdk()), std::nullopt},
      {"10-attempts", "10 requests per call whichever layer retries, SDK backoff",
       schedule(PolicyKind::budgeted, 9, 9, 10, Backoff::sdk()), std::nullopt},
      {"aws-standard", "AWS SDK standard mode: 3 attempts, min(0.1 2^k, 20) s, full jitter",
       schedule(PolicyKind::budgeted, 2, 2, 3, aws), std::nullopt},
  };
}

TunePoint evaluate_schedule(const TuneConfig& config, const TuneSchedule& schedule, bool p99) {
  TimeModel time = config.time;
  time.backoff = schedule.backoff;
  ExactOptions options;
  options.kinds = config.kinds;
  options.distribution = false;
  options.done_seconds = p99;  // for the front and the anchors, not the whole search
  options.walk_memo = &thread_memo();
  options.billing = config.billing;
  options.fallback = fallback_for(config, schedule.policy);
  const ExactResult r = exact_time(time, schedule.policy, options);
  TunePoint p;
  p.schedule = schedule;
  p.success = r.success;
  p.mean_requests = r.mean_requests;
  p.mean_seconds = r.mean_seconds;
  p.mean_seconds_done = r.mean_seconds_done;
  p.max_requests = r.max_requests;
  if (r.cost) p.cost_mean = r.cost->mean;
  p.meets_target = r.success >= config.target;
  if (!p99) return p;
  if (!time.fixed_times()) {
    simulated_p99(config, time, schedule.policy, p);
    return p;
  }
  p.p99_seconds = exact_p99(time, schedule.policy, config);
  if (p.p99_seconds) {
    p.p99_method = P99Method::exact;
    return p;
  }
  simulated_p99(config, time, schedule.policy, p);
  if (!p.p99_seconds) p.p99_method = P99Method::too_large;
  return p;
}

bool weakly_dominates(const TunePoint& a, const TunePoint& b, bool with_p99) {
  return a.success >= b.success && a.mean_requests <= b.mean_requests && a.mean_seconds <= b.mean_seconds &&
         cost_or_zero(a) <= cost_or_zero(b) && (!with_p99 || p99_or_infinity(a) <= p99_or_infinity(b));
}

TuneResult run_tune(const TuneSpace& space, const TuneConfig& config,
                    const std::function<void(std::int64_t, std::int64_t)>& progress) {
  check_config(config);
  const std::int64_t count = count_tune_schedules(space, config.kinds);
  if (count > kMaxTuneSchedules && !config.force)
    throw InputError(fmt::format("the search space has {} schedules, over {}: narrow it (--s-max, --r-max, "
                                 "--budgets, --bases, --caps, --jitters, --lists) or give --force",
                                 count, kMaxTuneSchedules));
  const std::vector<TuneSchedule> schedules = tune_schedules(space, config.n, config.kinds);
  RELSIM_ASSERT(static_cast<std::int64_t>(schedules.size()) == count);
  const bool with_p99 = config.objective == TuneObjective::p99_seconds;
  std::vector<TunePoint> points(schedules.size());
  evaluate_all(points, count, config.threads,
               [&](std::int64_t i) { return evaluate_schedule(config, schedules[static_cast<std::size_t>(i)], false); },
               progress);

  TuneResult result;
  result.schedules = count;
  result.meeting = std::count_if(points.begin(), points.end(), [](const TunePoint& p) { return p.meets_target; });
  const TuneLayers layers = tune_layers(config.kinds);
  result.s_matters = layers.http;
  result.r_matters = layers.stream;
  result.dimensions = {"success", "mean_requests", "mean_seconds"};
  if (config.billing) result.dimensions.push_back("cost_mean");
  if (with_p99) result.dimensions.push_back("p99_seconds");

  // p99 where it is needed: for every point meeting the target when it is a
  // dimension of the front, else for the front's members only.
  std::vector<std::size_t> need;
  if (with_p99) {
    for (std::size_t i = 0; i < points.size(); ++i)
      if (points[i].meets_target) need.push_back(i);
  } else {
    need = pareto_front(points, false);
  }
  std::vector<TunePoint> refined(need.size());
  const auto with_p99_of = [&](std::int64_t j) {
    return evaluate_schedule(config, points[need[static_cast<std::size_t>(j)]].schedule, true);
  };
  // Their reports go on from the first pass's count, over a total that now
  // includes them.
  const auto refine_progress = [&](std::int64_t done, std::int64_t total) {
    if (progress) progress(count + done, count + total);
  };
  evaluate_all(refined, static_cast<std::int64_t>(need.size()), config.threads, with_p99_of, refine_progress);
  for (std::size_t j = 0; j < need.size(); ++j) points[need[j]] = refined[j];

  std::vector<std::size_t> front = pareto_front(points, with_p99);
  sort_by_objective(front, points, config.objective);
  if (with_p99) {
    result.p99_ties = rank_p99_ties(front, points);
    if (result.p99_ties > 1)
      result.notes.push_back(fmt::format(
          "front #1 to #{} are tied on p99 seconds: their 99% intervals overlap the best estimate's, so they are "
          "ranked among themselves by mean requests, then mean seconds, then success",
          result.p99_ties));
  }
  for (const std::size_t i : front) result.front.push_back(points[i]);
  place_anchors(result, config, with_p99);
  return result;
}

}  // namespace relsim
