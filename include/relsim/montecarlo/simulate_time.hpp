#pragma once
// Seeded Monte Carlo in seconds (docs/time.md; docs/methods.md, Time mode):
// the continuous-time chain drawn event by event, independently of the
// matrix code. It reads only TimeChain's generator, emission vector and
// stationary law, never exp(Qt): the hidden state holds for an exponential
// sojourn of rate -Q(i,i), then jumps to j with probability Q(i,j) / -Q(i,i)
// (the jump chain; Norris, "Markov Chains", 1997, section 2.6). A request
// sees the state at its start; the policy's rules are `react` through
// TaskRunner, and the gaps between requests are wait_before, seconds_of and
// think_seconds (time_model.hpp).
//
// Randomness is Philox of (seed, stream, task, draw index) as in
// simulate.hpp, one stream per purpose: time_chain (the initial state, each
// sojourn, each jump's target when there are over two states), emission (one
// uniform per request in a state whose P(bad) is strictly between 0 and 1),
// kind (one word per bad request, the same cuts as simulate()) and jitter
// (one uniform per jittered wait). Each task's wall time is rounded to the
// microsecond and summed as an integer, so every figure is the same bytes for
// any thread count and any number of MPI ranks.
#include <array>
#include <cstdint>
#include <string>

#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim {

// Per-task wall times are kept for the quantiles up to this many tasks (8
// bytes each, on every rank).
inline constexpr std::int64_t kMaxTimedTasks = 10'000'000;
// A task's wall time is kept in 64-bit microseconds: simulate_time refuses a
// policy and time options under which one task could last longer than this.
inline constexpr double kMaxTaskSeconds = 1e12;

struct TimeSimOptions {
  double confidence = 0.99;  // of the mean's and the quantiles' intervals, in (0, 1)
  // Per-task times (and so the quantiles) are kept when tasks <= this; in
  // [0, kMaxTimedTasks].
  std::int64_t max_timed_tasks = kMaxTimedTasks;
};

// Throws InputError naming the bad field and its range.
void validate(const TimeSimOptions& options);

// The order statistics that estimate a quantile of `tasks` independent
// times and bound it (distribution-free, any law, atoms included): with the
// times sorted, x_(rank) is the smallest x with at least percent% of them
// <= x, rank = ceil(tasks percent / 100), and [x_(low), x_(high)] holds the
// true quantile with probability >= confidence. B ~ Binomial(tasks,
// percent/100); low = the largest l with P(B <= l - 1) <= alpha/2 and high =
// the smallest u with P(B <= u - 1) >= 1 - alpha/2, alpha = 1 - confidence.
// low = 0: no lower order statistic qualifies (the bound is 0 s); high =
// tasks + 1: no upper one does (the bound is +infinity). 1-based ranks.
struct QuantileRanks {
  std::int64_t rank = 0, low = 0, high = 0;
};
// Throws InputError for tasks < 1, percent outside [1, 99] or confidence
// outside (0, 1).
QuantileRanks quantile_ranks(std::int64_t tasks, int percent, double confidence);

// One quantile of the wall time per task.
struct SimQuantile {
  int percent = 50;
  double seconds = 0.0;  // x_(rank) of quantile_ranks, to the microsecond
  // [x_(low), x_(high)] at TimeSimResult::confidence; [0, +inf) when the
  // tasks are too few, and always in the continuous scope (see below).
  Interval interval{0.0, 0.0};
};

struct TimeSimResult {
  // The counts of simulate() (simulate.hpp): tasks, successes, requests,
  // calls_succeeded, faults by kind, outcomes by class (outcomes_by_class is
  // always true), done/env histograms by request count, and in the
  // continuous scope the consecutive pairs behind design_effect().
  SimResult counts;

  // Sum over tasks of each task's wall time (its first request's start to
  // its last request's end) rounded to the microsecond: exact.
  std::int64_t total_microseconds = 0;
  double mean_seconds = 0.0;  // total / tasks
  double sd_seconds = 0.0;    // sample standard deviation of a task's time (exact sums of squares)
  double confidence = 0.99;
  // The mean's interval. Fresh scope: normal (central limit), mean +- z
  // sd / sqrt(tasks). Continuous scope: batch means over the lanes (lanes
  // are independent, tasks within one are not): the ratio estimator's
  // variance from the lane totals, Student's t with lanes - 1 degrees of
  // freedom; [0, +inf) with one lane.
  Interval mean_interval{0.0, 0.0};

  // p50, p90, p99 (the smallest x with at least that share of tasks taking
  // <= x), when quantiles_available; otherwise quantiles_note says why. In
  // the continuous scope the tasks of a lane are correlated, so the
  // distribution-free intervals do not hold: the point values are given, the
  // intervals are [0, +inf), and quantiles_note says so.
  bool quantiles_available = false;
  std::string quantiles_note;
  std::array<SimQuantile, 3> quantiles{};
};

// Fresh scope: task i's first request sees a state drawn from chain.initial.
// Continuous scope: tasks split into config.lanes lanes as in simulate();
// the next task of a lane starts d_last + think_seconds after the previous
// task's last request started, the chain running on. A lane's first task
// starts from chain.initial, the law at a fixed time, which is not exactly
// the law at a task's first request in the long run (a task tends to end
// when the chain has just done something): give each lane many tasks.
//
// With config.share of several ranks (MPI), rank k runs a contiguous range of
// the chunks of 1024 tasks (fresh) or of the lanes (continuous); the integer
// totals, the lane totals and the per-task times are summed over the ranks,
// so every rank returns the whole run's result. Every rank must call this
// alike. Throws InputError for an invalid time model, policy, config or
// options, for a policy whose task could outlast kMaxTaskSeconds, and when
// the total wall time overflows 64-bit microseconds.
TimeSimResult simulate_time(const TimeModel& time, const Policy& policy, const SimConfig& config,
                            const TimeSimOptions& options = {});

}  // namespace relsim
