// The distribution of requests per task (requests_distribution.hpp).
#include "exact/requests_distribution.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

namespace relsim::exact_detail {

namespace {

// ended[o][m], P(outcome o after exactly m requests), appended to
// out.requests in ExactResult's order: by m, then by outcome.
void append_requests(const std::vector<std::vector<double>>& ended, ExactResult& out) {
  std::size_t longest = 0;
  for (const auto& bins : ended) longest = std::max(longest, bins.size());
  for (std::size_t m = 0; m < longest; ++m)
    for (int o = 0; o < kOutcomes; ++o) {
      const auto& bins = ended[static_cast<std::size_t>(o)];
      if (m < bins.size() && bins[m] > 0.0)
        out.requests.push_back({static_cast<std::int64_t>(m), static_cast<Outcome>(o), bins[m]});
    }
}

}  // namespace

// The distribution of requests per task: the forward vectors split by the
// number of extra requests (beyond one per call) so far. Its ends are
// trimmed where their mass falls below options.prune_below, and the whole
// is given up when it would cost more than options.max_distribution_work.
void requests_distribution(const CallMatrices& c, const Eigen::RowVectorXd& chain_start, const Policy& policy,
                           const ExactOptions& options, ExactResult& out) {
  const Eigen::RowVectorXd start = lifted(c, chain_start);
  const Eigen::Index k = start.size();
  const int most = c.most;
  const double per_bin =
      static_cast<double>(most) * static_cast<double>(k * k) + static_cast<double>(c.endings.size() * k);
  constexpr std::size_t kMaxBins = 20'000'000;

  // cur holds bins lo .. lo + width - 1 of the extra-request count, k entries each.
  std::vector<double> cur(start.data(), start.data() + k), next;
  std::int64_t lo = 0;
  // ended[o][m]: P(the task ends with outcome o after exactly m requests).
  std::vector<std::vector<double>> ended(kOutcomes);
  double work = 0.0;
  auto give_up = [&] {
    out.requests.clear();
    out.distribution_complete = false;
  };
  for (std::int64_t j = 0; j < policy.n; ++j) {
    const std::int64_t width = static_cast<std::int64_t>(cur.size()) / k;
    if (width == 0) break;
    work += static_cast<double>(width) * per_bin;
    if (work > options.max_distribution_work) return give_up();
    for (const Ending& e : c.endings) {
      auto& bins = ended[static_cast<std::size_t>(outcome_class(e.outcome_class).outcome)];
      for (std::int64_t x = 0; x < width; ++x) {
        Eigen::Map<const Eigen::RowVectorXd> u(cur.data() + x * k, k);
        const double mass = u.dot(e.col);
        if (!(mass > 0.0)) continue;
        const auto m = static_cast<std::size_t>(j + lo + x + e.requests);
        if (m >= kMaxBins) return give_up();
        if (bins.size() <= m) bins.resize(m + 1, 0.0);
        bins[m] += mass;
      }
    }
    // next[x + c - 1] += cur[x] S_c, as one streaming loop over x per
    // (c, i, j) so that it vectorises.
    next.assign(static_cast<std::size_t>((width + most - 1) * k), 0.0);
    for (int used = 1; used <= most; ++used)
      for (Eigen::Index i = 0; i < k; ++i)
        for (Eigen::Index jj = 0; jj < k; ++jj) {
          const double s = c.succeed_flat[static_cast<std::size_t>(((used - 1) * k + i) * k + jj)];
          if (s == 0.0) continue;
          const double* src = cur.data() + i;
          double* dst = next.data() + (used - 1) * k + jj;
          for (std::int64_t x = 0; x < width; ++x) dst[x * k] += src[x * k] * s;
        }
    // Trim negligible ends.
    std::int64_t first = 0, last = width + most - 2;
    auto mass = [&](std::int64_t x) {
      double s = 0.0;
      for (Eigen::Index i = 0; i < k; ++i) s += next[static_cast<std::size_t>(x * k + i)];
      return s;
    };
    while (first <= last && mass(first) < options.prune_below) out.pruned_mass += mass(first++);
    while (last >= first && mass(last) < options.prune_below) out.pruned_mass += mass(last--);
    cur.assign(next.begin() + first * k, next.begin() + (last + 1) * k);
    lo += first;
  }
  // Whatever is still alive after the last call is done, or partial_done
  // in the trust bit's second half.
  const Eigen::Index clean = c.clean_states();
  const std::int64_t width = static_cast<std::int64_t>(cur.size()) / k;
  for (const auto& [outcome, from, to] : {std::tuple{Outcome::done, Eigen::Index{0}, clean},
                                         std::tuple{Outcome::partial_done, clean, k}}) {
    auto& bins = ended[static_cast<std::size_t>(outcome)];
    for (std::int64_t x = 0; x < width; ++x) {
      double s = 0.0;
      for (Eigen::Index i = from; i < to; ++i) s += cur[static_cast<std::size_t>(x * k + i)];
      if (!(s > 0.0)) continue;
      const auto m = static_cast<std::size_t>(policy.n + lo + x);
      if (m >= kMaxBins) return give_up();
      if (bins.size() <= m) bins.resize(m + 1, 0.0);
      bins[m] += s;
    }
  }
  append_requests(ended, out);
}

}  // namespace relsim::exact_detail
