#pragma once
// Seeded Monte Carlo of the simple policy (SPEC section 4). Randomness is a
// pure function of (seed, task index, stream, draw index) through
// Philox4x32-10 (Salmon et al. 2011), so results are byte-identical for any
// thread count. Totals are integers.
#include <array>
#include <cstdint>
#include <vector>

#include "relsim/faults.hpp"
#include "relsim/model.hpp"
#include "relsim/policy.hpp"

namespace relsim {

inline constexpr std::int64_t kMaxTasks = 1'000'000'000'000;  // 10^12

struct SimConfig {
  std::int64_t tasks = 400;
  std::uint64_t seed = 20261001;
  // Continuous chain scope: tasks are split into this many independent
  // chains, task i in lane i mod lanes, each lane's chain starting from the
  // stationary distribution and running on from task to task. Never tied to
  // the thread count. Ignored for the fresh scope.
  int lanes = 16;
  int threads = 0;  // 0: OpenMP's default
  FaultWeights kinds = FaultWeights::in_stream_uniform();
};

struct SimResult {
  std::int64_t tasks = 0;
  std::int64_t successes = 0;
  std::int64_t requests = 0;                         // requests sent, all tasks
  std::array<std::int64_t, kFaultKinds> faults{};    // bad requests by kind
  // Tasks by request count: done_by_requests[m], env_by_requests[m], m in 0 .. n(r+1)
  // (left empty when n(r+1) > 10^6).
  std::vector<std::int64_t> done_by_requests, env_by_requests;
};

// Throws InputError for an invalid model, policy or config.
SimResult simulate(const Model& model, const Policy& policy, const SimConfig& config);

}  // namespace relsim
