#pragma once
// The live client's clock as options (client/timing.hpp).
#include <CLI/CLI.hpp>

#include "relsim/client/timing.hpp"

namespace relsim::cli {

// --connect-timeout ... --time-scale: the client's clock (timing.hpp).
void add_timing_options(CLI::App& cmd, ClientTiming& timing);

}  // namespace relsim::cli
