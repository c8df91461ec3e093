#pragma once
// Internal to the fleet layer: one replicate of a scenario, event by event.
#include <array>
#include <cstdint>
#include <optional>

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
  std::array<double, kFaultKinds> break_share{};  // stream_break_share(scenario.dialect)
  std::array<std::int64_t, kFaultKinds + 1> nano{};  // nano_costs(*scenario.billing); zeros without
};

// The RNG's task index of task `number` of replicate `replicate`.
inline constexpr int kTaskBits = 40;
inline std::uint64_t task_key(int replicate, std::uint64_t number) {
  return (static_cast<std::uint64_t>(replicate) << kTaskBits) | number;
}

// Worked out once from the scenario and the run (validated before).
Prepared prepare(const Scenario& scenario, const RunConfig& config);

// Where a task is in its own fault chain (draws.cpp).
struct ServedChain {
  std::uint32_t served = 0, bad = 0;  // served requests and bad ones so far
  bool prev_bad = false;
};
// The task's next served request (the task's RNG key `key`): nullopt when
// good, else its fault kind.
std::optional<FaultKind> draw_served(const Prepared& prepared, std::uint64_t key, ServedChain& chain);
// Draw `draw` of the start times' stream for `number` (the agent in a
// coordinated start, the arrival's number in a Poisson one).
double start_uniform(const Prepared& prepared, int replicate, std::uint64_t number, std::uint64_t draw);

// An empty result sized for `prepared`: histograms and series of zeros.
FleetResult empty_result(const Prepared& prepared);

// Runs replicate `index` and adds its counts to `into` (from empty_result).
void run_replicate(const Prepared& prepared, int index, FleetResult& into);

}  // namespace relsim::fleet
