// The wire dialects' names (dialect.hpp).
#include "relsim/core/dialect.hpp"

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

Dialect parse_dialect(std::string_view name) {
  if (name == "anthropic") return Dialect::anthropic;
  if (name == "openai") return Dialect::openai;
  throw InputError(fmt::format("--dialect '{}' is not a dialect: use anthropic or openai", name.substr(0, 100)));
}

std::array<double, kFaultKinds> stream_break_share(Dialect dialect) {
  const bool openai = dialect == Dialect::openai;
  const double events = openai ? 5.0 : 8.0;
  std::array<double, kFaultKinds> share{};
  share[static_cast<std::size_t>(FaultKind::cut)] = (openai ? 2.0 : 3.0) / events;
  share[static_cast<std::size_t>(FaultKind::malformed)] = (openai ? 2.0 : 3.0) / events;
  share[static_cast<std::size_t>(FaultKind::overloaded)] = 2.0 / events;
  share[static_cast<std::size_t>(FaultKind::no_stop)] = (events - 1.0) / events;
  share[static_cast<std::size_t>(FaultKind::stall)] = 1.0;
  share[static_cast<std::size_t>(FaultKind::slow_headers)] = 1.0;  // its client sees it at a timeout, not at once
  share[static_cast<std::size_t>(FaultKind::stall_first)] = 1.0;
  // A content fault is a whole stream; a client that checks it sees the fault at its end.
  for (int k = 0; k < kFaultKinds; ++k)
    if (stage_of(static_cast<FaultKind>(k)) == Stage::content) share[static_cast<std::size_t>(k)] = 1.0;
  return share;
}

}  // namespace relsim
