#pragma once
// relsim tune (docs/time.md, relsim tune): which retry schedules reach a
// target success when faults come in outages of seconds to minutes, and
// what they cost in requests and in wall time. Every schedule of a search
// space (policy layered or budgeted, s, r, B and a backoff) goes through the
// exact time engine (exact_time); the Pareto front of those that meet the
// target is reported, with the SDK default, a 10-attempt schedule and AWS's
// standard mode placed against it.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/billing.hpp"
#include "relsim/core/fallback.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim {

// Larger spaces are refused unless TuneConfig::force is set.
inline constexpr std::int64_t kMaxTuneSchedules = 1'000'000;

enum class TuneObjective { requests, mean_seconds, p99_seconds, cost };
std::string_view to_string(TuneObjective objective);
// "requests", "mean-seconds", "p99-seconds" or "cost"; throws InputError otherwise.
TuneObjective parse_tune_objective(std::string_view word);

// The schedules to search. The exp grid is bases x caps x jitters; `fixed`
// adds schedules of any other form (lists, none). Equivalent schedules are
// evaluated once (tune_schedules says which are equivalent).
struct TuneSpace {
  std::vector<PolicyKind> policies{PolicyKind::layered, PolicyKind::budgeted};
  int s_max = 20;  // s in 0 .. s_max
  int r_max = 5;   // r in 0 .. r_max
  std::vector<int> budgets{2, 3, 4, 6, 8, 12};  // B for budgeted
  std::vector<double> bases{0.1, 0.25, 0.5, 1.0, 2.0, 4.0};
  std::vector<double> caps{4.0, 8.0, 16.0, 20.0, 32.0, 60.0};
  std::vector<double> jitters{0.0, 0.25, 1.0};
  std::vector<Backoff> fixed = default_fixed_backoffs();

  // none, list:1,2,4,8,16,32, list:0.5,1,2,4,8,16, list:1,5,15,30,60, list:5, list:10, list:30.
  static std::vector<Backoff> default_fixed_backoffs();
  // The backoffs in search order: the fixed ones, then the exp grid (base,
  // then cap, then jitter varying fastest).
  std::vector<Backoff> backoffs() const;
};

// Throws InputError naming the bad field and its range: an empty policy
// list or a policy other than layered and budgeted, s_max or r_max out of
// range or (s_max + 1)(r_max + 1) over kMaxRequestsPerCall, a budget below 1,
// an invalid backoff, or no backoff at all.
void validate(const TuneSpace& space);

// One retry schedule: the policy (its n is the task's) and the backoff.
struct TuneSchedule {
  Policy policy;
  Backoff backoff;
};

// Which retry layers the fault kinds reach: the HTTP layer retries
// pre-response faults, the stream layer in-stream ones (policy.hpp, react).
struct TuneLayers {
  bool http = false, stream = false;
};
TuneLayers tune_layers(const FaultWeights& kinds);

// The distinct schedules of the space, in a fixed order (policy, s, r, B,
// backoff). Two schedules that no fault sequence can tell apart count once,
// the first in that order standing for both:
// - a layer no kind in `kinds` reaches is set to 0 retries (s when no kind
//   is pre-response, r when none is in-stream);
// - budgeted (s, r, B) is budgeted (min(s, B-1), min(r, B-1), B), and is
//   layered (s, r) when B >= (s+1)(r+1): only B < (s+1)(r+1) is kept;
// - backoffs whose waits agree for every retry index the schedule can reach
//   (max(s, r), or B - 1 if fewer) are one.
// The count alone (count_tune_schedules) costs no evaluation.
std::vector<TuneSchedule> tune_schedules(const TuneSpace& space, std::int64_t n, const FaultWeights& kinds);
std::int64_t count_tune_schedules(const TuneSpace& space, const FaultWeights& kinds);

struct TuneConfig {
  TimeModel time;  // the chain, durations and scope; its backoff is each schedule's
  std::int64_t n = 1;
  FaultWeights kinds = FaultWeights::in_stream_uniform();
  double target = 0.99;  // in (0, 1)
  TuneObjective objective = TuneObjective::requests;
  int threads = 0;     // OpenMP threads (0: OpenMP's default)
  bool force = false;  // accept more than kMaxTuneSchedules schedules
  // p99 of fixed waits: the exact wall-time distribution while it costs at
  // most this much work (ExactOptions::max_distribution_work; 1e7 is about
  // a third of a second), else simulated as for jittered waits.
  double p99_work = 1e7;
  // p99 of jittered waits: seeded simulation (simulate_time) of this many
  // tasks, the same seed for every schedule; 0: not estimated.
  std::int64_t p99_tasks = 20'000;
  std::uint64_t seed = rng::kReferenceSeed;
  // With prices: every schedule's mean cost per task (TunePoint::cost_mean),
  // a dimension of the front; needed by the cost objective.
  std::optional<Billing> billing;
  // A second provider (docs/model.md, Fallback), its chain in seconds; a
  // schedule whose calls send at most K requests never falls back.
  std::optional<Fallback> fallback;
};

// A policy whose calls may send kMaxRequestsPerCall requests, the most of
// any schedule: what TuneConfig::fallback's K is checked against.
Policy widest_tune_policy(std::int64_t n);

// How a schedule's p99 wall time was found: exact (fixed waits), simulated
// (jittered waits: the exact engine averages the jitter into the chain's
// steps and has no wall-time distribution then; or fixed waits whose
// distribution is over TuneConfig::p99_work), or why it is missing:
// jittered, drawn durations (--request-seconds-from) or too large, with
// TuneConfig::p99_tasks = 0; or p99 not asked for.
enum class P99Method { exact, simulated, jittered, too_large, not_computed, drawn };
std::string_view to_string(P99Method method);

struct TunePoint {
  TuneSchedule schedule;
  double success = 0.0;
  double mean_requests = 0.0;
  double mean_seconds = 0.0;       // all tasks
  // The tasks that end done (failed ones stop early and pull mean_seconds
  // down); computed with p99_seconds, NaN elsewhere.
  double mean_seconds_done = std::numeric_limits<double>::quiet_NaN();
  std::int64_t max_requests = 0;
  // With TuneConfig::billing: E[cost per task] in USD (docs/model.md, Cost); NaN without.
  double cost_mean = std::numeric_limits<double>::quiet_NaN();
  // The smallest x with P(wall time <= x) >= 0.99, computed for the front,
  // the anchors and, with the p99-seconds objective, every schedule meeting
  // the target; p99_method says how. Simulated values come with their
  // distribution-free interval (simulate_time.hpp) at confidence 0.99.
  std::optional<double> p99_seconds;
  P99Method p99_method = P99Method::not_computed;
  std::optional<Interval> p99_interval;  // simulated only
  bool meets_target = false;
};

// A well-known schedule placed against the front.
struct TuneAnchor {
  std::string name;         // "sdk-default", "10-attempts", "aws-standard"
  std::string description;  // what it stands for, one line
  TunePoint point;
  // Index into TuneResult::front of the first member that dominates it, if
  // any. An anchor that meets the target and is dominated by none would join
  // the front.
  std::optional<std::size_t> dominated_by;
};

struct TuneResult {
  std::int64_t schedules = 0;  // distinct schedules evaluated
  std::int64_t meeting = 0;    // of which meet the target
  bool s_matters = true;       // false: no pre-response kind, s fixed at 0
  bool r_matters = true;       // false: no in-stream kind, r fixed at 0
  // What the front is Pareto-optimal in: success (higher is better), mean
  // requests and mean seconds (lower); and p99 seconds with the p99-seconds
  // objective (an unknown p99 counts as infinite there); mean cost with prices.
  std::vector<std::string> dimensions;
  // The schedules meeting the target that no other schedule meeting it
  // dominates (equal points: the first in search order stands), best by
  // the objective first; ties by success, then the other costs, then
  // search order. front[0] is the recommendation.
  std::vector<TunePoint> front;
  std::vector<TuneAnchor> anchors;
  // With the p99-seconds objective: how many members lead the front tied on
  // p99 (intervals overlapping the best estimate's; ranked among themselves
  // by mean requests, then mean seconds, then success). 0 otherwise.
  std::size_t p99_ties = 0;
  // What a person should know: ties, a search bound widened or reached.
  std::vector<std::string> notes;
};

// The SDK default (layered, s = 2, r = 0: the SDK's own HTTP-layer retries
// and no harness retries, backoff sdk), 10 attempts (budgeted, s = r = 9,
// B = 10, backoff sdk: ten requests per call whichever layer retries) and
// AWS's standard mode (budgeted, s = r = 2, B = 3, exp:0.1,20,1).
std::vector<TuneAnchor> tune_anchor_schedules(std::int64_t n);

// Evaluates one schedule: success, mean requests and mean seconds (the
// exact engine without its distributions); with `p99`, also p99 seconds.
TunePoint evaluate_schedule(const TuneConfig& config, const TuneSchedule& schedule, bool p99);

// True when a is at least as good as b in every dimension (weakly
// dominates: equal points dominate each other).
bool weakly_dominates(const TunePoint& a, const TunePoint& b, bool with_p99);

// The search. Throws InputError for a target outside (0, 1), an invalid
// model or space, or a space over kMaxTuneSchedules without force.
// `progress(done, total)` is called from the calling thread now and then
// while schedules are evaluated. The result does not depend on the thread
// count: every schedule is evaluated alone and the front is built in one
// fixed order.
TuneResult run_tune(const TuneSpace& space, const TuneConfig& config,
                    const std::function<void(std::int64_t, std::int64_t)>& progress = {});

// The most stream-layer retries a widened search reaches (s stops at kMaxHttpRetries).
inline constexpr int kMaxWidenedR = 100;

// run_tune, widened where its answer lies on a bound: while the best
// schedule's s is s_max (s > 0, and s matters) or its r is r_max (likewise),
// that bound is doubled, within kMaxHttpRetries for s, kMaxWidenedR for r,
// (s_max + 1)(r_max + 1) <= kMaxRequestsPerCall and kMaxTuneSchedules (unless
// force), and the search run again. `space` ends as the space searched last;
// TuneResult::notes says each widening, and flags a best value that is still
// on a bound it could not widen.
TuneResult run_tune_widening(TuneSpace& space, const TuneConfig& config,
                             const std::function<void(std::int64_t, std::int64_t)>& progress = {});

}  // namespace relsim
