#pragma once
// Header only: small classes whose calls sit in hot loops.
// Client-side retry throttling as practised (docs/fleet.md, Throttles): the
// state one client keeps for all the agents of a tenant, told of every
// request sent and every answer, and asked before each retry. The fleet's
// event simulation, relsim's live client and its oracle use this one class,
// so the simulated, predicted and live throttles are the same rules.
#include <algorithm>
#include <cstdint>

#include "relsim/core/faults.hpp"

namespace relsim {

// Which throttle (relsim fleet --throttle, relsim live --throttle). A denied
// retry ends the call as if its retries were spent: the task ends env_error
// with the fault it last saw.
//   none
//   grpc:MAX,RATIO  gRPC's retryThrottling: tokens start at MAX; each failed
//                   response costs 1 (floor 0), each good one returns RATIO
//                   (cap MAX); no retry while tokens <= MAX / 2.
//   aws             the AWS SDKs' standard mode: a quota of 500 tokens; a
//                   retry takes 5 (10 after a timeout: slow_headers, stall, stall_first);
//                   a good retry gives its cost back and a good first
//                   attempt returns 1 (cap 500), as botocore; no retry when the
//                   quota cannot pay.
//   budget:RATIO[,MIN]  a retry budget (Envoy's): a retry may be sent while
//                   the tenant's retries in flight are below
//                   max(MIN, RATIO x its requests in flight); MIN defaults to 3.
// parse_throttle and to_string are in relsim/fleet/scenario.hpp.
struct Throttle {
  enum class Kind { none, grpc, aws, budget };
  Kind kind = Kind::none;
  double max_tokens = 10.0, token_ratio = 0.1;  // grpc
  double ratio = 0.2;                           // budget
  int min_retries = 3;                          // budget
};

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
        const bool timeout =
            kind == FaultKind::slow_headers || kind == FaultKind::stall || kind == FaultKind::stall_first;
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

}  // namespace relsim
