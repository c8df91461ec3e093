#pragma once
// Header only: types.
// How the workbench (relsim ui) runs a relsim command: in-process, with its
// standard output captured, so that GET /api/exact?p=0.3&... answers the very
// bytes `relsim exact --p 0.3 ... --json` prints. The ui layer knows commands
// only through a CommandRunner; the cli layer supplies it (cli/cli.hpp,
// run_command), which keeps the server free of any command's parsing.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace relsim::ui {

// Exit codes as the command line's (cli/commands.hpp), plus cancelled.
inline constexpr int kCommandCancelled = 130;

struct CommandResult {
  int code = 0;     // 0 success, 1 a check failed, 2 bad input, 3 internal error, 130 cancelled
  std::string out;  // what the command printed on standard output
  std::string err;  // for code != 0: the one-line message, without "relsim: error: " (code 1: the checks missed)
  std::string notes{};  // code 1: the lines the command line writes to stderr for it, as it writes them
};

struct CommandHooks {
  // Called as the work goes on with (done, total): simulate counts tasks,
  // sweep points. It may throw Cancelled (core/error.hpp) to stop the
  // command, which then ends with kCommandCancelled. Empty: no reports.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

// args: the command and its options, without the program name, e.g.
// {"exact", "--p=0.3", "--r=2", "--n=2", "--json"}. Never throws.
using CommandRunner = std::function<CommandResult(const std::vector<std::string>& args, const CommandHooks& hooks)>;

}  // namespace relsim::ui
