#pragma once
// A tenant's retry throttle in the event simulation (scenario.hpp, Throttle):
// the state one client keeps for all its agents, told of every request sent
// and every answer, and asked before each retry.
#include <algorithm>
#include <cstdint>

#include "relsim/core/faults.hpp"
#include "relsim/fleet/scenario.hpp"

namespace relsim::fleet {

class RetryThrottle {
 public:
  // The AWS SDKs' standard mode (their documented defaults).
  static constexpr double kAwsQuota = 500.0, kAwsRetryCost = 5.0, kAwsTimeoutCost = 10.0, kAwsRefund = 1.0;

  explicit RetryThrottle(const Throttle& rule)
      : rule_(rule), tokens_(rule.kind == Throttle::Kind::aws ? kAwsQuota : rule.max_tokens) {}

  // A request leaves for the provider (retry: it is not its call's first).
  void sent(bool retry) {
    ++in_flight_;
    if (retry) ++retries_in_flight_;
  }

  // Its answer came back (good, or a fault of any kind: 429, 529, a header
  // timeout and the exogenous faults alike). `paid`: what allow_retry took
  // for this request (AWS), 0 for a first attempt.
  void answered(bool retry, bool good, double paid) {
    --in_flight_;
    if (retry) --retries_in_flight_;
    switch (rule_.kind) {
      case Throttle::Kind::grpc:
        tokens_ = good ? std::min(rule_.max_tokens, tokens_ + rule_.token_ratio) : std::max(0.0, tokens_ - 1.0);
        break;
      case Throttle::Kind::aws:
        // As botocore's quota: a good retry gives its cost back, a good first attempt 1.
        if (good) tokens_ = std::min(kAwsQuota, tokens_ + (paid > 0.0 ? paid : kAwsRefund));
        break;
      default:
        break;
    }
  }

  // May the call retry after a fault of `kind`? An AWS retry pays its cost
  // here, and `paid` says how much (0 otherwise).
  bool allow_retry(FaultKind kind, double& paid) {
    paid = 0.0;
    switch (rule_.kind) {
      case Throttle::Kind::none:
        return true;
      case Throttle::Kind::grpc:
        return tokens_ > rule_.max_tokens / 2.0;
      case Throttle::Kind::aws: {
        const bool timeout = kind == FaultKind::slow_headers || kind == FaultKind::stall;
        const double cost = timeout ? kAwsTimeoutCost : kAwsRetryCost;
        if (tokens_ < cost) return false;
        tokens_ -= cost;
        paid = cost;
        return true;
      }
      case Throttle::Kind::budget: {
        const double allowed = std::max(static_cast<double>(rule_.min_retries),
                                        rule_.ratio * static_cast<double>(in_flight_));
        return static_cast<double>(retries_in_flight_) < allowed;
      }
    }
    return true;
  }

 private:
  Throttle rule_;
  double tokens_;
  std::int64_t in_flight_ = 0, retries_in_flight_ = 0;
};

}  // namespace relsim::fleet
