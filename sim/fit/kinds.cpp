// The fault-kind mix of a log (include/relsim/fit/estimate.hpp): relsim's own
// kinds become a --kinds string the other commands take; the rest (HTTP
// statuses relsim does not inject, SDK error classes) are listed apart.
#include <fmt/format.h>

#include "relsim/core/faults.hpp"
#include "relsim/fit/estimate.hpp"

namespace relsim::fit {

KindMix kind_mix(const ChainCounts& counts) {
  KindMix mix;
  mix.counts = counts.kinds;
  double total = 0.0;
  for (const auto& [kind, n] : counts.kinds) total += double(n);
  for (const auto& [kind, n] : counts.kinds) mix.shares[kind] = total > 0.0 ? double(n) / total : 0.0;
  for (int k = 0; k < kFaultKinds; ++k) {  // enum order, as --kinds prints elsewhere
    const std::string name(to_string(static_cast<FaultKind>(k)));
    const auto it = counts.kinds.find(name);
    if (it == counts.kinds.end()) continue;
    mix.kinds_option += fmt::format("{}{}={}", mix.kinds_option.empty() ? "" : ",", name, it->second);
  }
  for (const auto& [kind, n] : counts.kinds) {
    bool relsim_kind = false;
    for (int k = 0; k < kFaultKinds; ++k) relsim_kind |= kind == to_string(static_cast<FaultKind>(k));
    if (!relsim_kind) mix.other.push_back(kind);
  }
  return mix;
}

}  // namespace relsim::fit
