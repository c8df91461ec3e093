#pragma once
// Header only: one small class.
// The gate of a coordinated start: a wave's tasks are released together.
#include <cstddef>
#include <mutex>
#include <vector>

#include "client/asio_names.hpp"

namespace relsim::live_client {

// Opens when `expected` tasks have arrived; each waits on its own timer,
// which the last arrival moves to the past (on the waiter's own executor,
// so it is safe with many threads).
class StartGate {
 public:
  explicit StartGate(std::size_t expected) : expected_(expected) {}

  asio::awaitable<void> arrive_and_wait() {
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    asio::steady_timer timer(executor, Clock::time_point::max());
    {
      std::lock_guard lock(mutex_);
      if (waiting_.size() + 1 < expected_) {
        waiting_.push_back(&timer);
      } else {
        for (asio::steady_timer* t : waiting_)
          asio::post(t->get_executor(), [t] { t->expires_at(Clock::time_point::min()); });
        waiting_.clear();
        co_return;
      }
    }
    error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    // Both a fired and a moved timer mean the gate is open.
  }

 private:
  std::mutex mutex_;
  std::size_t expected_;
  std::vector<asio::steady_timer*> waiting_;
};

}  // namespace relsim::live_client
