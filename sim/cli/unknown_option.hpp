#pragma once
// An option the command does not have, found before CLI11 reports anything
// else: CLI11 checks required options first, so `relsim exact --bogus` would
// otherwise say "--p is required" and never name --bogus.
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace relsim::cli {

// args: the command line without the program's name. The one-line error for
// the first --name (or --name=value) that the subcommand lacks, or nullopt
// when every one is known (or there is no subcommand to ask). Scanning stops
// at a lone "--".
std::optional<std::string> unknown_option_line(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace relsim::cli
