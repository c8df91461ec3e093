#pragma once
// Header only: a template.
// The one OpenMP loop of simulate() (its chunks of fresh tasks and its lanes,
// under every policy) and of run_fleet (its replicates).
//
// Each thread makes its own state (its integer totals and scratch) and runs
// units, one at a time as they come free (the next from a shared counter,
// as schedule(dynamic, 1) would); then the states are merged one thread at
// a time. Units and draws are fixed by the
// task index and the totals are integers, so no thread count or schedule
// can change a result.
//
// An exception inside the region (a failed RELSIM_ASSERT, bad_alloc, a
// progress callback's, such as a cancel) would be std::terminate there;
// FirstError carries the first one out, no thread takes another unit, and
// it is thrown again here, after the region, on the calling thread. (An omp
// for would still walk every unit left to skip it: 10^9 chunks of a 10^12-task
// run take seconds.)
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <optional>

#include "relsim/core/error.hpp"

namespace relsim::detail {

// make_state() -> State; run_unit(State&, unit) for every unit in [first,
// last); merge(const State&) for every thread's state. threads: 0 for
// OpenMP's default.
template <class MakeState, class RunUnit, class Merge>
void for_each_unit(int threads, std::int64_t first, std::int64_t last, MakeState&& make_state, RunUnit&& run_unit,
                   Merge&& merge) {
  FirstError error;
  std::atomic<std::int64_t> next{first};
#pragma omp parallel num_threads(threads > 0 ? threads : omp_get_max_threads())
  {
    std::optional<decltype(make_state())> state;
    error.run([&] { state.emplace(make_state()); });
    // Once an error is kept, run() skips its body, so no body sees an empty state.
    for (std::int64_t unit = next.fetch_add(1, std::memory_order_relaxed); unit < last && !error.failed();
         unit = next.fetch_add(1, std::memory_order_relaxed))
      error.run([&] { run_unit(*state, unit); });
#pragma omp critical(relsim_for_each_unit_merge)
    error.run([&] { merge(*state); });
  }
  error.rethrow();
}

}  // namespace relsim::detail
