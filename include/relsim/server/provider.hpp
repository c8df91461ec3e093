#pragma once
// The provider in front of the mock (docs/fleet.md, "The live provider"):
// what a shared model API does before any fault of the task's own. Each
// tenant (told apart by its `x-api-key`) has a token-bucket quota of
// requests per minute; past it the answer is 429 with `retry-after` (whole
// seconds) and the `anthropic-ratelimit-requests-*` headers. The provider
// serves at most `capacity` replies at once; past it the answer is 529
// overloaded. The quota is asked first, so a request refused for capacity
// has spent its token, as in the fleet simulation (fleet/replicate.cpp).
//
// Time is model time: one model second lasts `time_scale` wall seconds, so
// a bucket refills at quota / 60 tokens per model second and `retry-after`
// counts model seconds, as a client with the same time scale reads it.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/core/token_bucket.hpp"

namespace relsim {

struct ProviderConfig {
  double quota_rpm = 0.0;     // requests per minute per tenant; 0: none; else in (0, 1e9]
  std::int64_t capacity = 0;  // replies served at once; 0: none; else in [1, 1e6]
  double time_scale = 1.0;    // wall seconds per model second, in [1e-6, 1000]
  std::size_t max_tenants = 10'000;  // distinct keys; in [1, 1e6]
};
// Throws InputError naming the value and its valid range.
void validate(const ProviderConfig& config);

inline constexpr std::size_t kMaxTenantKeyBytes = 256;

// The provider's answer to one request.
struct Admission {
  enum class Verdict : std::uint8_t { admitted, over_quota, over_capacity, bad_key };
  Verdict verdict = Verdict::admitted;
  std::string why;           // bad_key: what is wrong with the key
  std::int64_t tenant = -1;  // the key's number, in order of first sight; -1 for bad_key
  bool quota = false;        // there is a quota: the next fields mean something
  double limit = 0.0;        // the quota, requests per minute
  std::int64_t remaining = 0;     // whole tokens left after this request
  double reset_seconds = 0.0;     // model seconds until the bucket is full again
  std::int64_t retry_after = 0;   // over_quota: model seconds until a token, rounded up
};

class Provider {
 public:
  explicit Provider(ProviderConfig config);  // validates

  // A request with key `key` ("" when it sent none) at `now` model seconds
  // since the provider started (non-decreasing per tenant is not required:
  // an earlier time refills nothing). An admitted request holds one unit of
  // capacity until release().
  Admission admit(std::string_view key, double now);
  void release();

  const ProviderConfig& config() const { return config_; }
  std::int64_t in_flight() const;
  std::size_t tenants() const;

 private:
  struct Bucket {
    std::int64_t tenant = 0;
    TokenBucket quota;
  };
  const ProviderConfig config_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
  std::int64_t in_flight_ = 0;
};

// The response headers that say an admission's quota state:
// anthropic-ratelimit-requests-limit, -remaining, -reset (RFC 3339, UTC, the
// wall time the bucket is full again: `wall_now_s` seconds since the Unix
// epoch plus reset_seconds × time_scale), and retry-after for a 429. None
// without a quota. In the OpenAI dialect: x-ratelimit-limit-requests,
// -remaining-requests and -reset-requests (the time until the bucket is
// full, in OpenAI's duration format: "1s", "6m0s").
std::vector<std::pair<std::string, std::string>> rate_limit_headers(const Admission& admission, double time_scale,
                                                                    double wall_now_s,
                                                                    Dialect dialect = Dialect::anthropic);

}  // namespace relsim
