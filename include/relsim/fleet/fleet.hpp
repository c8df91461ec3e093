#pragma once
// The fleet's discrete-event simulation in virtual time (docs/fleet.md):
// every agent, request, pool wait, quota token and provider stream of a
// Scenario, event by event. Randomness is Philox of (seed, replicate, task,
// draw), so a replicate is a pure function of its index; replicates are
// split over threads and MPI ranks and their integer totals summed, so the
// result is the same bytes for any thread or rank count.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "relsim/core/rng.hpp"
#include "relsim/fleet/scenario.hpp"
#include "relsim/parallel/parallel.hpp"

namespace relsim::fleet {

struct RunConfig {
  int replicates = 1;  // independent runs of the scenario, in [1, kMaxReplicates]
  int first_replicate = 0;  // runs replicates first_replicate .. + replicates - 1, in [0, kMaxReplicates]
  std::uint64_t seed = rng::kReferenceSeed;
  int threads = 0;           // 0: OpenMP's default
  double bin_seconds = 1.0;  // the time series' bin, in (0, duration]
  parallel::Share share;
  // Called now and then from one thread with the replicates finished so far
  // on this rank; for a progress display only.
  std::function<void(std::int64_t)> progress;
};

// Latencies are kept in a histogram of bins 1% wide from 1 ms (bin 0 holds
// everything below 1 ms), so that replicates and ranks add up exactly;
// a quantile is reported as its bin's geometric middle (within 0.5%).
inline constexpr int kLatencyBins = 2048;
double latency_bin_low(int bin);   // seconds; 0 for bin 0
double latency_bin_high(int bin);  // seconds
int latency_bin(double seconds);
// The q-quantile (q in (0, 1)) of a histogram: the smallest bin whose
// cumulative count reaches q of the total, as its geometric middle (0 for
// bin 0); NaN for an empty histogram.
double histogram_quantile(const std::vector<std::int64_t>& histogram, double q);

// One bin of the time series, counted over every replicate.
struct Bin {
  std::int64_t sent = 0;       // requests sent (that left the pool) in the bin
  std::int64_t good = 0;       // good answers received
  std::int64_t r429 = 0;       // 429 answers received
  std::int64_t r529 = 0;       // 529 answers received
  std::int64_t timeouts = 0;   // requests given up at the header timeout
  std::int64_t started = 0;    // tasks started
  std::int64_t finished = 0;   // tasks ended
  std::int64_t successes = 0;  // tasks ended done
};

struct FleetResult {
  int replicates = 0;
  std::int64_t tasks = 0;      // started (all end)
  std::int64_t successes = 0;  // ended done
  std::int64_t requests = 0;   // sent
  std::int64_t good = 0;       // good answers: useful requests
  std::int64_t r429 = 0, r529 = 0;
  std::int64_t timeouts = 0;   // given up at the header timeout (the provider still served them)
  std::int64_t wasted = 0;     // streams the provider served for a client that had gone
  std::int64_t denied = 0;     // retries the throttle refused
  std::int64_t events = 0;     // events processed, for speed figures
  // With Scenario::billing (billed): nano-dollars billed for the tasks'
  // served requests, for those of the tasks that ended done, and for the
  // streams served for a client that had gone (wasted, in full).
  bool billed = false;
  std::int64_t cost_nano = 0, cost_done_nano = 0, cost_wasted_nano = 0;
  std::array<std::int64_t, kOutcomeClasses> outcomes{};  // tasks by outcome class (index_of)
  std::vector<std::int64_t> latency;    // task latency histogram (kLatencyBins)
  std::vector<std::int64_t> pool_wait;  // per request sent, the wait for a connection (kLatencyBins)
  // The same for the requests of the short agents alone (all of them when
  // the scenario has no long agents).
  std::vector<std::int64_t> pool_wait_short;
  std::vector<Bin> series;              // ceil(duration / bin_seconds) bins over [0, duration)
  double bin_seconds = 1.0;

  double success_rate() const;   // successes / tasks (NaN for none)
  double rate_429() const;       // r429 / requests
  double rate_529() const;
  double amplification() const;  // requests / good (NaN when nothing was good)
  // USD: the mean cost of a task (its requests; NaN unless billed), of a
  // done task, and the spend per done task (everything billed, wasted
  // streams and failed tasks included, over the successes).
  double cost_mean() const;
  double cost_mean_done() const;
  double cost_per_done() const;
  double latency_quantile(double q) const { return histogram_quantile(latency, q); }
  double pool_wait_quantile(double q) const { return histogram_quantile(pool_wait, q); }
  double short_pool_wait_quantile(double q) const { return histogram_quantile(pool_wait_short, q); }
};

// Throws InputError for an invalid scenario (validate, with `force`) or config.
FleetResult run_fleet(const Scenario& scenario, const RunConfig& config, bool force = false);

// What replicate `replicate` of the simulation with seed `seed` draws, so
// that a live run can replay it (live/fleet_live.hpp). A coordinated start
// numbers agent a's k-th task a × tasks_per_agent + k.
// The faults of task `number`'s first `count` served requests, in order
// (nullopt: good); 429s and 529s are not among them.
std::vector<std::optional<FaultKind>> served_faults(const Scenario& scenario, std::uint64_t seed, int replicate,
                                                    std::uint64_t number, std::size_t count);
// When agent `agent` starts its first task in a coordinated start, in seconds.
double coordinated_start_time(const Scenario& scenario, std::uint64_t seed, int replicate, std::int64_t agent);

}  // namespace relsim::fleet
