#pragma once
// The per-tenant tool quota of the MCP tools server (docs/contention.md,
// "Shared tools"): each tenant may make `calls` tools/calls in each window
// of `window_ms`, the windows counted from the server's start (window k is
// [k W, (k + 1) W)). A call over the quota is refused with HTTP 429 and a
// `retry-after` of the whole seconds left in the window, before it reaches
// any tool or takes a fault; the tenants' counts are independent, so one
// tenant's agents can use up their own quota and nobody else's.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace relsim::tools {

// Tenants counted at once; past it, the counts of ended windows are dropped
// (a tenant's name is 1 to 64 characters: a few megabytes at most).
inline constexpr std::size_t kMaxTenants = 100'000;

struct QuotaSpec {
  std::int64_t calls = 0;      // per window, >= 1
  std::int64_t window_ms = 0;  // >= 1
};
// "5000/3600": calls per window in seconds (a decimal number of seconds,
// at least 0.001); throws InputError naming the value and the ranges.
QuotaSpec parse_quota(std::string_view spec);

struct QuotaDecision {
  bool allowed = true;
  std::int64_t remaining = 0;          // calls left in the window after this one
  std::int64_t retry_after_s = 0;      // refused: whole seconds to the window's end, >= 1
};

class ToolQuota {
 public:
  explicit ToolQuota(QuotaSpec spec) : spec_(spec) {}
  const QuotaSpec& spec() const { return spec_; }
  // Counts a call of `tenant` at `now_ms` (>= 0), or refuses it.
  QuotaDecision take(std::string_view tenant, std::int64_t now_ms);

 private:
  struct Window {
    std::int64_t index = -1, used = 0;
  };
  QuotaSpec spec_;
  std::map<std::string, Window, std::less<>> tenants_;
};

}  // namespace relsim::tools
