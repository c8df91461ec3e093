#pragma once
// Header only: one small class.
// The client's retry throttles (ClientConfig::throttle): one RetryThrottle
// per tenant, shared by the tasks of a run, each behind a mutex for runs on
// several threads, indexed by tenant (ClientConfig::tenant_of).
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

  void sent(int tenant, bool retry) {
    One& one = *each_[static_cast<std::size_t>(tenant)];
    std::lock_guard lock(one.mu);
    one.throttle.sent(retry);
  }
  void answered(int tenant, bool retry, bool good, double paid) {
    One& one = *each_[static_cast<std::size_t>(tenant)];
    std::lock_guard lock(one.mu);
    one.throttle.answered(retry, good, paid);
  }
  bool allow_retry(int tenant, FaultKind kind, double& paid) {
    One& one = *each_[static_cast<std::size_t>(tenant)];
    std::lock_guard lock(one.mu);
    return one.throttle.allow_retry(kind, paid);
  }

 private:
  struct One {
    explicit One(const Throttle& rule) : throttle(rule) {}
    std::mutex mu;
    RetryThrottle throttle;
  };
  std::vector<std::unique_ptr<One>> each_;
};

}  // namespace relsim::live_client
