// The fleet simulation's replicates over threads and MPI ranks (fleet.hpp),
// and the figures derived from its counts.
#include "relsim/fleet/fleet.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "fleet/replicate.hpp"
#include "relsim/parallel/for_each_unit.hpp"
#include "relsim/parallel/progress.hpp"
#include "relsim/core/error.hpp"

namespace relsim::fleet {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Poisson arrivals expected over a run: task numbers must stay below 2^40.
constexpr double kMaxExpectedArrivals = 1e10;
constexpr std::int64_t kMaxBins = 10'000'000;

double ratio(std::int64_t a, std::int64_t b) { return b == 0 ? kNaN : static_cast<double>(a) / static_cast<double>(b); }

void validate_run(const Scenario& s, const RunConfig& c) {
  if (c.replicates < 1 || c.replicates > kMaxReplicates)
    throw InputError(fmt::format("replicates = {} is out of range: it must be in [1, {}]", c.replicates, kMaxReplicates));
  if (c.first_replicate < 0 || c.first_replicate > kMaxReplicates)
    throw InputError(fmt::format("first replicate = {} is out of range: it must be in [0, {}]", c.first_replicate,
                                 kMaxReplicates));
  if (c.threads < 0 || c.threads > 1024)
    throw InputError(fmt::format("threads = {} is out of range: it must be in [0, 1024] (0: one per core)", c.threads));
  if (!(c.bin_seconds > 0.0 && c.bin_seconds <= s.duration))
    throw InputError(fmt::format("bin-seconds = {} is out of range: it must be in (0, duration = {:g}]", c.bin_seconds,
                                 s.duration));
  if (std::ceil(s.duration / c.bin_seconds) > static_cast<double>(kMaxBins))
    throw InputError(fmt::format("bin-seconds = {} gives over {} bins over duration = {:g}: use a wider bin",
                                 c.bin_seconds, kMaxBins, s.duration));
  if (s.start.kind == Start::Kind::poisson && s.start.rate * s.duration > kMaxExpectedArrivals)
    throw InputError(fmt::format("poisson:{:g} over duration = {:g} s expects {:g} tasks: at most {:g}", s.start.rate,
                                 s.duration, s.start.rate * s.duration, kMaxExpectedArrivals));
}


// Every count of a result in one fixed order, for adding results up.
template <class F>
void each_count(FleetResult& r, F&& f) {
  for (std::int64_t* x : {&r.tasks, &r.successes, &r.requests, &r.good, &r.r429, &r.r529, &r.timeouts, &r.wasted,
                          &r.denied, &r.events, &r.cost_nano, &r.cost_done_nano, &r.cost_wasted_nano})
    f(*x);
  for (std::int64_t& x : r.outcomes) f(x);
  for (std::int64_t& x : r.latency) f(x);
  for (std::int64_t& x : r.pool_wait) f(x);
  for (std::int64_t& x : r.pool_wait_short) f(x);
  for (Bin& b : r.series)
    for (std::int64_t* x : {&b.sent, &b.good, &b.r429, &b.r529, &b.timeouts, &b.started, &b.finished, &b.successes})
      f(*x);
}

void add(FleetResult& into, FleetResult from) {
  std::vector<std::int64_t> values;
  each_count(from, [&](std::int64_t& x) { values.push_back(x); });
  std::size_t i = 0;
  each_count(into, [&](std::int64_t& x) { x += values[i++]; });
  into.replicates += from.replicates;
}

// The counts of every rank added up, on every rank.
void sum_over_ranks(FleetResult& r, const parallel::Share& share) {
  if (share.single()) return;
  std::vector<std::int64_t> values;
  each_count(r, [&](std::int64_t& x) { values.push_back(x); });
  values.push_back(r.replicates);
  parallel::sum_all(values, share);
  std::size_t i = 0;
  each_count(r, [&](std::int64_t& x) { x = values[i++]; });
  r.replicates = static_cast<int>(values[i]);
}

}  // namespace

Prepared prepare(const Scenario& s, const RunConfig& c) {
  Prepared p;
  p.scenario = s;
  p.scheme = DrawScheme::make(s.model, s.policy, s.kinds);
  p.p0 = s.model.p0();
  p.seed = c.seed;
  p.bin_seconds = c.bin_seconds;
  p.bins = static_cast<std::int64_t>(std::ceil(s.duration / c.bin_seconds));
  p.break_share = stream_break_share(s.dialect);
  if (s.billing) p.nano = nano_costs(*s.billing);
  return p;
}

double FleetResult::success_rate() const { return ratio(successes, tasks); }
double FleetResult::rate_429() const { return ratio(r429, requests); }
double FleetResult::rate_529() const { return ratio(r529, requests); }
double FleetResult::amplification() const { return ratio(requests, good); }
double FleetResult::cost_mean() const { return billed ? ratio(cost_nano, tasks) / 1e9 : std::nan(""); }
double FleetResult::cost_mean_done() const { return billed ? ratio(cost_done_nano, successes) / 1e9 : std::nan(""); }
double FleetResult::cost_per_done() const {
  return billed ? ratio(cost_nano + cost_wasted_nano, successes) / 1e9 : std::nan("");
}

FleetResult run_fleet(const Scenario& scenario, const RunConfig& config, bool force) {
  validate(scenario, force);
  validate_run(scenario, config);
  const Prepared prepared = prepare(scenario, config);
  auto range = config.share.range(config.replicates);
  range.first += config.first_replicate;
  range.second += config.first_replicate;
  FleetResult result = empty_result(prepared);
  detail::Progress progress(config.progress);
  detail::for_each_unit(
      config.threads, range.first, range.second, [&] { return empty_result(prepared); },
      [&](FleetResult& mine, std::int64_t replicate) {
        run_replicate(prepared, static_cast<int>(replicate), mine);
        progress.add(1);
      },
      [&](const FleetResult& mine) { add(result, mine); });
  sum_over_ranks(result, config.share);
  return result;
}

}  // namespace relsim::fleet
