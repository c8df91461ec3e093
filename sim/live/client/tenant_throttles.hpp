#pragma once
// The client's retry throttles (ClientConfig::throttle): one RetryThrottle
// per tenant, shared by the tasks of a run, each behind a mutex for runs on
// several threads. Task t belongs to tenant t mod tenants (0 tenants: one).
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "relsim/core/retry_throttle.hpp"

namespace relsim::live_client {

class TenantThrottles {
 public:
  TenantThrottles(const Throttle& rule, int tenants) {
    for (int t = 0; t < (tenants > 0 ? tenants : 1); ++t) each_.push_back(std::make_unique<One>(rule));
  }

  void sent(std::int64_t task, bool retry) {
    One& one = of(task);
    std::lock_guard lock(one.mu);
    one.throttle.sent(retry);
  }
  void answered(std::int64_t task, bool retry, bool good, double paid) {
    One& one = of(task);
    std::lock_guard lock(one.mu);
    one.throttle.answered(retry, good, paid);
  }
  bool allow_retry(std::int64_t task, FaultKind kind, double& paid) {
    One& one = of(task);
    std::lock_guard lock(one.mu);
    return one.throttle.allow_retry(kind, paid);
  }

 private:
  struct One {
    explicit One(const Throttle& rule) : throttle(rule) {}
    std::mutex mu;
    RetryThrottle throttle;
  };
  One& of(std::int64_t task) { return *each_[static_cast<std::size_t>(task % static_cast<std::int64_t>(each_.size()))]; }

  std::vector<std::unique_ptr<One>> each_;
};

}  // namespace relsim::live_client
