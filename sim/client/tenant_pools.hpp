#pragma once
// Header only: one small class and its permit.
// The client's connection pool per tenant (ClientConfig::pool), as the fleet
// simulation has it (docs/fleet.md, The client): K connections a tenant's
// tasks share; a request holds one from before it connects (or reuses its
// slot's idle one) until its answer ends, and a request that finds all K
// taken waits for one, in order of arrival. Each waiter waits on its own
// timer, which a release moves to the past on the waiter's own executor (as
// StartGate does), so it is safe with many threads.
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "client/asio_names.hpp"

namespace relsim::live_client {

class TenantPools;

// One connection of a tenant's pool, held; released when destroyed.
class PoolPermit {
 public:
  PoolPermit() = default;
  PoolPermit(TenantPools* pools, int tenant) : pools_(pools), tenant_(tenant) {}
  PoolPermit(PoolPermit&& o) noexcept : pools_(o.pools_), tenant_(o.tenant_) { o.pools_ = nullptr; }
  PoolPermit& operator=(PoolPermit&& o) noexcept;
  PoolPermit(const PoolPermit&) = delete;
  PoolPermit& operator=(const PoolPermit&) = delete;
  ~PoolPermit() { release(); }
  void release();

 private:
  TenantPools* pools_ = nullptr;
  int tenant_ = 0;
};

class TenantPools {
 public:
  TenantPools(int size, int tenants) {
    for (int t = 0; t < (tenants > 0 ? tenants : 1); ++t) each_.push_back(std::make_unique<One>(size));
  }

  // A connection of `tenant`'s pool, after waiting for one if all are taken.
  asio::awaitable<PoolPermit> acquire(int tenant) {
    One& one = *each_[static_cast<std::size_t>(tenant)];
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    asio::steady_timer timer(executor, Clock::time_point::max());
    {
      std::lock_guard lock(one.mu);
      if (one.free > 0 && one.waiting.empty()) {
        --one.free;
        co_return PoolPermit(this, tenant);
      }
      one.waiting.push_back(&timer);
    }
    error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    // Only a release moves the timer: the connection is ours.
    co_return PoolPermit(this, tenant);
  }

  void release(int tenant) {
    One& one = *each_[static_cast<std::size_t>(tenant)];
    std::lock_guard lock(one.mu);
    if (one.waiting.empty()) {
      ++one.free;
      return;
    }
    asio::steady_timer* next = one.waiting.front();
    one.waiting.pop_front();
    asio::post(next->get_executor(), [next] { next->expires_at(Clock::time_point::min()); });
  }

 private:
  struct One {
    explicit One(int size) : free(size) {}
    std::mutex mu;
    int free;
    std::deque<asio::steady_timer*> waiting;
  };
  std::vector<std::unique_ptr<One>> each_;
};

inline void PoolPermit::release() {
  if (pools_) pools_->release(tenant_);
  pools_ = nullptr;
}

inline PoolPermit& PoolPermit::operator=(PoolPermit&& o) noexcept {
  if (this != &o) {
    release();
    pools_ = o.pools_;
    tenant_ = o.tenant_;
    o.pools_ = nullptr;
  }
  return *this;
}

}  // namespace relsim::live_client
