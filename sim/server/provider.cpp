// Per-tenant quotas and a capacity limit in front of the mock (provider.hpp).
#include "relsim/server/provider.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "server/openai_wire.hpp"

namespace relsim {

void validate(const ProviderConfig& c) {
  if (!(c.quota_rpm == 0.0 || (c.quota_rpm > 0.0 && c.quota_rpm <= 1e9)))
    throw InputError(fmt::format("quota = {} is out of range: it must be in (0, 1e9] requests per minute", c.quota_rpm));
  if (c.capacity < 0 || c.capacity > 1'000'000)
    throw InputError(fmt::format("capacity = {} is out of range: it must be in [1, 1000000] replies at once",
                                 c.capacity));
  if (!(c.time_scale >= 1e-6 && c.time_scale <= 1000.0))
    throw InputError(fmt::format("time scale = {} is out of range: it must be in [1e-6, 1000] wall seconds per model second",
                                 c.time_scale));
  if (c.max_tenants < 1 || c.max_tenants > 1'000'000)
    throw InputError(fmt::format("max tenants = {} is out of range: it must be in [1, 1000000]", c.max_tenants));
}

Provider::Provider(ProviderConfig config) : config_(config) { validate(config_); }

Admission Provider::admit(std::string_view key, double now) {
  Admission a;
  if (key.size() > kMaxTenantKeyBytes) {
    a.verdict = Admission::Verdict::bad_key;
    a.why = fmt::format("x-api-key has {} bytes: at most {}", key.size(), kMaxTenantKeyBytes);
    return a;
  }
  if (!std::all_of(key.begin(), key.end(), [](char c) { return c > 0x20 && c < 0x7f; })) {
    a.verdict = Admission::Verdict::bad_key;
    a.why = "x-api-key must be printable ASCII without spaces";
    return a;
  }
  std::lock_guard lock(mu_);
  auto it = buckets_.find(std::string(key));
  if (it == buckets_.end()) {
    if (buckets_.size() >= config_.max_tenants) {
      a.verdict = Admission::Verdict::bad_key;
      a.why = fmt::format("a new x-api-key would be tenant number {}: the provider takes at most {} tenants",
                          buckets_.size() + 1, config_.max_tenants);
      return a;
    }
    it = buckets_.emplace(std::string(key),
                          Bucket{static_cast<std::int64_t>(buckets_.size()), TokenBucket(config_.quota_rpm, now)})
             .first;
  }
  Bucket& b = it->second;
  a.tenant = b.tenant;
  if (config_.quota_rpm > 0.0) {
    a.quota = true;
    a.limit = config_.quota_rpm;
    if (const double wait = b.quota.take(now); wait > 0.0) {
      a.verdict = Admission::Verdict::over_quota;
      a.retry_after = static_cast<std::int64_t>(wait);
    }
    a.remaining = static_cast<std::int64_t>(std::floor(b.quota.tokens()));
    a.reset_seconds = b.quota.seconds_to_full();
    if (a.verdict == Admission::Verdict::over_quota) return a;
  }
  if (config_.capacity > 0 && in_flight_ >= config_.capacity) {
    a.verdict = Admission::Verdict::over_capacity;
    return a;
  }
  ++in_flight_;
  return a;
}

void Provider::release() {
  std::lock_guard lock(mu_);
  if (in_flight_ > 0) --in_flight_;
}

std::int64_t Provider::in_flight() const {
  std::lock_guard lock(mu_);
  return in_flight_;
}

std::size_t Provider::tenants() const {
  std::lock_guard lock(mu_);
  return buckets_.size();
}

std::vector<std::pair<std::string, std::string>> rate_limit_headers(const Admission& a, double time_scale,
                                                                    double wall_now_s, Dialect dialect) {
  std::vector<std::pair<std::string, std::string>> h;
  if (!a.quota) return h;
  if (dialect == Dialect::openai) {
    h.emplace_back("x-ratelimit-limit-requests", fmt::format("{:g}", a.limit));
    h.emplace_back("x-ratelimit-remaining-requests", std::to_string(a.remaining));
    h.emplace_back("x-ratelimit-reset-requests", wire::openai::duration(a.reset_seconds * time_scale));
    if (a.verdict == Admission::Verdict::over_quota) h.emplace_back("retry-after", std::to_string(a.retry_after));
    return h;
  }
  const auto full_at = static_cast<std::time_t>(std::ceil(wall_now_s + a.reset_seconds * time_scale));
  std::tm utc{};
  gmtime_r(&full_at, &utc);
  h.emplace_back("anthropic-ratelimit-requests-limit", fmt::format("{:g}", a.limit));
  h.emplace_back("anthropic-ratelimit-requests-remaining", std::to_string(a.remaining));
  char reset[32];
  std::strftime(reset, sizeof reset, "%Y-%m-%dT%H:%M:%SZ", &utc);
  h.emplace_back("anthropic-ratelimit-requests-reset", reset);
  if (a.verdict == Admission::Verdict::over_quota) h.emplace_back("retry-after", std::to_string(a.retry_after));
  return h;
}

}  // namespace relsim
