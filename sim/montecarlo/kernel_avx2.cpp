// The AVX2 kernel of the fresh scope (montecarlo/kernel.hpp), for x86-64
// CPUs with AVX2 and no AVX-512 (x86-64-v3: most laptops, AMD before Zen 4),
// and the AVX2 Philox. The same draws as the scalar and AVX-512 kernels, in
// the same order of work: a chunk's first draw blocks eight tasks per
// vector, then every call of eight tasks at once under lane masks (two
// vectors of four 64-bit lanes), then the kinds of the tasks with a bad
// request. Off x86-64 only the stubs at the end are compiled.
#include <algorithm>
#include <array>
#include <cstddef>

#include "relsim/core/error.hpp"
#include "montecarlo/kernel.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RELSIM_X86_DISPATCH 1
#include <immintrin.h>
#endif

namespace relsim::detail {

#ifdef RELSIM_X86_DISPATCH
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors passed between internal helpers
namespace {

// The ten rounds of rng::philox4x32_10 on 8 counters (x0..x3 word by word),
// each round's 32x32 -> 64-bit products as even/odd vpmuludq pairs, as the
// AVX-512 kernel makes them 16 at a time.
__attribute__((target("avx2"))) inline void philox_rounds_avx2(__m256i& x0, __m256i& x1, __m256i& x2, __m256i& x3,
                                                               rng::Key key) {
  const __m256i m0 = _mm256_set1_epi64x(rng::kPhiloxM0), m1 = _mm256_set1_epi64x(rng::kPhiloxM1);
  std::uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    const __m256i e0 = _mm256_mul_epu32(x0, m0), o0 = _mm256_mul_epu32(_mm256_srli_epi64(x0, 32), m0);
    const __m256i e1 = _mm256_mul_epu32(x2, m1), o1 = _mm256_mul_epu32(_mm256_srli_epi64(x2, 32), m1);
    const __m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(e0, 32), o0, 0xAA);
    const __m256i lo0 = _mm256_blend_epi32(e0, _mm256_slli_epi64(o0, 32), 0xAA);
    const __m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(e1, 32), o1, 0xAA);
    const __m256i lo1 = _mm256_blend_epi32(e1, _mm256_slli_epi64(o1, 32), 0xAA);
    x0 = _mm256_xor_si256(_mm256_xor_si256(hi1, x1), _mm256_set1_epi32(static_cast<int>(k0)));
    x1 = lo1;
    x2 = _mm256_xor_si256(_mm256_xor_si256(hi0, x3), _mm256_set1_epi32(static_cast<int>(k1)));
    x3 = lo0;
    k0 += rng::kPhiloxW0;
    k1 += rng::kPhiloxW1;
  }
}

__attribute__((target("avx2"))) inline __m256i load8_avx2(const std::uint32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// PhiloxMany, 8 counters per vector; the tail takes the scalar one.
__attribute__((target("avx2"))) void philox_many_avx2(rng::Key key, std::uint32_t c0, std::uint32_t c1,
                                                       const std::uint32_t* lo, const std::uint32_t* hi, int count,
                                                       std::uint32_t* const* out) {
  int i = 0;
  for (; i + 8 <= count; i += 8) {
    __m256i x0 = _mm256_set1_epi32(static_cast<int>(c0)), x1 = _mm256_set1_epi32(static_cast<int>(c1));
    __m256i x2 = load8_avx2(lo + i), x3 = load8_avx2(hi + i);
    philox_rounds_avx2(x0, x1, x2, x3, key);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[0] + i), x0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[1] + i), x1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[2] + i), x2);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[3] + i), x3);
  }
  std::uint32_t* rest[4] = {out[0] + i, out[1] + i, out[2] + i, out[3] + i};
  philox_many_scalar(key, c0, c1, lo + i, hi + i, count - i, rest);
}

// Eight tasks' 32-bit words as two vectors of four 64-bit lanes.
struct Wide4 {
  __m256i half[2];
};

__attribute__((target("avx2"))) inline Wide4 widen_avx2(__m256i words) {
  return {{_mm256_cvtepu32_epi64(_mm256_castsi256_si128(words)),
           _mm256_cvtepu32_epi64(_mm256_extracti128_si256(words, 1))}};
}

// Chain block `block` of the eight tasks lo[0..7], hi[0..7], word k in w[k].
__attribute__((target("avx2"))) inline void chain_block8_avx2(rng::Key key, std::uint64_t block, const std::uint32_t* lo,
                                                         const std::uint32_t* hi, Wide4 (&w)[4]) {
  const rng::Counter ctr = rng::counter_of(rng::Stream::chain, 0, block);
  __m256i x0 = _mm256_set1_epi32(static_cast<int>(ctr[0])), x1 = _mm256_set1_epi32(static_cast<int>(ctr[1]));
  __m256i x2 = load8_avx2(lo), x3 = load8_avx2(hi);
  philox_rounds_avx2(x0, x1, x2, x3, key);
  w[0] = widen_avx2(x0), w[1] = widen_avx2(x1), w[2] = widen_avx2(x2), w[3] = widen_avx2(x3);
}

// A chunk's call totals, summed four lanes wide.
struct CallSums4 {
  __m256i requests, calls;
  std::int64_t successes;
};

// The 53-bit integer of call c's uniform, x = the call's 64 bits >> 11:
// words 0, 1 for an even call, 2, 3 for an odd one (docs/methods.md).
__attribute__((target("avx2"))) inline __m256i call_bits(const Wide4 (&w)[4], std::int64_t c, int h) {
  const __m256i low = (c & 1) ? w[2].half[h] : w[0].half[h], high = (c & 1) ? w[3].half[h] : w[1].half[h];
  return _mm256_srli_epi64(_mm256_or_si256(_mm256_slli_epi64(high, 32), low), 11);
}

// The calls of tasks i .. i + 7 of the chunk (fewer at its end), all at
// once under lane masks (all-ones lanes): each call's bad run is its count
// of thresholds above x. x < 2^53 and every threshold <= 2^53, so the
// signed 64-bit comparison AVX2 has is exact. Leaves each task's bad
// requests, requests and success in b.
__attribute__((target("avx2,popcnt"))) inline void calls_of_eight_avx2(const VectorScheme& v, std::int64_t n, rng::Key key,
                                                                  int i, int count, VectorBuffers& b,
                                                                  CallSums4& sums) {
  const int r = v.r;
  const __m256i one = _mm256_set1_epi64x(1), r_vec = _mm256_set1_epi64x(r);
  Wide4 w[4] = {widen_avx2(load8_avx2(b.chain[0].data() + i)), widen_avx2(load8_avx2(b.chain[1].data() + i)),
               widen_avx2(load8_avx2(b.chain[2].data() + i)), widen_avx2(load8_avx2(b.chain[3].data() + i))};
  __m256i active[2], bad[2], requests[2], calls[2];
  for (int h = 0; h < 2; ++h) {
    const int lanes = std::max(0, std::min(4, count - i - 4 * h));
    const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
    active[h] = _mm256_cmpgt_epi64(_mm256_set1_epi64x(lanes), lane);
    bad[h] = requests[h] = calls[h] = _mm256_setzero_si256();
  }
  const std::uint64_t* t = v.thresholds(Entry::task_start);
  for (std::int64_t c = 0; c < n; ++c) {
    if (_mm256_testz_si256(_mm256_or_si256(active[0], active[1]), _mm256_or_si256(active[0], active[1]))) break;
    if (c >= 2 && (c & 1) == 0)
      chain_block8_avx2(key, static_cast<std::uint64_t>(c) >> 1, b.lo.data() + i, b.hi.data() + i, w);
    for (int h = 0; h < 2; ++h) {
      const __m256i x = call_bits(w, c, h);
      __m256i a = _mm256_setzero_si256();
      for (int j = 0; j <= r; ++j)  // a - (-1) for every threshold above x
        a = _mm256_sub_epi64(a, _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(t[j])), x));
      const __m256i ok = _mm256_andnot_si256(_mm256_cmpgt_epi64(a, r_vec), active[h]);
      const __m256i a_active = _mm256_and_si256(a, active[h]);
      bad[h] = _mm256_add_epi64(bad[h], a_active);
      requests[h] = _mm256_add_epi64(requests[h], _mm256_add_epi64(a_active, _mm256_and_si256(ok, one)));
      calls[h] = _mm256_add_epi64(calls[h], _mm256_and_si256(ok, one));
      active[h] = ok;
    }
    t = v.thresholds(Entry::after_good);
  }
  int done = 0;
  for (int h = 0; h < 2; ++h) {
    done |= _mm256_movemask_pd(_mm256_castsi256_pd(active[h])) << (4 * h);
    sums.requests = _mm256_add_epi64(sums.requests, requests[h]);
    sums.calls = _mm256_add_epi64(sums.calls, calls[h]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b.requests.data() + i + 4 * h), requests[h]);
    alignas(32) std::int64_t lane_bad[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lane_bad), bad[h]);
    for (int l = 0; l < 4; ++l) b.bad[static_cast<std::size_t>(i + 4 * h + l)] = static_cast<std::int32_t>(lane_bad[l]);
  }
  sums.successes += _mm_popcnt_u32(static_cast<unsigned>(done));
  b.done[static_cast<std::size_t>(i / 8)] = static_cast<std::uint8_t>(done);
}

__attribute__((target("avx2"))) inline std::int64_t sum4_avx2(__m256i v) {
  alignas(32) std::int64_t lane[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane), v);
  return lane[0] + lane[1] + lane[2] + lane[3];
}

// Packs the chunk's tasks with a bad request (their lo, hi and bad count):
// only they need their kind block. Returns how many. Without a branch: each
// task is written at the next place, which moves on only past a bad one (the
// buffers are padded past the chunk).
int pack_bad_tasks_scalar(int count, VectorBuffers& b) {
  std::size_t packed = 0;
  for (std::size_t at = 0; at < static_cast<std::size_t>(count); ++at) {
    b.bad_lo[packed] = b.lo[at], b.bad_hi[packed] = b.hi[at], b.bad_count[packed] = b.bad[at];
    packed += b.bad[at] > 0 ? 1u : 0u;
  }
  return static_cast<int>(packed);
}

// The lanes set in an all-ones-or-zero mask of eight 32-bit lanes.
__attribute__((target("avx2,popcnt"))) inline std::int64_t count(__m256i mask) {
  return _mm_popcnt_u32(static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(mask))));
}

// The kinds of the packed tasks' first four bad requests, from their kind
// blocks 0 in b.kind, eight words at a time: counted by level, below[l] =
// words of kind <= levels[l] (the last level is every word), then
// differenced. Unsigned words compare as signed ones with the top bit flipped.
__attribute__((target("avx2,popcnt"))) inline void count_first_kinds_avx2(const VectorScheme& v, int packed,
                                                                          const VectorBuffers& b, SimResult& tally) {
  std::array<std::int64_t, kFaultKinds> below{};
  const int levels = static_cast<int>(v.levels.size());
  const __m256i flip = _mm256_set1_epi32(static_cast<int>(0x80000000u)), lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int i = 0; i < packed; i += 8) {
    const __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(packed - i), lane);
    const __m256i bad = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.bad_count.data() + i));
    for (int m = 0; m < 4; ++m) {
      const __m256i used = _mm256_and_si256(valid, _mm256_cmpgt_epi32(bad, _mm256_set1_epi32(m)));
      const __m256i w = _mm256_xor_si256(load8_avx2(b.kind[static_cast<std::size_t>(m)].data() + i), flip);
      for (int l = 0; l + 1 < levels; ++l) {
        const auto cut = v.cut[static_cast<std::size_t>(v.levels[static_cast<std::size_t>(l)])] ^ 0x80000000u;
        below[static_cast<std::size_t>(l)] +=
            count(_mm256_and_si256(used, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cut)), w)));
      }
      below[static_cast<std::size_t>(levels - 1)] += count(used);
    }
  }
  add_level_counts(v, below, tally);
}

}  // namespace

bool cpu_has_avx2() {
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  }();
  return avx2;
}

PhiloxMany avx2_philox_many() { return cpu_has_avx2() ? philox_many_avx2 : nullptr; }

__attribute__((target("avx2,popcnt"))) void fresh_chunk_avx2(const DrawScheme& s, const VectorScheme& v,
                                                             std::int64_t n, std::uint64_t seed, std::uint64_t first,
                                                             int count, VectorBuffers& b, SimResult& tally) {
  const rng::Key key = rng::key_of(seed);
  chain_blocks_of_chunk(philox_many_avx2, key, first, count, b);

  CallSums4 sums{_mm256_setzero_si256(), _mm256_setzero_si256(), 0};
  for (int i = 0; i < count; i += 8) calls_of_eight_avx2(v, n, key, i, count, b, sums);
  tally.tasks += count;
  tally.successes += sums.successes;
  tally.requests += sum4_avx2(sums.requests);
  tally.calls_succeeded += sum4_avx2(sums.calls);

  const int packed = pack_bad_tasks_scalar(count, b);
  kind_blocks_of_packed(philox_many_avx2, key, packed, b);
  count_first_kinds_avx2(v, packed, b, tally);
  finish_vector_chunk(s, seed, count, packed, b, tally);
}
#pragma GCC diagnostic pop

#else  // not x86-64: the scalar kernel does all the work.

bool cpu_has_avx2() { return false; }

PhiloxMany avx2_philox_many() { return nullptr; }

void fresh_chunk_avx2(const DrawScheme&, const VectorScheme&, std::int64_t, std::uint64_t, std::uint64_t, int,
                      VectorBuffers&, SimResult&) {
  RELSIM_ASSERT(cpu_has_avx2());
}

#endif

}  // namespace relsim::detail

#undef RELSIM_X86_DISPATCH  // unity builds: the next file in the batch decides for itself
