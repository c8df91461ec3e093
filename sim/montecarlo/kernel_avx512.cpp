// The AVX-512 kernel of the fresh scope (montecarlo/kernel.hpp), and the
// AVX-512 Philox that makes a chunk's first draw blocks; the choice of
// kernel (fresh_kernel). Which code runs depends on the CPU (or --kernel),
// and every path computes the same integers as rng.hpp, so results never do. Off x86-64 (or without GCC/clang's target
// attributes) only the stubs at the end are compiled.
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "relsim/core/error.hpp"
#include "montecarlo/kernel.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RELSIM_X86_DISPATCH 1
#include <immintrin.h>
#endif

namespace relsim::detail {

VectorScheme::VectorScheme(const DrawScheme& s) : r(s.r), threshold(s.threshold.size()) {
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

#ifdef RELSIM_X86_DISPATCH
// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_* placeholders; the vector helpers below are internal,
// so the ABI note about passing vectors (-Wpsabi) does not concern them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wpsabi"
namespace {

// The ten rounds of rng::philox4x32_10 on 16 counters (x0..x3 word by word),
// each round's 32x32 -> 64-bit products as even/odd vpmuludq pairs.
__attribute__((target("avx512f"))) inline void philox_rounds_avx512(__m512i& x0, __m512i& x1, __m512i& x2,
                                                                    __m512i& x3, rng::Key key) {
  const __m512i m0 = _mm512_set1_epi64(rng::kPhiloxM0), m1 = _mm512_set1_epi64(rng::kPhiloxM1);
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
    k0 += rng::kPhiloxW0;
    k1 += rng::kPhiloxW1;
  }
}

// PhiloxMany, 16 counters per vector; the tail takes the scalar one.
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

// Eight 32-bit words widened to 64-bit lanes.
__attribute__((target("avx512f"))) inline __m512i widen8(const std::uint32_t* p) {
  return _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Chain block `block` of the eight tasks lo[0..7], hi[0..7], word k in w[k]'s
// 64-bit lanes (Philox lanes 8..15 unused).
__attribute__((target("avx512f"))) inline void chain_block8(rng::Key key, std::uint64_t block, const std::uint32_t* lo,
                                                            const std::uint32_t* hi, __m512i (&w)[4]) {
  const rng::Counter ctr = rng::counter_of(rng::Stream::chain, 0, block);
  __m512i x0 = _mm512_set1_epi32(static_cast<int>(ctr[0])), x1 = _mm512_set1_epi32(static_cast<int>(ctr[1]));
  __m512i x2 = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo)));
  __m512i x3 = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi)));
  philox_rounds_avx512(x0, x1, x2, x3, key);
  w[0] = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(x0));
  w[1] = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(x1));
  w[2] = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(x2));
  w[3] = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(x3));
}

// A chunk's call totals, summed eight lanes wide.
struct CallSums {
  __m512i requests, calls;
  std::int64_t successes;
};

// The calls of tasks i .. i + 7 of the chunk (fewer at its end), all at
// once under lane masks: each call's bad run is its count of thresholds
// above x. Leaves each task's bad requests, requests and success in b.
__attribute__((target("avx512f,popcnt"))) inline void calls_of_eight(const VectorScheme& v, std::int64_t n,
                                                                     rng::Key key, int i, int count,
                                                                     VectorBuffers& b, CallSums& sums) {
  const int r = v.r;
  const __m512i one = _mm512_set1_epi64(1), r_vec = _mm512_set1_epi64(r);
  const __mmask8 valid = count - i >= 8 ? __mmask8(0xFF) : static_cast<__mmask8>((1u << (count - i)) - 1u);
  __m512i w[4] = {widen8(b.chain[0].data() + i), widen8(b.chain[1].data() + i), widen8(b.chain[2].data() + i),
                  widen8(b.chain[3].data() + i)};
  __m512i bad = _mm512_setzero_si512(), requests = _mm512_setzero_si512(), calls = _mm512_setzero_si512();
  __mmask8 active = valid;
  const std::uint64_t* t = v.thresholds(Entry::task_start);
  for (std::int64_t c = 0; c < n && active; ++c) {
    if (c >= 2 && (c & 1) == 0)
      chain_block8(key, static_cast<std::uint64_t>(c) >> 1, b.lo.data() + i, b.hi.data() + i, w);
    const __m512i x = (c & 1) ? _mm512_srli_epi64(_mm512_or_si512(_mm512_slli_epi64(w[3], 32), w[2]), 11)
                              : _mm512_srli_epi64(_mm512_or_si512(_mm512_slli_epi64(w[1], 32), w[0]), 11);
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
  sums.successes += _mm_popcnt_u32(active);
  sums.requests = _mm512_add_epi64(sums.requests, requests);
  sums.calls = _mm512_add_epi64(sums.calls, calls);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(b.bad.data() + i), _mm512_cvtepi64_epi32(bad));
  _mm512_storeu_si512(b.requests.data() + i, requests);
  b.done[static_cast<std::size_t>(i / 8)] = active;
}

// Packs the chunk's tasks with a bad request (their lo, hi and bad count):
// only they need their kind block. Returns how many.
__attribute__((target("avx512f,popcnt"))) inline int pack_bad_tasks(int count, VectorBuffers& b) {
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
  return packed;
}

// The kinds of the packed tasks' first four bad requests, from their kind
// blocks 0 in b.kind: counted by level, below[l] = words of kind <=
// levels[l] (the last level is every word), then differenced.
__attribute__((target("avx512f,popcnt"))) inline void count_first_kinds(const VectorScheme& v, int packed,
                                                                        const VectorBuffers& b, SimResult& tally) {
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
  add_level_counts(v, below, tally);
}

}  // namespace

bool cpu_has_avx512() {
  static const bool avx512 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt");
  }();
  return avx512;
}

PhiloxMany pick_philox_many() {
  if (cpu_has_avx512()) return philox_many_avx512;
  const PhiloxMany avx2 = avx2_philox_many();
  return avx2 ? avx2 : philox_many_scalar;
}

__attribute__((target("avx512f,popcnt"))) void fresh_chunk_avx512(const DrawScheme& s, const VectorScheme& v,
                                                                   std::int64_t n, std::uint64_t seed,
                                                                   std::uint64_t first, int count, VectorBuffers& b,
                                                                   SimResult& tally) {
  const rng::Key key = rng::key_of(seed);
  chain_blocks_of_chunk(philox_many_avx512, key, first, count, b);

  CallSums sums{_mm512_setzero_si512(), _mm512_setzero_si512(), 0};
  for (int i = 0; i < count; i += 8) calls_of_eight(v, n, key, i, count, b, sums);
  tally.tasks += count;
  tally.successes += sums.successes;
  tally.requests += _mm512_reduce_add_epi64(sums.requests);
  tally.calls_succeeded += _mm512_reduce_add_epi64(sums.calls);

  const int packed = pack_bad_tasks(count, b);
  kind_blocks_of_packed(philox_many_avx512, key, packed, b);
  count_first_kinds(v, packed, b, tally);
  finish_vector_chunk(s, seed, count, packed, b, tally);
}
#pragma GCC diagnostic pop

#else  // not x86-64: the scalar kernel does all the work.

PhiloxMany pick_philox_many() { return philox_many_scalar; }

bool cpu_has_avx512() { return false; }

void fresh_chunk_avx512(const DrawScheme&, const VectorScheme&, std::int64_t, std::uint64_t, std::uint64_t, int,
                        VectorBuffers&, SimResult&) {
  RELSIM_ASSERT(cpu_has_avx512());
}

#endif

}  // namespace relsim::detail

#undef RELSIM_X86_DISPATCH  // unity builds: the next file in the batch decides for itself
