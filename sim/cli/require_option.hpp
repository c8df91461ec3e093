#pragma once
// --require (include/relsim/core/thresholds.hpp): the option, checked while
// CLI11 parses against the metrics the command computes, and the verdict
// after the run: one line on stderr per threshold missed, exit 1.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "relsim/core/thresholds.hpp"

namespace relsim::cli {

// Adds --require SPEC to `cmd`; `metrics` are the names it may use.
CLI::Option* add_require_option(CLI::App& cmd, std::string& spec, std::vector<std::string> metrics);
// 0 when `spec` is empty or every threshold holds; else kExitMiss after one
// "relsim: threshold missed: ..." line per threshold missed on stderr.
int require_verdict(const std::string& spec, const std::vector<std::string>& metrics, const Measured& measured);

}  // namespace relsim::cli
