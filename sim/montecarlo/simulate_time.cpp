// simulate_time() (simulate_time.hpp): checks the input, splits this rank's
// share of the tasks over OpenMP threads (chunks of fresh tasks, or lanes),
// walks each task event by event (montecarlo/time_walk.hpp), sums the ranks
// exactly, and derives the mean, its interval and the quantiles.
#include "relsim/montecarlo/simulate_time.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/parallel/for_each_unit.hpp"
#include "montecarlo/kernel.hpp"
#include "relsim/parallel/progress.hpp"
#include "montecarlo/result.hpp"
#include "montecarlo/time_intervals.hpp"
#include "montecarlo/time_sums.hpp"
#include "montecarlo/time_walk.hpp"

namespace relsim {
namespace {

using detail::kChunk;

// One thread's totals.
struct TimeThread {
  SimResult counts;
  detail::TimeSums sums;
};

// What every task of one run shares.
class TimeRun {
 public:
  TimeRun(const detail::TimeSimScheme& s, const SimConfig& config, std::vector<std::int64_t>& micros,
          std::vector<std::int64_t>& lane_micros)
      : s_(s), config_(config), micros_(micros), lane_micros_(lane_micros), progress_(config.progress) {}

  // Fresh scope: the tasks of chunk `chunk`.
  void add_chunk(TimeThread& th, std::int64_t chunk) {
    const std::int64_t last = std::min(config_.tasks, (chunk + 1) * kChunk);
    detail::ChainPosition at;
    detail::UnitProgress reported(progress_);
    for (std::int64_t t = chunk * kChunk; t < last; ++t) {
      add_task(th, t, true, false, at);
      reported.task();
    }
    reported.finish();
  }

  // Continuous scope: tasks lane, lane + lanes, ... in order, the chain
  // running on between them.
  void add_lane(TimeThread& th, std::int64_t lane) {
    detail::ChainPosition at;
    int previous = -1;  // the earlier task's outcome: 0 not done, 1 done
    std::uint64_t lane_total = 0;  // wraps only when the run's total overflows, which is refused
    detail::UnitProgress reported(progress_);
    for (std::int64_t t = lane; t < config_.tasks; t += config_.lanes) {
      std::int64_t micros = 0;
      const bool done = add_task(th, t, previous < 0, true, at, &micros);
      lane_total += static_cast<std::uint64_t>(micros);
      if (previous >= 0) {
        ++th.counts.pairs_after[static_cast<std::size_t>(previous)];
        th.counts.done_after[static_cast<std::size_t>(previous)] += done ? 1 : 0;
      }
      previous = done ? 1 : 0;
      reported.task();
    }
    lane_micros_[static_cast<std::size_t>(lane)] = static_cast<std::int64_t>(lane_total);
    reported.finish();
  }

 private:
  // Walks task `task` into `th`; returns whether it ended done.
  bool add_task(TimeThread& th, std::int64_t task, bool fresh, bool carry, detail::ChainPosition& at,
                std::int64_t* micros_out = nullptr) {
    const detail::TimedTask walked =
        detail::walk_time_task(s_, config_.seed, static_cast<std::uint64_t>(task), fresh, carry, at, th.counts.faults);
    const TaskRunner& runner = walked.runner;
    RELSIM_ASSERT(runner.ended());
    const bool done = runner.outcome().outcome == Outcome::done;
    SimResult& c = th.counts;
    ++c.tasks;
    c.successes += done ? 1 : 0;
    c.requests += runner.requests();
    c.second_requests += walked.second;
    if (s_.nano) ++(done ? c.cost_done : c.cost_failed)[walked.nano_dollars];
    c.calls_succeeded += runner.call();
    ++c.outcomes[static_cast<std::size_t>(index_of(runner.outcome()))];
    if (!c.done_by_requests.empty())
      ++(done ? c.done_by_requests : c.env_by_requests)[static_cast<std::size_t>(runner.requests())];
    // Below kMaxTaskSeconds (checked before the run), so below 2^63 us.
    const std::int64_t micros = std::llround(walked.seconds * 1e6);
    th.sums.add(micros);
    if (!micros_.empty()) micros_[static_cast<std::size_t>(task)] = micros;
    if (micros_out) *micros_out = micros;
    return done;
  }

  const detail::TimeSimScheme& s_;
  const SimConfig& config_;
  std::vector<std::int64_t>& micros_;
  std::vector<std::int64_t>& lane_micros_;
  detail::Progress progress_;  // tasks finished on this rank, for SimConfig::progress
};

// The longest a task can last: every request as long as the longest
// duration and followed by the longest gap (a wait, a retry-after or the
// think time).
double longest_task(const TimeModel& time, const Policy& policy) {
  const double request = time.longest_request();
  double gap = time.think_seconds;
  if (time.retry_after > 0.0 && time.retry_after < kMaxRetryAfter) gap = std::max(gap, time.retry_after);
  for (int k = 0; k <= std::max(policy.r, policy.s); ++k) gap = std::max(gap, time.backoff.max_wait(k));
  return static_cast<double>(policy.max_requests()) * (request + gap);
}

void check_run(const TimeModel& time, const Policy& policy, const SimConfig& config, const TimeSimOptions& options) {
  validate(time);
  validate(policy);
  validate(config);
  validate(options);
  if (config.fallback) {
    validate(*config.fallback, policy);
    if (!config.fallback->timed())
      throw InputError("fallback-after: in time mode the second provider's chain is in seconds: give --t-good2 and "
                       "--t-bad2 (not --p2)");
  }
  if (config.tools) throw InputError("tool-faults: time mode (--t-good, --t-bad) does not support tool calls yet");
  if (config.billing && time.scope == ChainScope::continuous)
    throw InputError("chain = continuous: the simulated cost per task (--price-in, --price-out) covers the fresh "
                     "scope only yet; use --chain fresh, or relsim exact for the cost");
  if (config.billing && !config.share.single())
    throw InputError("the simulated cost per task (--price-in, --price-out) runs on one rank only yet: run it "
                     "without mpirun");
  if (config.billing && config.billing->cached_tokens > 0.0 && config.fallback)
    throw InputError("cached-tokens: a cached prefix with a fallback is not modelled yet (each provider keeps a cache "
                     "of its own); leave out one of them");
  const double longest = longest_task(time, policy);
  if (!(longest <= kMaxTaskSeconds))
    throw InputError(fmt::format("a task of {} can last up to {:g} s with these time options: the simulator keeps a "
                                 "task's time to the microsecond up to {:g} s; use fewer calls or shorter waits",
                                 describe(policy), longest, kMaxTaskSeconds));
}

// This rank's share of the run, its totals summed over the ranks.
TimeThread run_share(const detail::TimeSimScheme& s, const SimConfig& config, bool fresh,
                     std::vector<std::int64_t>& micros, std::vector<std::int64_t>& lane_micros) {
  const std::size_t bins = detail::histogram_bins(s.policy);
  TimeThread total{detail::empty_result(bins), {}};
  total.counts.outcomes_by_class = true;
  TimeRun run(s, config, micros, lane_micros);
  const std::int64_t units = fresh ? (config.tasks + kChunk - 1) / kChunk : config.lanes;
  const std::pair<std::int64_t, std::int64_t> range = config.share.range(units);
  detail::for_each_unit(
      config.threads, range.first, range.second, [&] { return TimeThread{detail::empty_result(bins), {}}; },
      [&](TimeThread& th, std::int64_t unit) { fresh ? run.add_chunk(th, unit) : run.add_lane(th, unit); },
      [&](const TimeThread& th) {
        detail::add_counts(total.counts, th.counts);
        total.sums.add(th.sums);
      });
  if (!config.share.single()) {
    std::vector<std::int64_t> counts = detail::pack_counts(total.counts);
    parallel::sum_all(counts, config.share);
    detail::unpack_counts(counts, total.counts);
    std::vector<std::int64_t> pieces = total.sums.pack();
    parallel::sum_all(pieces, config.share);
    total.sums = detail::TimeSums::unpack(pieces);
    // Every other rank's entries are 0 here: the sums are the whole run's.
    if (!micros.empty()) parallel::sum_all(micros, config.share);
    if (!lane_micros.empty()) parallel::sum_all(lane_micros, config.share);
  }
  return total;
}

// The exact total as int64 microseconds; throws when it does not fit.
std::int64_t total_of(const detail::TimeSums& sums, std::int64_t tasks) {
  const auto& w = sums.sum.word;
  const auto most = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (w[1] != 0 || w[2] != 0 || w[3] != 0 || w[0] > most)
    throw InputError(fmt::format("tasks = {}: the tasks' total wall time, {:g} s, overflows 64-bit microseconds; "
                                 "run fewer tasks",
                                 tasks, static_cast<double>(sums.sum.to_long_double() * 1e-6L)));
  return static_cast<std::int64_t>(w[0]);
}

}  // namespace

void validate(const TimeSimOptions& o) {
  if (!(o.confidence > 0.0 && o.confidence < 1.0))
    throw InputError(fmt::format("confidence = {} is out of range: it must be in (0, 1)", o.confidence));
  if (o.max_timed_tasks < 0 || o.max_timed_tasks > kMaxTimedTasks)
    throw InputError(fmt::format("max timed tasks = {} is out of range: it must be in [0, {}]", o.max_timed_tasks,
                                 kMaxTimedTasks));
}

TimeSimResult simulate_time(const TimeModel& given, const Policy& policy, const SimConfig& config,
                            const TimeSimOptions& options) {
  check_run(given, policy, config, options);
  // With a fallback the hidden state holds both providers' (fallback.hpp).
  TimeModel time = given;
  Eigen::VectorXd second_bad;
  if (config.fallback) {
    FallbackTimeChain both = fallback_time_chain(given.chain, *config.fallback);
    time.chain = std::move(both.chain);
    second_bad = std::move(both.second_bad);
  }
  detail::TimeSimScheme scheme = detail::TimeSimScheme::make(time, policy, config.kinds);
  if (config.fallback) scheme.add_fallback(*config.fallback, second_bad);
  if (config.billing) {
    const Billing& first = *config.billing;
    const Billing second = config.fallback ? second_billing(first, *config.fallback) : first;
    scheme.nano = detail::NanoTable{nano_costs(first), nano_costs(second)};
    scheme.cache_write = nano_surcharge(first);
  }
  const bool fresh = time.scope == ChainScope::fresh;
  const bool keep = config.tasks <= options.max_timed_tasks;
  std::vector<std::int64_t> micros(keep ? static_cast<std::size_t>(config.tasks) : 0);
  std::vector<std::int64_t> lane_micros(fresh ? 0 : static_cast<std::size_t>(config.lanes));
  const TimeThread total = run_share(scheme, config, fresh, micros, lane_micros);
  RELSIM_ASSERT(total.counts.tasks == config.tasks);

  TimeSimResult out;
  out.counts = total.counts;
  out.confidence = options.confidence;
  out.total_microseconds = total_of(total.sums, config.tasks);
  const auto n = static_cast<long double>(config.tasks);
  out.mean_seconds = static_cast<double>(static_cast<long double>(out.total_microseconds) / n * 1e-6L);
  out.sd_seconds = static_cast<double>(std::sqrt(total.sums.variance(config.tasks)) * 1e-6L);
  out.mean_interval = fresh ? detail::normal_mean_interval(out.mean_seconds, out.sd_seconds, config.tasks,
                                                           options.confidence)
                            : detail::lane_mean_interval(lane_micros, config.tasks, config.lanes, options.confidence);
  if (!keep) {
    out.quantiles_note = fmt::format("tasks = {} is over {}: per-task times, which the quantiles need, are kept for at "
                                     "most that many tasks",
                                     config.tasks, options.max_timed_tasks);
    return out;
  }
  out.quantiles_available = true;
  if (!fresh)
    out.quantiles_note = "continuous scope: the tasks of a lane are correlated, so the quantiles carry no "
                         "distribution-free interval";
  detail::fill_quantiles(micros, options.confidence, fresh, out);
  return out;
}

}  // namespace relsim
