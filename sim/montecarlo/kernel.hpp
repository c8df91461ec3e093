#pragma once
// No kernel.cpp: one source per instruction set, kernel_scalar.cpp, kernel_avx2.cpp and kernel_avx512.cpp.
// Internal: the simple policy's chunk kernels, which simulate() runs when
// every bad request is an attempt (simple policy, no http_400). They make the
// draws of docs/methods.md, as walk_policy_task does, arranged for speed:
// the first draw block of each task of a chunk is made together, in one
// vectorised loop. The tests check their totals against trace_task's, summed
// over every task, on cases that exercise each kernel.
//
//   kernel_scalar.cpp  any CPU, either chain scope
//   kernel_avx2.cpp    fresh scope on x86-64 CPUs with AVX2 (x86-64-v3)
//   kernel_avx512.cpp  fresh scope on CPUs with AVX-512
// Off x86-64 the vector ones are stubs whose CPU checks are false. Every
// kernel makes the same draws and the same totals (Trace tests, and
// Kernels.EveryKernelThisCpuRunsGivesTheSameTotals over each of them).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "relsim/core/faults.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/montecarlo/simulate.hpp"

namespace relsim::detail {

// Tasks whose first draw blocks are made together; also the unit in which
// the fresh scope is shared over threads and ranks (SimConfig::share), under
// every policy. A fixed number: chunking can change which thread runs a
// task, never its draws.
inline constexpr int kChunk = 1024;

// Philox4x32-10 of `count` counters {c0, c1, lo[i], hi[i]} under one key,
// word w of result i to out[w][i]: the first draw blocks of a chunk of tasks
// at once.
using PhiloxMany = void (*)(rng::Key key, std::uint32_t c0, std::uint32_t c1, const std::uint32_t* lo,
                            const std::uint32_t* hi, int count, std::uint32_t* const* out);
// rng::philox4x32_10 counter by counter.
void philox_many_scalar(rng::Key key, std::uint32_t c0, std::uint32_t c1, const std::uint32_t* lo,
                        const std::uint32_t* hi, int count, std::uint32_t* const* out);
// The fastest PhiloxMany this CPU runs: the AVX-512 one where it can, the
// AVX2 one, else philox_many_scalar. All compute the same integers.
PhiloxMany pick_philox_many();
// The AVX2 PhiloxMany where the CPU has AVX2, else nullptr.
PhiloxMany avx2_philox_many();

// A chunk's tasks and block 0 of their chain and kind streams: word w of task
// i's block at chain[w][i], kind[w][i]. One thread's scratch.
struct FirstBlocks {
  alignas(64) std::array<std::uint32_t, kChunk> lo, hi;
  alignas(64) std::array<std::array<std::uint32_t, kChunk>, 4> chain, kind;

  void make(std::uint64_t seed, std::uint64_t first, std::uint64_t stride, int count);
};

// Task i of a chunk, first + stride * i, as two 32-bit counter words.
inline void split_tasks(std::uint64_t first, std::uint64_t stride, int count, std::uint32_t* lo, std::uint32_t* hi) {
  for (int i = 0; i < count; ++i) {
    const std::uint64_t task = first + stride * static_cast<std::uint64_t>(i);
    lo[i] = static_cast<std::uint32_t>(task);
    hi[i] = static_cast<std::uint32_t>(task >> 32);
  }
}

// The task whose counter words are lo, hi.
inline std::uint64_t join_task(std::uint32_t lo, std::uint32_t hi) {
  return static_cast<std::uint64_t>(lo) | (static_cast<std::uint64_t>(hi) << 32);
}

// Counts the kinds of a task's bad requests 4 .. bad - 1 into faults[kind]
// (the first four come with the chunk's kind blocks 0): rare, one block per
// four.
template <class Faults>
inline void count_later_kinds(const DrawScheme& s, std::uint64_t seed, std::uint64_t task, std::int64_t bad,
                              Faults& faults) {
  rng::Block kinds{};
  for (std::int64_t m = 4; m < bad; ++m) {
    if ((m & 3) == 0) kinds = rng::block(seed, rng::Stream::kind, task, static_cast<std::uint64_t>(m) >> 2);
    ++faults[static_cast<std::size_t>(s.kind(kinds[static_cast<std::size_t>(m & 3)]))];
  }
}

// The scalar kernel: runs `count` tasks first, first + stride, ... into
// `tally` (a thread's totals), the first starting with `entry`; `carry` says
// whether each task's entry follows from the previous task's outcome
// (continuous lane) or is always task_start (fresh). Returns the entry of the
// task that would come next.
Entry run_tasks(const DrawScheme& s, std::int64_t n, std::uint64_t seed, std::uint64_t first, std::uint64_t stride,
                int count, Entry entry, bool carry, FirstBlocks& blocks, SimResult& tally);

// The vector kernels' form of a DrawScheme. A uniform u = x 2^-53 (x the
// top 53 bits of the call's 64) is below t exactly when x < ceil(t 2^53), so
// the thresholds become integers and the comparison stays exact.
struct VectorScheme {
  int r = 0;
  std::vector<std::uint64_t> threshold;          // [entry * (r + 1) + j] = ceil(t_j 2^53)
  std::vector<int> levels;                       // kinds of positive weight, in order
  std::array<std::uint32_t, kFaultKinds> cut{};  // DrawScheme::cut below 2^32

  explicit VectorScheme(const DrawScheme& s);
  const std::uint64_t* thresholds(Entry e) const { return threshold.data() + static_cast<int>(e) * (r + 1); }
};

// Scratch for one chunk of the vector kernel, padded for whole-vector loads.
// One thread's.
struct VectorBuffers {
  static constexpr int kPad = 16;
  alignas(64) std::array<std::uint32_t, kChunk + kPad> lo{}, hi{};
  alignas(64) std::array<std::array<std::uint32_t, kChunk + kPad>, 4> chain{}, kind{};
  alignas(64) std::array<std::int32_t, kChunk + kPad> bad{};
  alignas(64) std::array<std::int64_t, kChunk + kPad> requests{};
  std::array<std::uint8_t, kChunk / 8> done{};  // bit l of done[g]: task 8g + l succeeded
  // Tasks with at least one bad request, packed.
  alignas(64) std::array<std::uint32_t, kChunk + kPad> bad_lo{}, bad_hi{};
  alignas(64) std::array<std::int32_t, kChunk + kPad> bad_count{};
};

// The vector kernels' kind counts by level (below[l]: words of kind <=
// levels[l], the last level every word) into tally.faults, differenced.
inline void add_level_counts(const VectorScheme& v, const std::array<std::int64_t, kFaultKinds>& below,
                             SimResult& tally) {
  std::int64_t previous = 0;
  for (std::size_t l = 0; l < v.levels.size(); ++l) {
    tally.faults[static_cast<std::size_t>(v.levels[l])] += below[l] - previous;
    previous = below[l];
  }
}

// The vector kernels' start of a chunk: its tasks first .. first + count - 1
// in b.lo, b.hi and their chain blocks 0 in b.chain, made by `philox`.
inline void chain_blocks_of_chunk(PhiloxMany philox, rng::Key key, std::uint64_t first, int count, VectorBuffers& b) {
  split_tasks(first, 1, count, b.lo.data(), b.hi.data());
  const rng::Counter chain0 = rng::counter_of(rng::Stream::chain, 0, 0);
  std::uint32_t* out[4] = {b.chain[0].data(), b.chain[1].data(), b.chain[2].data(), b.chain[3].data()};
  philox(key, chain0[0], chain0[1], b.lo.data(), b.hi.data(), count, out);
}

// The kind blocks 0 of the `packed` tasks with a bad request (b.bad_lo,
// b.bad_hi) into b.kind, made by `philox`.
inline void kind_blocks_of_packed(PhiloxMany philox, rng::Key key, int packed, VectorBuffers& b) {
  const rng::Counter kind0 = rng::counter_of(rng::Stream::kind, 0, 0);
  std::uint32_t* out[4] = {b.kind[0].data(), b.kind[1].data(), b.kind[2].data(), b.kind[3].data()};
  philox(key, kind0[0], kind0[1], b.bad_lo.data(), b.bad_hi.data(), packed, out);
}

// The vector kernels' end of a chunk of `count` tasks, `packed` of them with
// a bad request: the kinds of bad requests past each task's first four, and
// the request-count histograms from b.done and b.requests (indexed, not
// branched on: whether a task finished is a coin toss).
inline void finish_vector_chunk(const DrawScheme& s, std::uint64_t seed, int count, int packed,
                                const VectorBuffers& b, SimResult& tally) {
  for (int i = 0; i < packed; ++i) {
    const auto at = static_cast<std::size_t>(i);
    if (b.bad_count[at] > 4)
      count_later_kinds(s, seed, join_task(b.bad_lo[at], b.bad_hi[at]), b.bad_count[at], tally.faults);
  }
  if (tally.done_by_requests.empty()) return;
  std::int64_t* const by_outcome[2] = {tally.env_by_requests.data(), tally.done_by_requests.data()};
  for (int i = 0; i < count; ++i) {
    const unsigned done = (b.done[static_cast<std::size_t>(i / 8)] >> (i % 8)) & 1u;
    ++by_outcome[done][b.requests[static_cast<std::size_t>(i)]];
  }
}

// Whether the CPU has what each vector kernel needs: AVX-512F and POPCNT,
// or AVX2 and POPCNT. Always false off x86-64.
bool cpu_has_avx512();
bool cpu_has_avx2();

// Whether a vector kernel runs this scheme at all: r < 16 (the kernels count
// all of a call's thresholds without early exit).
inline bool vector_scheme(const DrawScheme& s) { return s.r < 16; }

// The kernel of the fresh scope for this scheme: `asked`, or for
// Kernel::automatic the fastest this CPU runs; the scalar one when the
// scheme is not a vector scheme. check_available: InputError when the CPU
// lacks the kernel named.
void check_available(Kernel k);
Kernel fresh_kernel(const DrawScheme& s, Kernel asked);

// The vector kernels: fresh tasks first .. first + count - 1 (count <=
// kChunk) into `tally`, eight tasks at a time, every call of the eight made
// at once under lane masks. Only where fresh_kernel chose them.
void fresh_chunk_avx2(const DrawScheme& s, const VectorScheme& v, std::int64_t n, std::uint64_t seed,
                      std::uint64_t first, int count, VectorBuffers& b, SimResult& tally);
void fresh_chunk_avx512(const DrawScheme& s, const VectorScheme& v, std::int64_t n, std::uint64_t seed,
                        std::uint64_t first, int count, VectorBuffers& b, SimResult& tally);

}  // namespace relsim::detail
