#pragma once
// Header only: the generator is inlined into every simulation kernel.
// Counter-based randomness for the simulator (docs/model.md, Monte Carlo; never a shared stateful engine):
// every number a task uses is Philox4x32-10 (Salmon, Moraes, Dror & Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC 2011) of a counter made
// of (task, stream, draw block) under a key made of the seed. No state is
// carried from one draw to the next, so any thread, chunk or rank can make
// any task's draws, and a plan generator can remake them request by request.
// docs/methods.md spells the scheme out.
#include <array>
#include <cstdint>

namespace relsim::rng {

// The reference experiment's seed, and the default seed of every command.
inline constexpr std::uint64_t kReferenceSeed = 20261001;

using Counter = std::array<std::uint32_t, 4>;
using Key = std::array<std::uint32_t, 2>;
using Block = std::array<std::uint32_t, 4>;

// Named streams: a task's draws of one purpose never collide with another's.
// The id sits in the top 8 bits of counter word 1.
enum class Stream : std::uint32_t {
  chain = 0,  // one 53-bit uniform per model call: how many of its attempts are bad
  kind = 1,   // one 32-bit word per bad request: its fault kind
  jitter = 2, // the client's backoff jitter (client.hpp); time mode's simulator: one uniform per jittered wait
  // Time mode's simulator (simulate_time.hpp): the continuous-time chain's
  // sojourns and jumps, and whether a request in a state that is bad only
  // with some probability is bad.
  time_chain = 3,
  emission = 4,
  // The mock server's outage mode (core/outage.hpp): the on/off schedule's
  // first state and sojourns.
  outage = 5,
  // The fleet's event simulation (fleet/fleet.hpp): each task's served
  // requests (good or bad), their fault kinds, and the agents' start times.
  fleet_chain = 6,
  fleet_kind = 7,
  fleet_start = 8,
  // BugHunt's page loads (bughunt/bughunt_plan.hpp): whether each load of a run
  // fails, and how.
  page_load = 9,
  page_fault = 10,
  // The MCP tools server's calls (tools/server_faults.hpp): whether call k
  // fails, and how.
  tool_call = 11,
  tool_fault = 12,
  // Tool calls (core/tool_faults.hpp): two uniforms per tool call, indexed by
  // the model call it follows: its fault, and whether an undo of a partial
  // write fails (tool_uniform below).
  tool_stage = 13,
  // relsim proxy's chain mode (core/request_chain.hpp): one uniform per
  // request of a task, whether it is bad.
  request_chain = 14,
  // The MCP tools server's shared result queues (tools/result_queue.hpp), in
  // order shuffled: one uniform per take from a queue, which pending result.
  tool_queue = 15,
  // A fallback to a second provider (core/fallback.hpp; the simulator's
  // montecarlo/fallback_walk.hpp): three uniforms per request of a task,
  // whether the first provider's, the second's and the shared outage's
  // chains are bad at it, and one word per request for the kind of a bad one.
  fallback_chain = 16,
  fallback_kind = 17,
  // Time mode's simulator with drawn durations (TimeModel::request_law): one
  // uniform per request whose seconds are drawn, which recorded duration.
  duration = 18,
  // 19 and up: free.
};

// Philox4x32's multipliers and Weyl key increments (Salmon et al. 2011,
// table 2); the vector kernels use these same names.
inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

// Philox4x32 with 10 rounds, written out so that a loop over counters
// vectorises; bit-identical to Random123's philox4x32 (pinned by the
// known-answer test in tests/unit/simulate_test.cpp).
constexpr Block philox4x32_10(Counter ctr, Key key) {
  constexpr std::uint64_t kM0 = kPhiloxM0, kM1 = kPhiloxM1;
  constexpr std::uint32_t kW0 = kPhiloxW0, kW1 = kPhiloxW1;
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = kM0 * ctr[0];
    const std::uint64_t p1 = kM1 * ctr[2];
    ctr = {static_cast<std::uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<std::uint32_t>(p0)};
    key = {key[0] + kW0, key[1] + kW1};
  }
  return ctr;
}

// The key: the 64-bit seed, low word first.
constexpr Key key_of(std::uint64_t seed) {
  return {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
}

// The counter: word 0 the low 32 bits of the draw block, word 1 the stream in
// its top 8 bits and the block's bits 32..55 below them, words 2 and 3 the
// 64-bit task index, low word first.
constexpr Counter counter_of(Stream stream, std::uint64_t task, std::uint64_t block) {
  return {static_cast<std::uint32_t>(block),
          (static_cast<std::uint32_t>(stream) << 24) | static_cast<std::uint32_t>((block >> 32) & 0xFFFFFFu),
          static_cast<std::uint32_t>(task), static_cast<std::uint32_t>(task >> 32)};
}

constexpr Block block(std::uint64_t seed, Stream stream, std::uint64_t task, std::uint64_t index) {
  return philox4x32_10(counter_of(stream, task, index), key_of(seed));
}

// A double in [0, 1) on the grid of 2^-53 from two words: the top 53 bits of
// (hi << 32 | lo). Every value k 2^-53 has probability 2^-53 exactly.
constexpr double u53(std::uint32_t lo, std::uint32_t hi) {
  const std::uint64_t x = (static_cast<std::uint64_t>(hi) << 32) | lo;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

// Draw `index` of a stream as a uniform: two per block, words (0, 1) then (2, 3).
constexpr double uniform(std::uint64_t seed, Stream stream, std::uint64_t task, std::uint64_t index) {
  const Block b = block(seed, stream, task, index / 2);
  const unsigned h = static_cast<unsigned>(index % 2) * 2;
  return u53(b[h], b[h + 1]);
}

// Draw `index` of a stream as one 32-bit word: four per block, in order.
constexpr std::uint32_t word(std::uint64_t seed, Stream stream, std::uint64_t task, std::uint64_t index) {
  return block(seed, stream, task, index / 4)[index % 4];
}

// The simulator's two draws, by name.
// The uniform of model call `call` (0-based) of `task`.
constexpr double call_uniform(std::uint64_t seed, std::uint64_t task, std::uint64_t call) {
  return uniform(seed, Stream::chain, task, call);
}
// The word that picks the kind of the task's `bad`-th bad request (0-based,
// counted over the whole task).
constexpr std::uint32_t kind_word(std::uint64_t seed, std::uint64_t task, std::uint64_t bad) {
  return word(seed, Stream::kind, task, bad);
}

// Uniform `draw` (0: the fault, 1: the undo) of the tool call that follows
// model call `call` (0-based) of `task`.
constexpr double tool_uniform(std::uint64_t seed, std::uint64_t task, std::uint64_t call, unsigned draw) {
  return uniform(seed, Stream::tool_stage, task, 2 * call + draw);
}

// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): adds the golden gamma to `state` and returns
// the finaliser's bijective mix of it. Used where a fixed, cheap hash of a
// few integers is wanted (a sweep point's seed, the server's garbage bytes),
// never for the simulation's draws, which are Philox.
inline constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += kGoldenGamma);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace relsim::rng
