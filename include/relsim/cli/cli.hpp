#pragma once
// The `relsim` command line: subcommands, strict parsing, dispatch into the
// library. Kept in the library so that tests can run it in-process.
namespace relsim {

// Returns the process exit code. Errors are one line on stderr.
int run_cli(int argc, char** argv);

}  // namespace relsim
