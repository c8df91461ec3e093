#pragma once
// The `relsim` command line: subcommands, strict parsing, dispatch into the
// library. Kept in the library so that tests can run it in-process.
#include <string>
#include <vector>

#include "relsim/ui/command.hpp"

namespace relsim {

// Returns the process exit code. Errors are one line on stderr.
int run_cli(int argc, char** argv);

// Runs one command in-process (the workbench's CommandRunner): its standard
// output captured, its error as one line, never thrown. Safe to call from
// several threads at once. args has no program name: {"exact", "--p=0.3", ...}.
ui::CommandResult run_command(const std::vector<std::string>& args, const ui::CommandHooks& hooks = {});

}  // namespace relsim
