#pragma once
// A fleet scenario (docs/fleet.md): many agents over tenants sharing one
// provider, with the provider's quotas and capacity, the client's connection
// pool and retry throttle, and a trigger. Only the description and its
// parsing live here; fleet.hpp runs it.
#include <cstdint>
#include <string>
#include <string_view>

#include "relsim/core/billing.hpp"
#include "relsim/core/dialect.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/retry_throttle.hpp"
#include "relsim/core/time_model.hpp"

namespace relsim::fleet {

inline constexpr std::int64_t kMaxAgents = 1'000'000;
inline constexpr std::int64_t kMaxTasksPerAgent = 1'000'000;
inline constexpr std::int64_t kMaxCapacity = 100'000'000;
inline constexpr double kMaxQuota = 1e9;  // requests per minute
// A run's virtual duration above this needs --force (the event count grows with it).
inline constexpr double kMaxDuration = 86'400.0;
inline constexpr double kMaxForcedDuration = 1e7;
inline constexpr int kMaxReplicates = 100'000;

// How agents start. coordinated: every agent starts its first task at a time
// drawn uniformly in [0, window) and runs tasks_per_agent tasks back to back
// (a closed loop). poisson: tasks arrive as a Poisson stream of `rate` per
// second over [0, duration), task i on agent i mod agents (an open loop: the
// arrivals do not wait for the provider).
struct Start {
  enum class Kind { coordinated, poisson };
  Kind kind = Kind::coordinated;
  double window = 0.1;  // seconds, coordinated
  double rate = 0.0;    // tasks per second, poisson
};
// "coordinated", "coordinated:WINDOW" (seconds in [0, 3600]) or
// "poisson:RATE" (tasks per second in (0, 1e7]). Throws InputError naming the
// bad text and the accepted forms.
Start parse_start(std::string_view spec);
std::string to_string(const Start& start);  // parses back to the same start

// Client-side retry throttling, one throttle per tenant shared by its agents
// (docs/fleet.md, Throttles): the rules are in relsim/core/retry_throttle.hpp.
using relsim::Throttle;
// Throws InputError naming the bad text and the accepted forms: grpc MAX in
// (0, 1e6], RATIO in (0, MAX]; budget RATIO in (0, 1], MIN in [0, 1e6].
Throttle parse_throttle(std::string_view spec);
std::string to_string(const Throttle& throttle);  // parses back to the same throttle

// An exogenous trigger: during [start, start + length) the provider serves
// no new stream (an outage behind its front door): a request waits in the
// queue while there is room and gets 529 otherwise; streams already running
// end as planned, and the queue is served again from the outage's end.
// length 0: none.
struct Trigger {
  double start = 0.0, length = 0.0;
  bool active() const { return length > 0.0; }
};
// "none" or "outage:START,LENGTH" (seconds, START >= 0, LENGTH > 0, both
// <= kMaxForcedDuration). Throws InputError.
Trigger parse_trigger(std::string_view spec);
std::string to_string(const Trigger& trigger);

struct Scenario {
  // Agents and their tasks.
  std::int64_t agents = 50;
  std::int64_t tenants = 1;          // agent a belongs to tenant a mod tenants; in [1, agents]
  std::int64_t tasks_per_agent = 1;  // coordinated start only
  Start start;
  double duration = 600.0;  // virtual seconds: no task starts at or after it; started tasks run to their end

  // The provider. 0 means no limit for quota and capacity.
  double quota = 0.0;         // requests per minute per tenant: a token bucket of `quota` tokens refilled at quota/60 per s
  std::int64_t capacity = 0;  // streams served at once
  std::int64_t queue = 0;     // requests waiting for a free stream; past it (or with 0) a request gets 529 at once
  Trigger trigger;

  // The client.
  std::int64_t pool = 0;       // connections per tenant (a request holds one until its answer ends); 0: no limit
  bool pool_per_task = false;  // every task its own connection: never a wait
  Throttle throttle;
  double header_timeout = 0.0;  // a request still queued at the provider after this long is given up as slow_headers; 0: never

  // Each agent's own requests and its retry loop (the single-agent model):
  // the served requests of a task follow the Gilbert chain (p, q) from the
  // stationary law, fresh per task (b = g = 0); a bad one takes its kind
  // from `kinds`. A 429 or 529 from the provider is not a step of the chain.
  Model model;
  Policy policy;
  FaultWeights kinds = FaultWeights::in_stream_uniform();
  double request_seconds = 1.0;   // a served good request holds a stream this long
  // A served bad one breaks where the mock breaks its stream (per kind, a
  // share of the request's seconds: core/dialect.hpp's stream_break_share,
  // in the wire the live run speaks), then ends: its agent sees the fault
  // and its stream is free. The same for long_seconds.
  Dialect dialect = Dialect::anthropic;
  // Agents 0 .. long_agents - 1 stream for long_seconds instead (a long
  // generation beside short tool calls); their tasks are the "long" ones.
  std::int64_t long_agents = 0;   // in [0, agents]
  double long_seconds = 30.0;
  double reject_seconds = 0.01;   // a 429 or 529 answer takes this long
  Backoff backoff = Backoff::sdk();  // a 429's retry-after replaces it when 0 < retry-after < 60 s
  // Prices (docs/model.md, Cost): each served request is billed as exact
  // bills it (a good one in full, a broken one for what it streamed, a 429
  // or 529 not at all), and a stream served for a client that had gone in
  // full. nullopt: no cost.
  std::optional<Billing> billing;
};

// Throws InputError naming the bad field and its range. `force` lifts the
// duration limit from kMaxDuration to kMaxForcedDuration.
void validate(const Scenario& scenario, bool force = false);

}  // namespace relsim::fleet
