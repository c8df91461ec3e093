#pragma once
// Internal: a SimResult's integer totals, listed once (count_fields) and
// summed from it: a thread's tally into the run's result (add_counts), and
// the sum over MPI ranks (pack_counts, unpack_counts). Integer sums, so the
// order of the parts never changes a result.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "relsim/montecarlo/simulate.hpp"

namespace relsim::detail {

// Every integer total of `r` (a SimResult or a const one), in one fixed
// order, each as a span of its counts.
template <class Result>
auto count_fields(Result& r) {
  using Count = std::conditional_t<std::is_const_v<Result>, const std::int64_t, std::int64_t>;
  using Field = std::span<Count>;
  return std::array<Field, 12>{Field(&r.tasks, 1),         Field(&r.successes, 1), Field(&r.requests, 1),
                               Field(&r.calls_succeeded, 1), Field(&r.second_requests, 1), Field(r.faults),
                               Field(r.outcomes),            Field(r.pairs_after),  Field(r.done_after),
                               Field(r.done_by_requests),    Field(r.env_by_requests), Field(r.tool_outcomes)};
}

// The length of the request-count histograms for `policy`: one bin per
// request count 0 .. policy.max_requests(), or 0 (not kept) above
// kMaxHistogramRequests.
std::size_t histogram_bins(const Policy& policy);

// Every total zero, the request-count histograms `bins` long.
SimResult empty_result(std::size_t bins);

// Adds the totals of `part` into `into`; their histograms have one length.
void add_counts(SimResult& into, const SimResult& part);

// Every total of `r` in count_fields' order, for parallel::sum_all; and back.
std::vector<std::int64_t> pack_counts(const SimResult& r);
void unpack_counts(const std::vector<std::int64_t>& packed, SimResult& r);

}  // namespace relsim::detail
