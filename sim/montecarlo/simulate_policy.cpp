// simulate() for the policies with fault kinds that decide the retries:
// naive, layered and budgeted (SPEC section 2). The simple policy has its own
// faster kernels in simulate.cpp; both draw the same numbers.
#include <omp.h>

#include <algorithm>
#include <utility>

#include "montecarlo/policy_walk.hpp"
#include "relsim/core/error.hpp"

namespace relsim::detail {
namespace {

struct PolicyTally {
  SimResult part;
  explicit PolicyTally(std::size_t bins) {
    part.done_by_requests.assign(bins, 0);
    part.env_by_requests.assign(bins, 0);
  }
  // Returns whether the task ended done.
  bool add(const DrawScheme& s, const Policy& policy, std::uint64_t seed, std::int64_t task, Entry entry) {
    const TaskRunner runner = walk_policy_task(s, policy, seed, task, entry, [&](const std::optional<FaultKind>& r, bool sent) {
      if (sent && r) ++part.faults[static_cast<std::size_t>(*r)];
    });
    RELSIM_ASSERT(runner.ended());
    const bool done = runner.outcome().outcome == Outcome::done;
    ++part.tasks;
    part.successes += done ? 1 : 0;
    part.requests += runner.requests();
    part.calls_succeeded += runner.call();
    ++part.outcomes[static_cast<std::size_t>(index_of(runner.outcome()))];
    if (!part.done_by_requests.empty())
      ++(done ? part.done_by_requests : part.env_by_requests)[static_cast<std::size_t>(runner.requests())];
    return done;
  }
  void merge_into(SimResult& out) const {
    out.tasks += part.tasks;
    out.successes += part.successes;
    out.requests += part.requests;
    out.calls_succeeded += part.calls_succeeded;
    for (std::size_t k = 0; k < part.faults.size(); ++k) out.faults[k] += part.faults[k];
    for (std::size_t o = 0; o < part.outcomes.size(); ++o) out.outcomes[o] += part.outcomes[o];
    for (std::size_t i = 0; i < 2; ++i) {
      out.pairs_after[i] += part.pairs_after[i];
      out.done_after[i] += part.done_after[i];
    }
    for (std::size_t m = 0; m < part.done_by_requests.size(); ++m) {
      out.done_by_requests[m] += part.done_by_requests[m];
      out.env_by_requests[m] += part.env_by_requests[m];
    }
  }
};

constexpr std::int64_t kChunk = 1024;

}  // namespace

SimResult simulate_policy(const Model& model, const Policy& policy, const SimConfig& config, const DrawScheme& s) {
  const bool keep_histogram = policy.max_requests() <= kMaxHistogramRequests;
  const std::size_t bins = keep_histogram ? static_cast<std::size_t>(policy.max_requests() + 1) : 0;
  SimResult result;
  result.done_by_requests.assign(bins, 0);
  result.env_by_requests.assign(bins, 0);
  result.outcomes_by_class = true;
  const int threads = config.threads > 0 ? config.threads : omp_get_max_threads();
  const bool fresh = model.chain == ChainScope::fresh;
  const std::int64_t units = fresh ? (config.tasks + kChunk - 1) / kChunk : config.lanes;
  // This rank's chunks or lanes (SimConfig::share); simulate() sums the ranks.
  // Not a structured binding: clang 14 cannot refer to one inside an OpenMP region.
  const std::pair<std::int64_t, std::int64_t> unit_range = config.share.range(units);
  const std::int64_t first_unit = unit_range.first, last_unit = unit_range.second;
#pragma omp parallel num_threads(threads)
  {
    PolicyTally tally(bins);
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t u = first_unit; u < last_unit; ++u) {
      if (fresh) {
        const std::int64_t last = std::min(config.tasks, (u + 1) * kChunk);
        for (std::int64_t t = u * kChunk; t < last; ++t) tally.add(s, policy, config.seed, t, Entry::task_start);
      } else {
        // Tasks u, u + lanes, ... in order, the chain carried between them.
        Entry entry = Entry::lane_start;
        int previous = -1;  // the earlier task's outcome: 0 not done, 1 done
        for (std::int64_t t = u; t < config.tasks; t += config.lanes) {
          const bool done = tally.add(s, policy, config.seed, t, entry);
          if (previous >= 0) {
            ++tally.part.pairs_after[static_cast<std::size_t>(previous)];
            tally.part.done_after[static_cast<std::size_t>(previous)] += done ? 1 : 0;
          }
          previous = done ? 1 : 0;
          entry = done ? Entry::after_good : Entry::after_bad;
        }
      }
    }
#pragma omp critical(relsim_simulate_policy_merge)
    tally.merge_into(result);
  }
  return result;
}

}  // namespace relsim::detail
