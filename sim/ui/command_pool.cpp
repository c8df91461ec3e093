// Commands run off the I/O thread, and how the connection that asked learns
// of their progress and end (command_pool.hpp).
#include "ui/command_pool.hpp"

#include <boost/asio/redirect_error.hpp>

#include "relsim/core/error.hpp"

namespace relsim::ui {

CommandJob::CommandJob(net::any_io_executor io, bool keep_progress)
    : timer_(std::move(io)), keep_progress_(keep_progress) {}

void CommandJob::wake_locked() {
  if (wake_posted_) return;
  wake_posted_ = true;
  net::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
}

void CommandJob::report(std::int64_t done, std::int64_t total) {
  if (!keep_progress_) return;
  const std::lock_guard lock(mu_);
  progress_ = Progress{done, total};
  wake_locked();
}

void CommandJob::finish(CommandResult result) {
  const std::lock_guard lock(mu_);
  result_ = std::move(result);
  wake_locked();
}

// The state is looked at, and the wait begun, with no suspension between:
// a wake posted after the look runs on this (the I/O) thread only once the
// coroutine is suspended in async_wait, so it cannot be lost.
net::awaitable<void> CommandJob::wait(Clock::time_point progress_after) {
  for (;;) {
    Clock::time_point until = Clock::time_point::max();
    {
      const std::lock_guard lock(mu_);
      wake_posted_ = false;
      if (result_) co_return;
      if (progress_) {
        if (Clock::now() >= progress_after) co_return;
        until = progress_after;
      }
    }
    boost::system::error_code ec;
    timer_.expires_at(until);
    co_await timer_.async_wait(net::redirect_error(net::use_awaitable, ec));
  }
}

std::optional<Progress> CommandJob::take_progress() {
  const std::lock_guard lock(mu_);
  return std::exchange(progress_, std::nullopt);
}

std::optional<CommandResult> CommandJob::take_result() {
  const std::lock_guard lock(mu_);
  return std::exchange(result_, std::nullopt);
}

// --- the pool -------------------------------------------------------------------

CommandPool::CommandPool(int threads) : threads_(static_cast<std::size_t>(threads)) {}

CommandPool::~CommandPool() { stop(); }

std::shared_ptr<CommandJob> CommandPool::start(net::any_io_executor io, Work work, bool keep_progress) {
  auto job = std::make_shared<CommandJob>(std::move(io), keep_progress);
  {
    const std::lock_guard lock(mu_);
    if (!stopping()) {
      net::post(threads_, [this, job, work = std::move(work)] { run(*job, work); });
      return job;
    }
  }
  job->finish({kCommandCancelled, "", "cancelled: the server is stopping", ""});
  return job;
}

void CommandPool::run(CommandJob& job, const Work& work) {
  CommandHooks hooks;
  hooks.progress = [this, &job](std::int64_t done, std::int64_t total) {
    if (stopping()) throw Cancelled("the server is stopping");
    if (job.gone()) throw Cancelled("the client has gone");
    job.report(done, total);
  };
  CommandResult result;
  if (stopping()) {
    result = {kCommandCancelled, "", "cancelled: the server is stopping", ""};
  } else {
    // The runner promises not to throw; a Work of ours or a test's runner
    // might, and a pool thread must not die of it.
    try {
      result = work(hooks);
    } catch (const Cancelled& e) {
      result = {kCommandCancelled, "", std::string("cancelled: ") + e.what(), ""};
    } catch (const std::exception& e) {
      result = {3, "", e.what(), ""};
    } catch (...) {
      result = {3, "", "the command failed with an unknown exception", ""};
    }
  }
  job.finish(std::move(result));
}

void CommandPool::stop() {
  {
    const std::lock_guard lock(mu_);
    stopping_.store(true, std::memory_order_relaxed);
  }
  threads_.join();
}

}  // namespace relsim::ui
