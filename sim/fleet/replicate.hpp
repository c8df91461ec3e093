#pragma once
// Internal to the fleet layer: one replicate of a scenario, event by event.
#include <cstdint>

#include "relsim/fleet/fleet.hpp"
#include "relsim/montecarlo/simulate.hpp"

namespace relsim::fleet {

// What every replicate shares, worked out once.
struct Prepared {
  Scenario scenario;
  DrawScheme scheme;  // the fault kinds' cuts (the simulator's own, so the draws mean the same)
  double p0 = 0.0;    // P(bad | previous good)
  std::uint64_t seed = 0;
  double bin_seconds = 1.0;
  std::int64_t bins = 0;
};

// The RNG's task index of task `number` of replicate `replicate`.
inline constexpr int kTaskBits = 40;
inline std::uint64_t task_key(int replicate, std::uint64_t number) {
  return (static_cast<std::uint64_t>(replicate) << kTaskBits) | number;
}

// An empty result sized for `prepared`: histograms and series of zeros.
FleetResult empty_result(const Prepared& prepared);

// Runs replicate `index` and adds its counts to `into` (from empty_result).
void run_replicate(const Prepared& prepared, int index, FleetResult& into);

}  // namespace relsim::fleet
