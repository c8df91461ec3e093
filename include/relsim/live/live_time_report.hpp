#pragma once
// Internal to the CLI: what `relsim live` prints in time mode (docs/model.md,
// Live check in time mode): the summary and the --json object.
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/live/live_time.hpp"

namespace relsim {

std::string time_live_summary(const TimeLiveCheck& check);
Json time_live_json(const TimeLiveCheck& check);

}  // namespace relsim
