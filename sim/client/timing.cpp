#include "relsim/client/timing.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {
namespace {

void check_seconds(const char* name, double value) {
  if (!(value >= 0.0 && value <= kMaxSeconds))
    throw InputError(fmt::format("{} = {} is out of range: it must be a finite number in [0, {:g}]", name, value,
                                 kMaxSeconds));
}

}  // namespace

void validate(const ClientTiming& t) {
  for (const auto& [name, value] : {std::pair{"connect-timeout", t.connect_timeout},
                                    std::pair{"header-timeout", t.header_timeout},
                                    std::pair{"idle-timeout", t.idle_timeout}, std::pair{"call-timeout", t.call_timeout},
                                    std::pair{"task-timeout", t.task_timeout}, std::pair{"time-scale", t.time_scale}})
    if (!(value > 0.0 && std::isfinite(value)))
      throw InputError(fmt::format("{} = {} is out of range: it must be a finite number > 0", name, value));
  const Backoff& b = t.backoff_schedule;
  switch (b.kind) {
    case Backoff::Kind::none: break;
    case Backoff::Kind::exp:
      check_seconds("backoff-base", b.base);
      check_seconds("backoff-cap", b.cap);
      if (!(b.jitter >= 0.0 && b.jitter <= 1.0))
        throw InputError(fmt::format("backoff jitter = {} is out of range: it must be in [0, 1]", b.jitter));
      break;
    case Backoff::Kind::list:
      if (b.list.empty() || b.list.size() > 1000)
        throw InputError(fmt::format("backoff list has {} entries: give 1 to 1000 waits", b.list.size()));
      for (const double w : b.list) check_seconds("backoff list entry", w);
      break;
  }
  check_seconds("think-seconds", t.think_seconds);
}

}  // namespace relsim
