#pragma once
// Header only: two small classes.
// How simulate() and simulate_time() report to SimConfig::progress, and run_fleet to fleet::RunConfig::progress.
//
// Every thread adds the tasks it finished to one count; OpenMP's thread 0
// alone (the thread that called the engine) calls the callback, with the
// count of the whole rank. So a progress line, or the workbench's hook that
// may throw Cancelled to stop the run, needs no lock, and its exception is
// carried out of the region by for_each_unit's FirstError.
//
// Thread 0 reports each time it has finished kProgressTasks more tasks: with
// T threads about every T x kProgressTasks tasks of the run, e.g. some 100
// reports over 10^5 tasks on 8 threads. Units of work (chunks of kChunk
// tasks, lanes) stay as they are; only the reports come inside them, and
// which thread runs a task never changes its draws, so no result changes.
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <functional>

namespace relsim::detail {

inline constexpr std::int64_t kProgressTasks = 128;

class Progress {
 public:
  explicit Progress(const std::function<void(std::int64_t)>& callback) : callback_(callback) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool wanted() const { return static_cast<bool>(callback_); }
  // `count` more tasks finished on the calling thread.
  void add(std::int64_t count) {
    if (!callback_ || count == 0) return;
    const std::int64_t now = finished_.fetch_add(count, std::memory_order_relaxed) + count;
    if (omp_get_thread_num() == 0) callback_(now);
  }

 private:
  const std::function<void(std::int64_t)>& callback_;
  std::atomic<std::int64_t> finished_{0};
};

// The tasks of one unit, reported kProgressTasks at a time; finish() reports
// the rest at the unit's end (not a destructor: the report may throw).
class UnitProgress {
 public:
  explicit UnitProgress(Progress& progress) : progress_(progress) {}
  void task() {
    if (++pending_ == kProgressTasks) finish();
  }
  void finish() {
    progress_.add(pending_);
    pending_ = 0;
  }

 private:
  Progress& progress_;
  std::int64_t pending_ = 0;
};

}  // namespace relsim::detail
