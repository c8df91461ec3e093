// The scalar chunk kernel (montecarlo/kernel.hpp): any CPU, either chain scope.
#include <cstddef>

#include "montecarlo/kernel.hpp"

namespace relsim::detail {

void philox_many_scalar(rng::Key key, std::uint32_t c0, std::uint32_t c1, const std::uint32_t* lo,
                        const std::uint32_t* hi, int count, std::uint32_t* const* out) {
  for (int i = 0; i < count; ++i) {
    const rng::Block b = rng::philox4x32_10({c0, c1, lo[i], hi[i]}, key);
    for (int w = 0; w < 4; ++w) out[w][i] = b[static_cast<std::size_t>(w)];
  }
}

void FirstBlocks::make(std::uint64_t seed, std::uint64_t first, std::uint64_t stride, int count) {
  static const PhiloxMany philox_many = pick_philox_many();
  split_tasks(first, stride, count, lo.data(), hi.data());
  const rng::Key key = rng::key_of(seed);
  const rng::Counter c = rng::counter_of(rng::Stream::chain, 0, 0), k = rng::counter_of(rng::Stream::kind, 0, 0);
  std::uint32_t* chain_out[4] = {chain[0].data(), chain[1].data(), chain[2].data(), chain[3].data()};
  std::uint32_t* kind_out[4] = {kind[0].data(), kind[1].data(), kind[2].data(), kind[3].data()};
  philox_many(key, c[0], c[1], lo.data(), hi.data(), count, chain_out);
  philox_many(key, k[0], k[1], lo.data(), hi.data(), count, kind_out);
}

namespace {

// A chunk's walk, task by task: a call's bad run is a count of thresholds
// above u, without branches when r is small; the kinds of a task's first
// four bad requests come from its kind block 0 whether or not they are
// needed, the unneeded ones counted in a slot that is thrown away.
template <bool kSmallR>
Entry run_chunk(const DrawScheme& s, std::int64_t n, std::uint64_t seed, const FirstBlocks& f, int count,
                Entry entry, bool carry, SimResult& tally) {
  const int r = s.r;
  const bool histogram = !tally.done_by_requests.empty();
  constexpr std::size_t kDiscard = kFaultKinds;
  std::array<std::int64_t, kFaultKinds + 1> faults{};  // the extra slot takes the unneeded kind draws
  for (int i = 0; i < count; ++i) {
    const auto at = static_cast<std::size_t>(i);
    const std::uint64_t task = join_task(f.lo[at], f.hi[at]);
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
      ++faults[m < bad ? kind : kDiscard];
    }
    if (bad > 4) count_later_kinds(s, seed, task, bad, faults);
    tally.successes += !failed;
    tally.requests += requests;
    tally.calls_succeeded += c;
    if (histogram) ++(failed ? tally.env_by_requests : tally.done_by_requests)[static_cast<std::size_t>(requests)];
    if (carry) {
      if (entry != Entry::lane_start) {
        const std::size_t before = entry == Entry::after_good ? 1 : 0;
        ++tally.pairs_after[before];
        tally.done_after[before] += !failed;
      }
      entry = failed ? Entry::after_bad : Entry::after_good;
    }
  }
  for (std::size_t k = 0; k < tally.faults.size(); ++k) tally.faults[k] += faults[k];
  tally.tasks += count;
  return entry;
}

}  // namespace

Entry run_tasks(const DrawScheme& s, std::int64_t n, std::uint64_t seed, std::uint64_t first, std::uint64_t stride,
                int count, Entry entry, bool carry, FirstBlocks& blocks, SimResult& tally) {
  blocks.make(seed, first, stride, count);
  return s.r < 16 ? run_chunk<true>(s, n, seed, blocks, count, entry, carry, tally)
                  : run_chunk<false>(s, n, seed, blocks, count, entry, carry, tally);
}

}  // namespace relsim::detail
