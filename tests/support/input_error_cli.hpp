#pragma once
// For tests of bad input on the command line: what relsim must do with it
// (exit 2, nothing on stdout, one line on stderr starting "relsim: error: ").
#include <string>
#include <vector>

#include "support/run.hpp"

namespace relsim::test {

// Checks a finished run against the rule above, and that the line contains
// `part` (any line when part is empty).
void expect_input_error_result(const RunResult& result, const std::string& part = "");

// Runs relsim with `args` (or with the space-separated words of `args`) and
// checks the run so; a failure names the command line.
void expect_input_error(const std::vector<std::string>& args, const std::string& part = "");
void expect_input_error(const std::string& args, const std::string& part = "");

}  // namespace relsim::test
