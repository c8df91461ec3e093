// The fleet's random draws that a live run replays (fleet.hpp): each task's
// own fault chain over its served requests, and the agents' start times.
// The simulation (replicate.cpp) draws through the same functions.
#include <fmt/format.h>

#include "fleet/replicate.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"

namespace relsim::fleet {

// The Gilbert chain (b = g = 0, fresh per task): the first served request
// is bad with p, one after a bad one with q, after a good one with p0.
std::optional<FaultKind> draw_served(const Prepared& prepared, std::uint64_t key, ServedChain& chain) {
  const Model& model = prepared.scenario.model;
  const std::uint32_t k = chain.served++;
  const double bad_p = k == 0 ? model.p : (chain.prev_bad ? model.q : prepared.p0);
  chain.prev_bad = rng::uniform(prepared.seed, rng::Stream::fleet_chain, key, k) < bad_p;
  if (!chain.prev_bad) return std::nullopt;
  return prepared.scheme.kind(rng::word(prepared.seed, rng::Stream::fleet_kind, key, chain.bad++));
}

double start_uniform(const Prepared& prepared, int replicate, std::uint64_t number, std::uint64_t draw) {
  return rng::uniform(prepared.seed, rng::Stream::fleet_start, task_key(replicate, number), draw);
}

namespace {

Prepared prepared_for(const Scenario& scenario, std::uint64_t seed, int replicate) {
  validate(scenario, true);
  if (replicate < 0 || replicate > kMaxReplicates)
    throw InputError(fmt::format("replicate = {} is out of range: it must be in [0, {}]", replicate, kMaxReplicates));
  RunConfig run;
  run.seed = seed;
  run.bin_seconds = scenario.duration;
  return prepare(scenario, run);
}

}  // namespace

std::vector<std::optional<FaultKind>> served_faults(const Scenario& scenario, std::uint64_t seed, int replicate,
                                                    std::uint64_t number, std::size_t count) {
  const Prepared prepared = prepared_for(scenario, seed, replicate);
  const std::uint64_t key = task_key(replicate, number);
  ServedChain chain;
  std::vector<std::optional<FaultKind>> out;
  out.reserve(count);
  for (std::size_t k = 0; k < count; ++k) out.push_back(draw_served(prepared, key, chain));
  return out;
}

double coordinated_start_time(const Scenario& scenario, std::uint64_t seed, int replicate, std::int64_t agent) {
  const Prepared prepared = prepared_for(scenario, seed, replicate);
  return scenario.start.window * start_uniform(prepared, replicate, static_cast<std::uint64_t>(agent), 0);
}

}  // namespace relsim::fleet
