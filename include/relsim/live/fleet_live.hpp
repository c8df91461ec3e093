#pragma once
// A fleet scenario run live (docs/fleet.md, The fleet, live): relsim's mock
// server in provider mode (each tenant's quota, the capacity) and relsim's
// client as the fleet's agents (each tenant's pool and retry throttle), on
// loopback and time-scaled: one model second lasts `time_scale` wall
// seconds, for the streams, the backoff, retry-after and the quota's refill.
// Every task's served requests replay what one replicate of the simulation
// draws for it (fleet::served_faults), each stream paced to last the
// scenario's request_seconds, so that the live counts, in the fleet's own
// terms, can be set beside the simulation's; the server's request log is
// read back and checked against the client's own counts.
#include <cstdint>
#include <functional>

#include "relsim/core/dialect.hpp"
#include "relsim/fleet/fleet.hpp"
#include "relsim/fleet/scenario.hpp"

namespace relsim {

struct FleetLiveConfig {
  double time_scale = 0.1;  // wall seconds per model second, in [1e-3, 10]
  int replicate = 0;        // whose draws the run replays, in [0, fleet::kMaxReplicates]
  int server_threads = 1;   // in [1, 64]
  int client_threads = 1;   // in [1, 256]
  Dialect dialect = Dialect::anthropic;  // the API the agents speak (the provider answers in it)
};

inline constexpr std::int64_t kMaxLiveAgents = 2'000;
inline constexpr std::int64_t kMaxLiveTasks = 100'000;

// The server's request log, read back after the run.
struct FleetLiveLog {
  std::int64_t requests = 0;  // requests logged
  std::int64_t r429 = 0;      // answered 429 (over a tenant's quota)
  std::int64_t r529 = 0;      // answered 529 (over capacity)
  // The most requests of one tenant the server had open at once (from being
  // read to their answer's end; a reply the client left in the middle, at
  // the moment it was read): at most the pool, with one.
  std::int64_t most_in_flight = 0;
  std::int64_t wrong_tenant = 0;  // requests whose x-api-key is not their task's tenant's
  std::int64_t unfinished = 0;    // requests the server had not finished logging 5 s after the run
};

struct FleetLiveResult {
  // The run's counts as the simulation keeps them, times in model seconds
  // (wall / time_scale); no time series, no header timeouts or wasted streams.
  fleet::FleetResult counts;
  std::int64_t wrong_answers = 0;  // answers that did not name their task
  FleetLiveLog log;
  double wall_seconds = 0.0;
  // What a served stream lasts, in model seconds, once its eight events'
  // delays are whole milliseconds of wall time (short and long agents).
  double stream_seconds = 0.0, long_stream_seconds = 0.0;
};

// Throws InputError naming what the live run cannot play: a Poisson start,
// a queue, a header timeout, a trigger, fault kinds that are not in-stream,
// more than kMaxLiveAgents agents or kMaxLiveTasks tasks, a time scale out
// of range, or a stream shorter than 8 ms of wall time.
void validate_live(const fleet::Scenario& scenario, const FleetLiveConfig& config);

// Runs the scenario live (every agent's tasks, whatever the duration) with
// the draws of replicate config.replicate for `seed`.
FleetLiveResult run_fleet_live(const fleet::Scenario& scenario, std::uint64_t seed, const FleetLiveConfig& config);

}  // namespace relsim
