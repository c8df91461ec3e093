#pragma once
// Header only: one small class.
// A per-minute request quota as a token bucket, the one model both the fleet
// simulation (docs/fleet.md, The provider) and the mock server's provider
// mode (docs/wire.md, Provider mode) answer 429s by, so that the live run and
// the simulation of one scenario limit alike. The bucket holds at most RPM
// tokens, starts full, and refills at RPM/60 per second; a request takes one
// token, and without one it is refused with the whole seconds until one is
// back (the retry-after header). Times are seconds on the caller's clock
// (model seconds); a time earlier than the last refill refills nothing.
#include <algorithm>
#include <cmath>

namespace relsim {

class TokenBucket {
 public:
  TokenBucket() = default;
  TokenBucket(double per_minute, double now) : rpm_(per_minute), tokens_(per_minute), refilled_at_(now) {}

  // Takes a token at `now`: 0 when it got one, else the retry-after in whole
  // seconds (at least 1).
  double take(double now) {
    refill(now);
    if (tokens_ < 1.0) return std::ceil((1.0 - tokens_) / per_second());
    tokens_ -= 1.0;
    return 0.0;
  }

  double tokens() const { return tokens_; }
  double per_minute() const { return rpm_; }
  // Seconds from the last take until the bucket is full again.
  double seconds_to_full() const { return (rpm_ - tokens_) / per_second(); }

 private:
  double per_second() const { return rpm_ / 60.0; }
  void refill(double now) {
    if (now <= refilled_at_) return;
    tokens_ = std::min(rpm_, tokens_ + (now - refilled_at_) * per_second());
    refilled_at_ = now;
  }

  double rpm_ = 0.0, tokens_ = 0.0, refilled_at_ = 0.0;
};

}  // namespace relsim
