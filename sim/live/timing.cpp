#include "relsim/live/timing.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

void validate(const ClientTiming& t) {
  for (const auto& [name, value] : {std::pair{"connect-timeout", t.connect_timeout},
                                    std::pair{"header-timeout", t.header_timeout},
                                    std::pair{"idle-timeout", t.idle_timeout}, std::pair{"call-timeout", t.call_timeout},
                                    std::pair{"task-timeout", t.task_timeout}, std::pair{"time-scale", t.time_scale}})
    if (!(value > 0.0 && std::isfinite(value)))
      throw InputError(fmt::format("{} = {} is out of range: it must be a finite number > 0", name, value));
  for (const auto& [name, value] : {std::pair{"backoff-base", t.backoff_base}, std::pair{"backoff-cap", t.backoff_cap}})
    if (!(value >= 0.0 && std::isfinite(value)))
      throw InputError(fmt::format("{} = {} is out of range: it must be a finite number >= 0", name, value));
}

}  // namespace relsim
