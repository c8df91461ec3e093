// The exact distribution of wall time per task (docs/time.md), call by call:
// the forward vectors of the hidden state, split by the time so far, held in
// bins a common step apart. Every time a task can reach is a sum of call
// durations and think times, so the greatest common divisor of those (in
// microseconds) is a step that loses nothing, and a bin is an index, not a
// key to look up.
#include "exact/seconds_distribution.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

namespace relsim::exact_detail {
namespace {

// Sums of k terms in the order Eigen's own kernels add them in this build
// (SSE2, two doubles a packet, no fused multiply-add): two lanes over pairs
// of terms, the lanes added, then an odd last term. Eigen's row vector times
// a matrix (its row-major matrix-vector kernel) and its dot products and
// sums (its vectorised reduction) both add up to seven terms in this order,
// so these bins hold the bits the map of vectors they replaced held (the
// goldens of exact in seconds are byte-identical). Past seven terms the
// reduction pairs its lanes differently, and Eigen does the arithmetic
// itself; so it does for every k in a build whose Eigen has wider packets,
// fused multiply-adds or no vectorisation (-march=native, say), whose order
// the two lanes would not be.
#if defined(EIGEN_VECTORIZE_SSE2) && !defined(EIGEN_VECTORIZE_AVX) && !defined(__FMA__)
constexpr Eigen::Index kLaneTerms = 7;
#else
constexpr Eigen::Index kLaneTerms = 0;
#endif

// K > 0 fixes the number of hidden states at compile time, so the sums
// unroll (two states, the common case, ran about three times as fast); K = 0
// reads it at run time.
template <int K, class Term>
double lane_sum(Eigen::Index k_run, const Term& term) {
  const Eigen::Index k = K > 0 ? K : k_run;
  double lane0 = 0.0;
  double lane1 = 0.0;
  Eigen::Index j = 0;
  for (; j + 2 <= k; j += 2) {
    lane0 += term(j);
    lane1 += term(j + 1);
  }
  double sum = lane0 + lane1;
  for (; j < k; ++j) sum += term(j);
  return sum;
}

using RowMap = Eigen::Map<Eigen::RowVectorXd>;
using ConstRowMap = Eigen::Map<const Eigen::RowVectorXd>;

// dst += v * s, v a row of k values.
template <int K>
void add_product(double* dst, const double* v, const Eigen::MatrixXd& s) {
  const Eigen::Index k = K > 0 ? K : s.rows();
  if (k > kLaneTerms) {
    RowMap(dst, k) += ConstRowMap(v, k) * s;
    return;
  }
  const double* m = s.data();  // column-major: s(i, j) at m[j * k + i]
  for (Eigen::Index j = 0; j < k; ++j)
    dst[j] += lane_sum<K>(k, [&](Eigen::Index i) { return v[i] * m[j * k + i]; });
}

template <int K>
double dot(const double* v, const Eigen::VectorXd& col) {
  const Eigen::Index k = K > 0 ? K : col.size();
  if (k > kLaneTerms) return ConstRowMap(v, k).dot(col);
  const double* c = col.data();
  return lane_sum<K>(k, [&](Eigen::Index i) { return v[i] * c[i]; });
}

double sum(const double* v, Eigen::Index k) {
  if (k > kLaneTerms) return ConstRowMap(v, k).sum();
  return lane_sum<0>(k, [&](Eigen::Index i) { return v[i]; });
}

// Values by bin, `width` of them a bin, padded to an even count so that each
// bin starts 16 bytes aligned (as an Eigen vector's data does). Dense over
// bins [0, bins) when asked and that holds at most kDenseValues values; else
// a bin's place is found in a hash map, for a step so fine (a duration of
// 0.123457 s) that the bins reached are a sparse few of all of them.
class Bins {
 public:
  static constexpr std::int64_t kDenseValues = std::int64_t{1} << 21;  // 16 MiB

  // Dense storage comes from calloc: a block glibc maps afresh is zero pages
  // that are touched only where the walk reaches (one it serves from its
  // heap, below its mmap threshold, is cleared whole).
  Bins(Eigen::Index width, std::int64_t bins, bool dense)
      : width_(width), stride_((width + 1) / 2 * 2), dense_(dense && bins <= kDenseValues / stride_) {
    if (dense_) {
      dense_values_.reset(static_cast<double*>(std::calloc(static_cast<std::size_t>(bins * stride_), sizeof(double))));
      present_.reset(static_cast<char*>(std::calloc(static_cast<std::size_t>(bins), 1)));
      if (!dense_values_ || !present_) throw std::bad_alloc();
    }
  }

  // The values of `bin`, zero when it is new.
  double* add(std::int64_t bin) {
    if (dense_) {
      char& present = present_.get()[bin];
      if (!present) {
        present = 1;
        bins_.push_back(bin);
      }
      return dense_values_.get() + bin * stride_;
    }
    return add_sparse(bin);
  }

  // The bins present, in time order, each with its values.
  std::vector<std::pair<std::int64_t, const double*>> sorted() {
    std::sort(bins_.begin(), bins_.end());
    std::vector<std::pair<std::int64_t, const double*>> out;
    out.reserve(bins_.size());
    for (const std::int64_t b : bins_) out.emplace_back(b, add(b));
    return out;
  }

  // Drops, in time order, the bins whose mass is below `below`, adding it to
  // `dropped`.
  void prune(double below, double& dropped) {
    std::sort(bins_.begin(), bins_.end());
    std::vector<std::int64_t> kept;
    kept.reserve(bins_.size());
    for (const std::int64_t b : bins_) {
      double* v = add(b);
      const double mass = sum(v, width_);
      if (mass < below) {
        dropped += mass;
        forget(b, v);
      } else {
        kept.push_back(b);
      }
    }
    bins_.swap(kept);
  }

  void clear() {
    if (dense_) {
      for (const std::int64_t b : bins_) forget(b, add(b));
    } else {
      place_.clear();
      values_.clear();
    }
    bins_.clear();
  }

  std::size_t size() const { return bins_.size(); }

 private:
  void forget(std::int64_t b, double* v) {
    std::fill(v, v + stride_, 0.0);
    if (dense_)
      present_.get()[b] = 0;
    else
      place_.erase(b);
  }

  [[gnu::noinline]] double* add_sparse(std::int64_t bin) {
    const auto [it, fresh] = place_.try_emplace(bin, static_cast<std::int64_t>(values_.size()) / stride_);
    if (fresh) {
      bins_.push_back(bin);
      values_.resize(values_.size() + static_cast<std::size_t>(stride_), 0.0);
    }
    return &values_[static_cast<std::size_t>(it->second * stride_)];
  }

  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  Eigen::Index width_;
  Eigen::Index stride_;
  bool dense_;
  std::unique_ptr<double[], Free> dense_values_;          // dense: bin b at b * stride_
  std::unique_ptr<char[], Free> present_;                 // dense: bin in bins_
  std::vector<double> values_;                            // sparse: in order of arrival
  std::unordered_map<std::int64_t, std::int64_t> place_;  // sparse: bin -> its place in values_
  std::vector<std::int64_t> bins_;                        // the bins present, in no order until sorted
};

// A call's endings in bins: each distinct time it can take and what it
// leads to, in the order the walk adds them (see seconds_distribution).
struct BinnedCall {
  std::int64_t step = 1;  // microseconds a bin
  std::int64_t think = 0;  // bins before every call but the first
  std::vector<std::pair<std::int64_t, const Eigen::MatrixXd*>> succeed;  // bins, next call's state
  struct End {
    std::size_t outcome = 0;  // index into outcomes
    std::int64_t bins = 0;
    const Eigen::VectorXd* col = nullptr;
  };
  std::vector<End> ends;
  std::vector<int> outcomes;  // the outcomes of the tally in Outcome order, done among them
  std::int64_t horizon = 1;   // bins every time of a task is below
  bool dense = true;          // whether bins over the whole horizon are worth their memory
};

BinnedCall binned(const CallMatrices& c, std::int64_t n, std::int64_t think_micros) {
  BinnedCall b;
  std::int64_t step = n > 1 ? think_micros : 0;
  for (const auto& entry : c.succeed_by_micros) step = std::gcd(step, entry.first);
  for (const auto& entry : c.end_by_micros) step = std::gcd(step, entry.first.second);
  b.step = std::max<std::int64_t>(step, 1);
  b.think = think_micros / b.step;
  // Descending times: a bin then takes its parts in the order of the times
  // they came from, earliest first, as the walk over a sorted map did.
  for (auto it = c.succeed_by_micros.rbegin(); it != c.succeed_by_micros.rend(); ++it)
    b.succeed.emplace_back(it->first / b.step, &it->second);
  b.outcomes.push_back(static_cast<int>(Outcome::done));
  if (c.trust_bit) b.outcomes.push_back(static_cast<int>(Outcome::partial_done));
  for (const auto& entry : c.end_by_micros) b.outcomes.push_back(entry.first.first);
  std::sort(b.outcomes.begin(), b.outcomes.end());
  b.outcomes.erase(std::unique(b.outcomes.begin(), b.outcomes.end()), b.outcomes.end());
  for (auto it = c.end_by_micros.rbegin(); it != c.end_by_micros.rend(); ++it) {
    const auto at = std::lower_bound(b.outcomes.begin(), b.outcomes.end(), it->first.first);
    b.ends.push_back({static_cast<std::size_t>(at - b.outcomes.begin()), it->first.second / b.step, &it->second});
  }
  std::int64_t longest = 0;
  for (const auto& [bins, s] : b.succeed) longest = std::max(longest, bins);
  for (const auto& e : b.ends) longest = std::max(longest, e.bins);
  // Past 2^62 bins (never dense) the count is only an upper bound.
  const double horizon = static_cast<double>(n) * static_cast<double>(longest + b.think) + 1.0;
  b.horizon = horizon < 0x1p62 ? static_cast<std::int64_t>(horizon) : std::int64_t{1} << 62;
  // Dense only where the walk can fill a fair share of the grid: a step of
  // a microsecond over seconds (quadrature nodes, say) reaches a handful of
  // the million bins, and clearing them would cost more than the walk.
  const double reach = static_cast<double>(n) * static_cast<double>(b.succeed.size() + b.ends.size() + 1);
  b.dense = horizon <= std::max(4096.0, 32.0 * reach);
  return b;
}

// One call from the forward vectors `forward` (by bin, in time order): its
// endings into `ended`, its successes into `next`. A bin of either takes its
// parts earliest time first: the times ascending within each of the call's
// endings, taken latest ending first.
template <int K>
void one_call(const BinnedCall& b, const std::vector<std::pair<std::int64_t, const double*>>& forward,
              std::int64_t gap, Bins& next, Bins& ended) {
  for (const auto& e : b.ends)
    for (const auto& [t, v] : forward) ended.add(t + e.bins)[e.outcome] += dot<K>(v, *e.col);
  for (const auto& [bins, s] : b.succeed)
    for (const auto& [t, v] : forward) add_product<K>(next.add(t + bins + gap), v, *s);
}

void add_bins(const BinnedCall& b, Bins& ended, ExactResult& out) {
  // Sorted by seconds, then by outcome in the Outcome enum's order.
  const auto width = static_cast<std::size_t>(b.outcomes.size());
  for (const auto& [bin, mass] : ended.sorted())
    for (std::size_t o = 0; o < width; ++o)
      if (mass[o] > 0.0)
        out.seconds.push_back({static_cast<double>(bin * b.step) * 1e-6, static_cast<Outcome>(b.outcomes[o]), mass[o]});
}

}  // namespace

void seconds_distribution(const CallMatrices& c, const Eigen::RowVectorXd& chain_start, const Policy& policy,
                          double think, const ExactOptions& options, ExactResult& out) {
  const Eigen::RowVectorXd start = lifted(c, chain_start);
  const Eigen::Index k = start.size();
  const BinnedCall b = binned(c, policy.n, to_micros(think));
  Bins cur(k, b.horizon, b.dense), next(k, b.horizon, b.dense);
  Bins ended(static_cast<Eigen::Index>(b.outcomes.size()), b.horizon, b.dense);
  RowMap(cur.add(0), k) = start / start.sum();
  double work = 0.0;
  const double per_entry = static_cast<double>((c.succeed_by_micros.size() * static_cast<std::size_t>(k) +
                                                c.end_by_micros.size()) * static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < policy.n && cur.size() > 0; ++j) {
    work += static_cast<double>(cur.size()) * per_entry;
    if (work > options.max_distribution_work) return;
    const std::int64_t gap = j + 1 < policy.n ? b.think : 0;
    switch (k) {
      case 2: one_call<2>(b, cur.sorted(), gap, next, ended); break;
      case 3: one_call<3>(b, cur.sorted(), gap, next, ended); break;
      default: one_call<0>(b, cur.sorted(), gap, next, ended); break;
    }
    next.prune(options.prune_below, out.pruned_mass);
    cur.clear();
    std::swap(cur, next);
  }
  // Alive after the last call: done, or partial_done in the trust bit's second half.
  const auto slot = [&b](Outcome o) {
    return static_cast<std::size_t>(std::lower_bound(b.outcomes.begin(), b.outcomes.end(), static_cast<int>(o)) -
                                    b.outcomes.begin());
  };
  const std::size_t done = slot(Outcome::done);
  const Eigen::Index clean = c.clean_states();
  for (const auto& [t, v] : cur.sorted()) {
    double* into = ended.add(t);
    into[done] += sum(v, clean);
    if (c.trust_bit) into[slot(Outcome::partial_done)] += sum(v + clean, k - clean);
  }
  add_bins(b, ended, out);
  out.seconds_complete = true;
  out.seconds_quantiles = seconds_quantiles(out.seconds);
}

}  // namespace relsim::exact_detail
