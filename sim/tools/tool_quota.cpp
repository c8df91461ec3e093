// The per-tenant tool quota (tool_quota.hpp): fixed windows from the
// server's start.
#include "relsim/tools/tool_quota.hpp"

#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim::tools {

QuotaSpec parse_quota(std::string_view spec) {
  const auto refuse = [&] {
    return InputError(fmt::format("tool quota = '{}' is not CALLS/SECONDS: calls an integer in [1, 10^9], seconds a "
                                  "number in [0.001, 86400] (e.g. 5000/3600)",
                                  spec.substr(0, 100)));
  };
  const auto slash = spec.find('/');
  if (slash == std::string_view::npos) throw refuse();
  const std::string_view calls_text = spec.substr(0, slash), seconds_text = spec.substr(slash + 1);
  QuotaSpec q;
  auto [end, ec] = std::from_chars(calls_text.data(), calls_text.data() + calls_text.size(), q.calls);
  if (ec != std::errc() || end != calls_text.data() + calls_text.size() || q.calls < 1 || q.calls > 1'000'000'000)
    throw refuse();
  double seconds = 0.0;
  auto [end2, ec2] = std::from_chars(seconds_text.data(), seconds_text.data() + seconds_text.size(), seconds);
  if (ec2 != std::errc() || end2 != seconds_text.data() + seconds_text.size() || !(seconds >= 0.001) ||
      seconds > 86400.0)
    throw refuse();
  q.window_ms = static_cast<std::int64_t>(std::llround(seconds * 1000.0));
  return q;
}

QuotaDecision ToolQuota::take(std::string_view tenant, std::int64_t now_ms) {
  const std::int64_t index = now_ms / spec_.window_ms;
  auto it = tenants_.find(tenant);
  if (it == tenants_.end()) {
    // Bounded: past kMaxTenants, the counts of windows that have ended go.
    if (tenants_.size() >= kMaxTenants) std::erase_if(tenants_, [&](const auto& e) { return e.second.index < index; });
    it = tenants_.emplace(std::string(tenant), Window{}).first;
  }
  Window& w = it->second;
  if (w.index != index) w = {index, 0};
  if (w.used >= spec_.calls) {
    const std::int64_t left_ms = (index + 1) * spec_.window_ms - now_ms;
    return {false, 0, std::max<std::int64_t>(1, (left_ms + 999) / 1000)};
  }
  ++w.used;
  return {true, spec_.calls - w.used, 0};
}

}  // namespace relsim::tools
