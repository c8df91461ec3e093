#include "relsim/montecarlo/simulate.hpp"

#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/core/rng.hpp"
#include "montecarlo/policy_walk.hpp"

namespace relsim {
namespace {

// Tasks whose first draw blocks are made together, in one vectorised loop.
// A fixed number: chunking can change which thread runs a task, never its draws.
constexpr int kChunk = 1024;

struct TaskEnd {
  Outcome outcome;
  std::int64_t requests;
  std::int64_t calls_succeeded;
};

// The simple policy over one task's draws. `src.call(c)` is the uniform of
// call c, `src.kind(m)` the kind word of the task's m-th bad request. Calls
// on_bad(call, attempt, kind) for each bad request and on_good(call, attempt)
// for each good one, in the order the requests are sent.
template <class Source, class OnBad, class OnGood>
inline TaskEnd walk_task(const DrawScheme& s, std::int64_t n, Entry entry, Source& src, OnBad&& on_bad,
                         OnGood&& on_good) {
  std::int64_t requests = 0, bad = 0;
  for (std::int64_t c = 0; c < n; ++c) {
    const int a = s.bad_run(entry, src.call(c));
    for (int j = 0; j < a; ++j) on_bad(c, j, s.kind(src.kind(bad++)));
    if (a > s.r) return {Outcome::env_error, requests + a, c};
    on_good(c, a);
    requests += a + 1;
    entry = Entry::after_good;
  }
  return {Outcome::done, requests, n};
}

// Draws straight from rng.hpp, one Philox block per use: the reference path,
// used by trace_task.
struct ScalarSource {
  std::uint64_t seed, task;
  double call(std::int64_t c) const { return rng::call_uniform(seed, task, static_cast<std::uint64_t>(c)); }
  std::uint32_t kind(std::int64_t m) const { return rng::kind_word(seed, task, static_cast<std::uint64_t>(m)); }
};

// Philox4x32-10 of `count` counters {c0, c1, lo[i], hi[i]} under one key,
// word w of result i to out[w][i]: the first draw blocks of a chunk of tasks
// at once. The AVX-512 version computes the same integers as
// rng::philox4x32_10, 16 counters per vector (each round's 32x32 -> 64-bit
// products as even/odd vpmuludq pairs); which one runs depends on the CPU
// alone, and the tail of a chunk always takes the scalar one.
using PhiloxMany = void (*)(rng::Key, std::uint32_t, std::uint32_t, const std::uint32_t*, const std::uint32_t*, int,
                            std::uint32_t* const*);

void philox_many_scalar(rng::Key key, std::uint32_t c0, std::uint32_t c1, const std::uint32_t* lo,
                        const std::uint32_t* hi, int count, std::uint32_t* const* out) {
  for (int i = 0; i < count; ++i) {
    const rng::Block b = rng::philox4x32_10({c0, c1, lo[i], hi[i]}, key);
    for (int w = 0; w < 4; ++w) out[w][i] = b[static_cast<std::size_t>(w)];
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RELSIM_X86_DISPATCH 1
// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_* placeholders; the vector helpers below are internal,
// so the ABI note about passing vectors (-Wpsabi) does not concern them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wpsabi"
constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

__attribute__((target("avx512f"))) inline void philox_rounds_avx512(__m512i& x0, __m512i& x1, __m512i& x2,
                                                                    __m512i& x3, rng::Key key) {
  const __m512i m0 = _mm512_set1_epi64(kPhiloxM0), m1 = _mm512_set1_epi64(kPhiloxM1);
  constexpr __mmask16 kOdd = 0xAAAA;
  std::uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    const __m512i e0 = _mm512_mul_epu32(x0, m0), o0 = _mm512_mul_epu32(_mm512_srli_epi64(x0, 32), m0);
    const __m512i e1 = _mm512_mul_epu32(x2, m1), o1 = _mm512_mul_epu32(_mm512_srli_epi64(x2, 32), m1);
    const __m512i hi0 = _mm512_mask_blend_epi32(kOdd, _mm512_srli_epi64(e0, 32), o0);
    const __m512i lo0 = _mm512_mask_blend_epi32(kOdd, e0, _mm512_slli_epi64(o0, 32));
    const __m512i hi1 = _mm512_mask_blend_epi32(kOdd, _mm512_srli_epi64(e1, 32), o1);
    const __m512i lo1 = _mm512_mask_blend_epi32(kOdd, e1, _mm512_slli_epi64(o1, 32));
    x0 = _mm512_ternarylogic_epi32(hi1, x1, _mm512_set1_epi32(static_cast<int>(k0)), 0x96);  // a ^ b ^ c
    x1 = lo1;
    x2 = _mm512_ternarylogic_epi32(hi0, x3, _mm512_set1_epi32(static_cast<int>(k1)), 0x96);
    x3 = lo0;
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
}

__attribute__((target("avx512f"))) void philox_many_avx512(rng::Key key, std::uint32_t c0, std::uint32_t c1,
                                                            const std::uint32_t* lo, const std::uint32_t* hi,
                                                            int count, std::uint32_t* const* out) {
  int i = 0;
  for (; i + 16 <= count; i += 16) {
    __m512i x0 = _mm512_set1_epi32(static_cast<int>(c0)), x1 = _mm512_set1_epi32(static_cast<int>(c1));
    __m512i x2 = _mm512_loadu_si512(lo + i), x3 = _mm512_loadu_si512(hi + i);
    philox_rounds_avx512(x0, x1, x2, x3, key);
    _mm512_storeu_si512(out[0] + i, x0);
    _mm512_storeu_si512(out[1] + i, x1);
    _mm512_storeu_si512(out[2] + i, x2);
    _mm512_storeu_si512(out[3] + i, x3);
  }
  std::uint32_t* rest[4] = {out[0] + i, out[1] + i, out[2] + i, out[3] + i};
  philox_many_scalar(key, c0, c1, lo + i, hi + i, count - i, rest);
}
#pragma GCC diagnostic pop
#endif

PhiloxMany pick_philox_many() {
#ifdef RELSIM_X86_DISPATCH
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return philox_many_avx512;
#endif
  return philox_many_scalar;
}

// A chunk's tasks and block 0 of their chain and kind streams: word w of task
// i's block at chain[w][i], kind[w][i].
struct FirstBlocks {
  alignas(64) std::array<std::uint32_t, kChunk> lo, hi;
  alignas(64) std::array<std::array<std::uint32_t, kChunk>, 4> chain, kind;

  void make(std::uint64_t seed, std::uint64_t first, std::uint64_t stride, int count) {
    static const PhiloxMany philox_many = pick_philox_many();
    for (int i = 0; i < count; ++i) {
      const std::uint64_t task = first + stride * static_cast<std::uint64_t>(i);
      lo[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(task);
      hi[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(task >> 32);
    }
    const rng::Key key = rng::key_of(seed);
    const rng::Counter c = rng::counter_of(rng::Stream::chain, 0, 0), k = rng::counter_of(rng::Stream::kind, 0, 0);
    std::uint32_t* chain_out[4] = {chain[0].data(), chain[1].data(), chain[2].data(), chain[3].data()};
    std::uint32_t* kind_out[4] = {kind[0].data(), kind[1].data(), kind[2].data(), kind[3].data()};
    philox_many(key, c[0], c[1], lo.data(), hi.data(), count, chain_out);
    philox_many(key, k[0], k[1], lo.data(), hi.data(), count, kind_out);
  }
};

// One thread's integer totals; merged in any order, they give the same sums.
struct Tally {
  std::int64_t tasks = 0, successes = 0, requests = 0, calls_succeeded = 0;
  std::array<std::int64_t, kFaultKinds + 1> faults{};  // the extra slot takes masked-off kind draws
  std::array<std::int64_t, 2> pairs_after{}, done_after{};
  std::vector<std::int64_t> done, env;                 // by request count, when kept

  explicit Tally(std::size_t bins) : done(bins, 0), env(bins, 0) {}
  void merge_into(SimResult& out) const {
    out.tasks += tasks;
    out.successes += successes;
    out.requests += requests;
    out.calls_succeeded += calls_succeeded;
    for (std::size_t i = 0; i < 2; ++i) {
      out.pairs_after[i] += pairs_after[i];
      out.done_after[i] += done_after[i];
    }
    for (int k = 0; k < kFaultKinds; ++k) out.faults[static_cast<std::size_t>(k)] += faults[static_cast<std::size_t>(k)];
    for (std::size_t m = 0; m < done.size(); ++m) {
      out.done_by_requests[m] += done[m];
      out.env_by_requests[m] += env[m];
    }
  }
};

// The simulator's own walk over a chunk: the same draws and the same rule as
// walk_task (tests check the two against each other task by task), arranged
// for speed. A call's bad run is a count of thresholds above u, without
// branches when r is small; the kinds of a task's first four bad requests
// come from its kind block 0 whether or not they are needed, the unneeded
// ones counted in a slot that is thrown away.
template <bool kSmallR>
Entry run_chunk(const DrawScheme& s, std::int64_t n, std::uint64_t seed, const FirstBlocks& f, int count,
                Entry entry, bool carry, Tally& tally) {
  const int r = s.r;
  const bool histogram = !tally.done.empty();
  constexpr std::size_t kDiscard = kFaultKinds;
  for (int i = 0; i < count; ++i) {
    const auto at = static_cast<std::size_t>(i);
    const std::uint64_t task = static_cast<std::uint64_t>(f.lo[at]) | (static_cast<std::uint64_t>(f.hi[at]) << 32);
    rng::Block chain = {f.chain[0][at], f.chain[1][at], f.chain[2][at], f.chain[3][at]};
    std::int64_t requests = 0, bad = 0, c = 0;
    bool failed = false;
    const double* t = s.thresholds(entry);
    for (; c < n; ++c) {
      if (c >= 2 && (c & 1) == 0) chain = rng::block(seed, rng::Stream::chain, task, static_cast<std::uint64_t>(c) >> 1);
      const unsigned h = static_cast<unsigned>(c & 1) * 2;
      const double u = rng::u53(chain[h], chain[h + 1]);
      int a = 0;
      if constexpr (kSmallR) {
        for (int j = 0; j <= r; ++j) a += u < t[j];
      } else {
        while (a <= r && u < t[a]) ++a;
      }
      bad += a;
      if (a > r) {
        failed = true;
        requests += a;
        break;
      }
      requests += a + 1;
      t = s.thresholds(Entry::after_good);
    }
    for (int m = 0; m < 4; ++m) {
      const auto kind = static_cast<std::size_t>(s.kind(f.kind[static_cast<std::size_t>(m)][at]));
      ++tally.faults[m < bad ? kind : kDiscard];
    }
    if (bad > 4) {
      rng::Block kinds{};
      for (std::int64_t m = 4; m < bad; ++m) {
        if ((m & 3) == 0) kinds = rng::block(seed, rng::Stream::kind, task, static_cast<std::uint64_t>(m) >> 2);
        ++tally.faults[static_cast<std::size_t>(s.kind(kinds[static_cast<std::size_t>(m & 3)]))];
      }
    }
    tally.successes += !failed;
    tally.requests += requests;
    tally.calls_succeeded += c;
    if (histogram) ++(failed ? tally.env : tally.done)[static_cast<std::size_t>(requests)];
    if (carry) {
      if (entry != Entry::lane_start) {
        const std::size_t before = entry == Entry::after_good ? 1 : 0;
        ++tally.pairs_after[before];
        tally.done_after[before] += !failed;
      }
      entry = failed ? Entry::after_bad : Entry::after_good;
    }
  }
  tally.tasks += count;
  return entry;
}

// Runs `count` tasks first, first + stride, ... starting with `entry`;
// `carry` says whether each task's entry follows from the previous task's
// outcome (continuous lane) or is always task_start (fresh).
Entry run_tasks(const DrawScheme& s, std::int64_t n, std::uint64_t seed, std::uint64_t first, std::uint64_t stride,
                int count, Entry entry, bool carry, FirstBlocks& blocks, Tally& tally) {
  blocks.make(seed, first, stride, count);
  return s.r < 16 ? run_chunk<true>(s, n, seed, blocks, count, entry, carry, tally)
                  : run_chunk<false>(s, n, seed, blocks, count, entry, carry, tally);
}

#ifdef RELSIM_X86_DISPATCH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wpsabi"
// The fresh-scope kernel for CPUs with AVX-512: eight tasks per vector of
// 64-bit lanes, every call of the eight made at once under lane masks. It
// makes the same draws and applies the same rule as walk_task; the tests
// compare it with trace_task task by task. A uniform u = x 2^-53 (x the top
// 53 bits of the call's 64) is below t exactly when x < ceil(t 2^53), so the
// thresholds become integers and the comparison stays exact.
struct VectorScheme {
  int r = 0;
  std::vector<std::uint64_t> threshold;    // [entry * (r + 1) + j] = ceil(t_j 2^53)
  std::vector<int> levels;                 // kinds of positive weight, in order
  std::array<std::uint32_t, kFaultKinds> cut{};  // DrawScheme::cut below 2^32

  explicit VectorScheme(const DrawScheme& s) : r(s.r), threshold(s.threshold.size()) {
    for (std::size_t i = 0; i < threshold.size(); ++i)
      threshold[i] = static_cast<std::uint64_t>(std::ceil(std::ldexp(s.threshold[i], 53)));
    std::uint64_t previous = 0;
    for (int k = 0; k < kFaultKinds; ++k) {
      const std::uint64_t c = s.cut[static_cast<std::size_t>(k)];
      if (c > previous) levels.push_back(k);
      cut[static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(std::min<std::uint64_t>(c, 0xFFFFFFFFu));
      previous = c;
    }
  }
  const std::uint64_t* thresholds(Entry e) const { return threshold.data() + static_cast<int>(e) * (r + 1); }
};

// Scratch for one chunk of the vector kernel, padded for whole-vector loads.
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

// Eight 32-bit words widened to 64-bit lanes.
__attribute__((target("avx512f"))) inline __m512i widen8(const std::uint32_t* p) {
  return _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

__attribute__((target("avx512f,popcnt"))) void fresh_chunk_avx512(const DrawScheme& s, const VectorScheme& v,
                                                                   std::int64_t n, std::uint64_t seed,
                                                                   std::uint64_t first, int count,
                                                                   VectorBuffers& b, Tally& tally) {
  const rng::Key key = rng::key_of(seed);
  for (int i = 0; i < count; ++i) {
    const std::uint64_t task = first + static_cast<std::uint64_t>(i);
    b.lo[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(task);
    b.hi[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(task >> 32);
  }
  const rng::Counter chain0 = rng::counter_of(rng::Stream::chain, 0, 0);
  const rng::Counter kind0 = rng::counter_of(rng::Stream::kind, 0, 0);
  {
    std::uint32_t* out[4] = {b.chain[0].data(), b.chain[1].data(), b.chain[2].data(), b.chain[3].data()};
    philox_many_avx512(key, chain0[0], chain0[1], b.lo.data(), b.hi.data(), count, out);
  }

  // Calls, eight tasks at a time.
  const int r = v.r;
  const __m512i one = _mm512_set1_epi64(1), r_vec = _mm512_set1_epi64(r);
  __m512i request_sum = _mm512_setzero_si512(), call_sum = _mm512_setzero_si512();
  std::int64_t successes = 0;
  for (int i = 0; i < count; i += 8) {
    const __mmask8 valid = count - i >= 8 ? __mmask8(0xFF) : static_cast<__mmask8>((1u << (count - i)) - 1u);
    __m512i w0 = widen8(b.chain[0].data() + i), w1 = widen8(b.chain[1].data() + i);
    __m512i w2 = widen8(b.chain[2].data() + i), w3 = widen8(b.chain[3].data() + i);
    __m512i bad = _mm512_setzero_si512(), requests = _mm512_setzero_si512(), calls = _mm512_setzero_si512();
    __mmask8 active = valid;
    const std::uint64_t* t = v.thresholds(Entry::task_start);
    for (std::int64_t c = 0; c < n && active; ++c) {
      if (c >= 2 && (c & 1) == 0) {
        // Chain block c / 2 of these eight tasks (lanes 8..15 unused).
        const auto block = static_cast<std::uint64_t>(c) >> 1;
        const rng::Counter ctr = rng::counter_of(rng::Stream::chain, 0, block);
        __m512i x0 = _mm512_set1_epi32(static_cast<int>(ctr[0])), x1 = _mm512_set1_epi32(static_cast<int>(ctr[1]));
        __m512i x2 = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.lo.data() + i)));
        __m512i x3 = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.hi.data() + i)));
        philox_rounds_avx512(x0, x1, x2, x3, key);
        w0 = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(x0));
        w1 = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(x1));
        w2 = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(x2));
        w3 = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(x3));
      }
      const __m512i x = (c & 1) ? _mm512_srli_epi64(_mm512_or_si512(_mm512_slli_epi64(w3, 32), w2), 11)
                                : _mm512_srli_epi64(_mm512_or_si512(_mm512_slli_epi64(w1, 32), w0), 11);
      __m512i a = _mm512_setzero_si512();
      for (int j = 0; j <= r; ++j)
        a = _mm512_mask_add_epi64(a, _mm512_cmplt_epu64_mask(x, _mm512_set1_epi64(static_cast<long long>(t[j]))), a,
                                  one);
      const __mmask8 ok = active & _mm512_cmple_epu64_mask(a, r_vec);
      bad = _mm512_mask_add_epi64(bad, active, bad, a);
      requests = _mm512_mask_add_epi64(requests, active, requests, a);
      requests = _mm512_mask_add_epi64(requests, ok, requests, one);
      calls = _mm512_mask_add_epi64(calls, ok, calls, one);
      active = ok;
      t = v.thresholds(Entry::after_good);
    }
    successes += _mm_popcnt_u32(active);
    request_sum = _mm512_add_epi64(request_sum, requests);
    call_sum = _mm512_add_epi64(call_sum, calls);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b.bad.data() + i), _mm512_cvtepi64_epi32(bad));
    _mm512_storeu_si512(b.requests.data() + i, requests);
    b.done[static_cast<std::size_t>(i / 8)] = active;
  }
  tally.tasks += count;
  tally.successes += successes;
  tally.requests += _mm512_reduce_add_epi64(request_sum);
  tally.calls_succeeded += _mm512_reduce_add_epi64(call_sum);

  // Kinds: only tasks with a bad request need their kind block, so those are
  // packed first and their blocks made together.
  int packed = 0;
  for (int i = 0; i < count; i += 16) {
    const __mmask16 valid = count - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (count - i)) - 1u);
    const __m512i bad = _mm512_loadu_si512(b.bad.data() + i);
    const __mmask16 has = valid & _mm512_cmpgt_epi32_mask(bad, _mm512_setzero_si512());
    _mm512_mask_compressstoreu_epi32(b.bad_lo.data() + packed, has, _mm512_loadu_si512(b.lo.data() + i));
    _mm512_mask_compressstoreu_epi32(b.bad_hi.data() + packed, has, _mm512_loadu_si512(b.hi.data() + i));
    _mm512_mask_compressstoreu_epi32(b.bad_count.data() + packed, has, bad);
    packed += _mm_popcnt_u32(has);
  }
  {
    std::uint32_t* out[4] = {b.kind[0].data(), b.kind[1].data(), b.kind[2].data(), b.kind[3].data()};
    philox_many_avx512(key, kind0[0], kind0[1], b.bad_lo.data(), b.bad_hi.data(), packed, out);
  }
  // below[l]: words of kind <= levels[l]; the last level is every word.
  std::array<std::int64_t, kFaultKinds> below{};
  const int levels = static_cast<int>(v.levels.size());
  for (int i = 0; i < packed; i += 16) {
    const __mmask16 valid = packed - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (packed - i)) - 1u);
    const __m512i bad = _mm512_loadu_si512(b.bad_count.data() + i);
    for (int m = 0; m < 4; ++m) {
      const __mmask16 used = valid & _mm512_cmpgt_epi32_mask(bad, _mm512_set1_epi32(m));
      const __m512i w = _mm512_loadu_si512(b.kind[static_cast<std::size_t>(m)].data() + i);
      for (int l = 0; l + 1 < levels; ++l) {
        const auto cut = static_cast<int>(v.cut[static_cast<std::size_t>(v.levels[static_cast<std::size_t>(l)])]);
        below[static_cast<std::size_t>(l)] += _mm_popcnt_u32(used & _mm512_cmplt_epu32_mask(w, _mm512_set1_epi32(cut)));
      }
      below[static_cast<std::size_t>(levels - 1)] += _mm_popcnt_u32(used);
    }
  }
  std::int64_t previous = 0;
  for (int l = 0; l < levels; ++l) {
    tally.faults[static_cast<std::size_t>(v.levels[static_cast<std::size_t>(l)])] +=
        below[static_cast<std::size_t>(l)] - previous;
    previous = below[static_cast<std::size_t>(l)];
  }
  // The fifth bad request of a task on: rare, one block per four.
  for (int i = 0; i < packed; ++i) {
    const std::int64_t bad = b.bad_count[static_cast<std::size_t>(i)];
    if (bad <= 4) continue;
    const std::uint64_t task = static_cast<std::uint64_t>(b.bad_lo[static_cast<std::size_t>(i)]) |
                               (static_cast<std::uint64_t>(b.bad_hi[static_cast<std::size_t>(i)]) << 32);
    rng::Block kinds{};
    for (std::int64_t m = 4; m < bad; ++m) {
      if ((m & 3) == 0) kinds = rng::block(seed, rng::Stream::kind, task, static_cast<std::uint64_t>(m) >> 2);
      ++tally.faults[static_cast<std::size_t>(s.kind(kinds[static_cast<std::size_t>(m & 3)]))];
    }
  }

  if (!tally.done.empty()) {
    for (int i = 0; i < count; ++i) {
      const bool done = (b.done[static_cast<std::size_t>(i / 8)] >> (i % 8)) & 1u;
      ++(done ? tally.done : tally.env)[static_cast<std::size_t>(b.requests[static_cast<std::size_t>(i)])];
    }
  }
}

bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt");
}
#pragma GCC diagnostic pop
#endif


int thread_count(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

}  // namespace

void validate(const SimConfig& c) {
  if (c.tasks < 1 || c.tasks > kMaxTasks)
    throw InputError(fmt::format("tasks = {} is out of range: tasks must be in [1, {}]", c.tasks, kMaxTasks));
  if (c.lanes < 1 || c.lanes > kMaxLanes)
    throw InputError(fmt::format("lanes = {} is out of range: lanes must be in [1, {}]", c.lanes, kMaxLanes));
  if (c.threads < 0 || c.threads > kMaxThreads)
    throw InputError(fmt::format("threads = {} is out of range: threads must be in [0, {}] (0: OpenMP's default)",
                                 c.threads, kMaxThreads));
  double total = 0.0;
  for (const double w : c.kinds.weight) {
    if (!(w >= 0.0 && std::isfinite(w)))
      throw InputError(fmt::format("fault kind weight {} is out of range: weights must be finite and >= 0", w));
    total += w;
  }
  if (!(total > 0.0 && std::isfinite(total)))
    throw InputError(fmt::format("fault kind weights total {}: the total must be finite and > 0", total));
}

double SimResult::lag_correlation() const {
  if (pairs_after[0] == 0 || pairs_after[1] == 0) return 0.0;
  return static_cast<double>(done_after[1]) / static_cast<double>(pairs_after[1]) -
         static_cast<double>(done_after[0]) / static_cast<double>(pairs_after[0]);
}

double SimResult::design_effect() const {
  // Clamped so that a run with almost no failures (or successes) in a lane
  // cannot make the effective sample vanish.
  const double lambda = std::clamp(lag_correlation(), -0.99, 0.99);
  return (1.0 + lambda) / (1.0 - lambda);
}

std::int64_t SimResult::bad_requests() const {
  std::int64_t sum = 0;
  for (const auto x : faults) sum += x;
  return sum;
}

DrawScheme DrawScheme::make(const Model& model, const Policy& policy, const FaultWeights& kinds) {
  validate(policy);
  const Chain chain = gilbert_chain(model);  // validates the model
  DrawScheme s;
  // Thresholds for as many requests as one call of this policy can send;
  // t_j does not depend on that number, so a plan drawn for a larger one
  // agrees with the simple policy's draws request for request.
  const int width = policy.max_requests_per_call();
  s.r = width - 1;
  const double stay_bad = chain.retry(1, 1);
  std::array<double, kEntries> first_bad{};
  first_bad[static_cast<int>(Entry::task_start)] = chain.initial(1);
  first_bad[static_cast<int>(Entry::after_good)] = chain.gap(0, 1);
  first_bad[static_cast<int>(Entry::after_bad)] = chain.gap(1, 1);
  // continuous_start walks all n calls; the fresh scope never enters a lane.
  first_bad[static_cast<int>(Entry::lane_start)] =
      model.chain == ChainScope::continuous ? continuous_start(chain, policy, kinds)(1) : chain.initial(1);
  s.threshold.resize(static_cast<std::size_t>(kEntries * width));
  for (int e = 0; e < kEntries; ++e) {
    double t = first_bad[static_cast<std::size_t>(e)];
    for (int j = 0; j < width; ++j) {
      s.threshold[static_cast<std::size_t>(e * width + j)] = t;
      t *= stay_bad;
    }
  }

  double total = 0.0;
  for (const double w : kinds.weight) total += w;
  if (!(total > 0.0 && std::isfinite(total)))
    throw InputError(fmt::format("fault kind weights total {}: the total must be finite and > 0", total));
  int last = 0;
  for (int k = 0; k < kFaultKinds; ++k)
    if (kinds.weight[static_cast<std::size_t>(k)] > 0.0) last = k;
  double cum = 0.0;
  for (int k = 0; k < kFaultKinds; ++k) {
    cum += kinds.weight[static_cast<std::size_t>(k)];
    s.cut[static_cast<std::size_t>(k)] =
        k >= last ? (std::uint64_t{1} << 32)
                  : static_cast<std::uint64_t>(std::llround(std::ldexp(std::min(1.0, cum / total), 32)));
  }
  int k = 0;
  for (int i = 0; i < 256; ++i) {
    const std::uint64_t word = static_cast<std::uint64_t>(i) << 24;
    while (word >= s.cut[static_cast<std::size_t>(k)]) ++k;
    s.guide[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(k);
  }
  return s;
}

namespace {

// Every integer of a result, in one fixed order, for the sum over ranks.
std::vector<std::int64_t> pack(const SimResult& r) {
  std::vector<std::int64_t> v = {r.tasks, r.successes, r.requests, r.calls_succeeded};
  v.insert(v.end(), r.faults.begin(), r.faults.end());
  v.insert(v.end(), r.outcomes.begin(), r.outcomes.end());
  v.insert(v.end(), r.pairs_after.begin(), r.pairs_after.end());
  v.insert(v.end(), r.done_after.begin(), r.done_after.end());
  v.insert(v.end(), r.done_by_requests.begin(), r.done_by_requests.end());
  v.insert(v.end(), r.env_by_requests.begin(), r.env_by_requests.end());
  return v;
}

void unpack(const std::vector<std::int64_t>& v, SimResult& r) {
  auto at = v.begin();
  for (std::int64_t* x : {&r.tasks, &r.successes, &r.requests, &r.calls_succeeded}) *x = *at++;
  const auto take = [&](auto& range) {
    std::copy_n(at, range.size(), range.begin());
    at += static_cast<std::ptrdiff_t>(range.size());
  };
  take(r.faults);
  take(r.outcomes);
  take(r.pairs_after);
  take(r.done_after);
  take(r.done_by_requests);
  take(r.env_by_requests);
  RELSIM_ASSERT(at == v.end());
}

SimResult simulate_share(const Model& model, const Policy& policy, const SimConfig& config);

}  // namespace

SimResult simulate(const Model& model, const Policy& policy, const SimConfig& config) {
  SimResult result = simulate_share(model, policy, config);
  if (!config.share.single()) {
    std::vector<std::int64_t> totals = pack(result);
    parallel::sum_all(totals, config.share);
    unpack(totals, result);
  }
  RELSIM_ASSERT(result.tasks == config.tasks);
  return result;
}

namespace {

SimResult simulate_share(const Model& model, const Policy& policy, const SimConfig& config) {
  validate(model);
  validate(policy);
  validate(config);
  const DrawScheme scheme = DrawScheme::make(model, policy, config.kinds);
  // The kernels below know the simple policy's rule only: every bad request
  // is an attempt. A 400 ends a task as harness_error under every policy, so
  // with http_400 in the mix the general walk runs instead.
  if (policy.kind != PolicyKind::simple || config.kinds.weight[static_cast<std::size_t>(FaultKind::http_400)] > 0.0)
    return detail::simulate_policy(model, policy, config, scheme);
  const std::int64_t n = policy.n;
  const bool keep_histogram = policy.max_requests() <= kMaxHistogramRequests;
  const std::size_t bins = keep_histogram ? static_cast<std::size_t>(policy.max_requests() + 1) : 0;

  SimResult result;
  result.done_by_requests.assign(bins, 0);
  result.env_by_requests.assign(bins, 0);
  std::atomic<std::int64_t> finished{0};
  const auto report = [&](std::int64_t count) {
    const std::int64_t now = finished.fetch_add(count, std::memory_order_relaxed) + count;
    if (config.progress && omp_get_thread_num() == 0) config.progress(now);
  };
  const std::uint64_t seed = config.seed;

  if (model.chain == ChainScope::fresh) {
#ifdef RELSIM_X86_DISPATCH
    // The vector kernel counts a call's thresholds without early exit, so it
    // takes small r only; its request counts are 64-bit lanes.
    static const bool avx512 = has_avx512();
    std::unique_ptr<VectorScheme> vector_scheme;
    if (avx512 && policy.r < 16) vector_scheme = std::make_unique<VectorScheme>(scheme);
#endif
    const std::int64_t chunks = (config.tasks + kChunk - 1) / kChunk;
    // Not a structured binding: clang 14 cannot refer to one inside an OpenMP region.
    const std::pair<std::int64_t, std::int64_t> chunk_range = config.share.range(chunks);
    const std::int64_t chunk_first = chunk_range.first, chunk_last = chunk_range.second;
#pragma omp parallel num_threads(thread_count(config.threads))
    {
      Tally tally(bins);
      auto blocks = std::make_unique<FirstBlocks>();
#ifdef RELSIM_X86_DISPATCH
      std::unique_ptr<VectorBuffers> buffers;
      if (vector_scheme) buffers = std::make_unique<VectorBuffers>();
#endif
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t c = chunk_first; c < chunk_last; ++c) {
        const std::int64_t first = c * kChunk;
        const int count = static_cast<int>(std::min<std::int64_t>(kChunk, config.tasks - first));
#ifdef RELSIM_X86_DISPATCH
        if (vector_scheme) {
          fresh_chunk_avx512(scheme, *vector_scheme, n, seed, static_cast<std::uint64_t>(first), count, *buffers,
                             tally);
          report(count);
          continue;
        }
#endif
        run_tasks(scheme, n, seed, static_cast<std::uint64_t>(first), 1, count, Entry::task_start, false, *blocks,
                  tally);
        report(count);
      }
#pragma omp critical(relsim_simulate_merge)
      tally.merge_into(result);
    }
  } else {
    const std::int64_t lanes = config.lanes;
    const std::pair<std::int64_t, std::int64_t> lane_range = config.share.range(lanes);
    const std::int64_t lane_first = lane_range.first, lane_last = lane_range.second;
#pragma omp parallel num_threads(thread_count(config.threads))
    {
      Tally tally(bins);
      auto blocks = std::make_unique<FirstBlocks>();
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t lane = lane_first; lane < lane_last; ++lane) {
        // Tasks lane, lane + lanes, ... in order, the chain carried between them.
        const std::int64_t in_lane = lane < config.tasks ? (config.tasks - lane + lanes - 1) / lanes : 0;
        Entry entry = Entry::lane_start;
        for (std::int64_t j = 0; j < in_lane; j += kChunk) {
          const int count = static_cast<int>(std::min<std::int64_t>(kChunk, in_lane - j));
          const auto first = static_cast<std::uint64_t>(lane + j * lanes);
          entry = run_tasks(scheme, n, seed, first, static_cast<std::uint64_t>(lanes), count, entry, true, *blocks,
                            tally);
          report(count);
        }
      }
#pragma omp critical(relsim_simulate_merge)
      tally.merge_into(result);
    }
  }
  return result;
}

}  // namespace

TaskTrace trace_task(const Model& model, const Policy& policy, const SimConfig& config, std::int64_t task) {
  validate(model);
  validate(policy);
  validate(config);
  if (task < 0 || task >= config.tasks)
    throw InputError(fmt::format("task = {} is out of range: task must be in [0, {}]", task, config.tasks - 1));
  const DrawScheme s = DrawScheme::make(model, policy, config.kinds);
  TaskTrace trace;
  trace.task = task;
  if (model.chain == ChainScope::continuous) {
    // Replay the lane's earlier tasks for the state the chain carries in.
    const std::int64_t lanes = config.lanes;
    Entry entry = Entry::lane_start;
    for (std::int64_t t = task % lanes; t < task; t += lanes) {
      const TaskRunner run = detail::walk_policy_task(s, policy, config.seed, t, entry, [](const auto&, bool) {});
      entry = run.outcome().outcome == Outcome::done ? Entry::after_good : Entry::after_bad;
    }
    trace.entry = entry;
  }
  // The general walk (every policy's rules), recording the requests sent.
  std::int64_t call = 0;
  int attempt = 0;
  const TaskRunner run = detail::walk_policy_task(
      s, policy, config.seed, task, trace.entry, [&](const std::optional<FaultKind>& r, bool sent) {
        if (!sent) return;
        trace.requests.push_back({call, attempt, r.has_value(), r.value_or(FaultKind::cut)});
        if (r) {
          ++attempt;
        } else {
          ++call;
          attempt = 0;
        }
      });
  trace.outcome = run.outcome().outcome;
  RELSIM_ASSERT(static_cast<std::int64_t>(trace.requests.size()) == run.requests());
  return trace;
}

}  // namespace relsim
