#pragma once
// Internal to the workbench's server: commands run off the I/O thread.
//
// A command may take seconds (10^7 simulated tasks, a live run); the thread
// serving the sockets must not wait for it, or the page's own assets would
// stall behind it. So each command runs on a pool of UiConfig::threads
// threads, and the connection that asked awaits a CommandJob: the pool
// thread posts "something changed" to the I/O thread (a cancelled timer),
// never the other way round, and no lock is held across an await.
//
// Cancellation is cooperative, through the command's progress reports
// (CommandHooks::progress): the hook throws Cancelled once the server is
// stopping or the job's client has gone (mark_gone), so a command stops at
// its next report. A command that reports nothing runs to its end.
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without it

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include <boost/asio.hpp>

#include "relsim/ui/command.hpp"

namespace relsim::ui {

namespace net = boost::asio;
using Clock = std::chrono::steady_clock;

// What a pool thread runs: usually the runner with fixed arguments; for
// POST /api/audit also the upload's files around it.
using Work = std::function<CommandResult(const CommandHooks&)>;

struct Progress {
  std::int64_t done = 0, total = 0;
};

class CommandJob : public std::enable_shared_from_this<CommandJob> {
 public:
  // `io`: the executor of the connection that awaits the job. `keep_progress`:
  // whether reports are kept for the connection (a stream) or only checked
  // for cancellation.
  CommandJob(net::any_io_executor io, bool keep_progress);

  // --- the pool thread's side (any thread) ---
  void report(std::int64_t done, std::int64_t total);  // keeps the newest
  void finish(CommandResult result);

  // --- either side ---
  void mark_gone() { gone_.store(true, std::memory_order_relaxed); }
  bool gone() const { return gone_.load(std::memory_order_relaxed); }

  // --- the I/O thread's side ---
  // Returns once the result is there, or a report is there and the time is
  // past `progress_after` (the throttle of a stream's progress events).
  net::awaitable<void> wait(Clock::time_point progress_after = Clock::time_point::max());
  std::optional<Progress> take_progress();
  std::optional<CommandResult> take_result();

 private:
  void wake_locked();  // with mu_ held: posts the timer's cancel, once per change

  net::steady_timer timer_;  // I/O thread only
  const bool keep_progress_;
  std::atomic<bool> gone_{false};
  std::mutex mu_;
  std::optional<Progress> progress_;
  std::optional<CommandResult> result_;
  bool wake_posted_ = false;
};

class CommandPool {
 public:
  explicit CommandPool(int threads);
  ~CommandPool();  // stop()
  CommandPool(const CommandPool&) = delete;
  CommandPool& operator=(const CommandPool&) = delete;

  // Queues `work` for a pool thread. Once stop() has begun, the job is
  // finished at once with kCommandCancelled and nothing runs.
  std::shared_ptr<CommandJob> start(net::any_io_executor io, Work work, bool keep_progress);
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }
  // Cancels running commands at their next report, skips queued ones, and
  // joins the threads. Idempotent.
  void stop();

 private:
  void run(CommandJob& job, const Work& work);

  std::mutex mu_;  // orders start()'s post before stop()'s join
  std::atomic<bool> stopping_{false};
  net::thread_pool threads_;
};

}  // namespace relsim::ui
