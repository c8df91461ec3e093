// SimResult: the figures derived from its totals (simulate.hpp), and the
// sums of its totals over threads and ranks (montecarlo/result.hpp).
#include "montecarlo/result.hpp"

#include <algorithm>

#include "relsim/core/error.hpp"

namespace relsim {

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

double SimResult::fault_share() const {
  return requests > 0 ? static_cast<double>(bad_requests()) / static_cast<double>(requests) : 0.0;
}

std::int64_t SimResult::bad_requests() const {
  std::int64_t sum = 0;
  for (const auto x : faults) sum += x;
  return sum;
}

namespace detail {

std::size_t histogram_bins(const Policy& policy) {
  const bool keep = policy.max_requests() <= kMaxHistogramRequests;
  return keep ? static_cast<std::size_t>(policy.max_requests() + 1) : 0;
}

SimResult empty_result(std::size_t bins) {
  SimResult r;
  r.done_by_requests.assign(bins, 0);
  r.env_by_requests.assign(bins, 0);
  return r;
}

void add_counts(SimResult& into, const SimResult& part) {
  const auto to = count_fields(into);
  const auto from = count_fields(part);
  for (std::size_t f = 0; f < to.size(); ++f) {
    RELSIM_ASSERT(to[f].size() == from[f].size());
    for (std::size_t i = 0; i < to[f].size(); ++i) to[f][i] += from[f][i];
  }
  // Keyed integer counts: the same whatever the order of the parts.
  for (const auto& [nano, tasks] : part.cost_done) into.cost_done[nano] += tasks;
  for (const auto& [nano, tasks] : part.cost_failed) into.cost_failed[nano] += tasks;
}

std::vector<std::int64_t> pack_counts(const SimResult& r) {
  std::vector<std::int64_t> packed;
  for (const auto field : count_fields(r)) packed.insert(packed.end(), field.begin(), field.end());
  return packed;
}

void unpack_counts(const std::vector<std::int64_t>& packed, SimResult& r) {
  auto at = packed.begin();
  for (const auto field : count_fields(r)) {
    const auto size = static_cast<std::ptrdiff_t>(field.size());
    RELSIM_ASSERT(packed.end() - at >= size);
    std::copy_n(at, size, field.begin());
    at += size;
  }
  RELSIM_ASSERT(at == packed.end());
}

}  // namespace detail
}  // namespace relsim
