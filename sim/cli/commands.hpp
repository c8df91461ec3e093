#pragma once
// No commands.cpp: each cmd_X.cpp defines its command, cli.cpp the shared options.
// Internal to the CLI: each subcommand registers itself on the app and
// returns the function that runs it. One file per command (cmd_*.cpp).
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "relsim/core/billing.hpp"
#include "relsim/core/fallback.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/core/tool_faults.hpp"
#include "relsim/client/timing.hpp"
#include "relsim/parallel/parallel.hpp"
#include "relsim/ui/command.hpp"
#include "relsim/options/billing_args.hpp"
#include "relsim/options/fallback_args.hpp"
#include "relsim/options/model_args.hpp"
#include "relsim/options/time_args.hpp"
#include "relsim/options/timing_args.hpp"
#include "relsim/options/tool_args.hpp"

namespace relsim::cli {

// Exit codes: 0 success, 1 a check or comparison failed, 2 bad input,
// 3 an internal error.
inline constexpr int kExitMiss = 1;
inline constexpr int kExitInput = 2;
inline constexpr int kExitInternal = 3;

using Runner = std::function<int()>;

// ---- Where a command runs (run_command.cpp) --------------------------------
// A command runs either from the command line (run_cli) or in-process for the
// workbench (run_command, cli.hpp), possibly on several threads at once. The
// state of an in-process run is thread-local, set by run_command for the
// command's duration: no global changes, so two threads never see each
// other's.
//
// Where a command prints its standard output: run_command's buffer on its
// thread, else std::cout.
std::ostream& out();
// Where a command writes the lines that say why it exits 1 (a --require
// threshold missed): std::cerr from the command line; in-process a buffer
// that becomes the result's one-line message.
std::ostream& notes();
// run_command's hooks on this thread; nullptr from the command line.
const ui::CommandHooks* hooks();
// The MPI ranks a command splits its work over: parallel::world() from the
// command line; one process in-process, where the workbench's threads may not
// call MPI (the Session is FUNNELED: the main thread alone) and the other
// ranks, waiting in on_root for `relsim ui` to end, would not take part.
parallel::Share ranks();
// Whether a command may draw a progress line on stderr: from the command
// line, on rank 0, with stderr a terminal (in-process it would write into the
// terminal of whoever started `relsim ui`).
bool terminal_progress();
// Progress as (done, total) for a command that reports it on its own thread:
// to run_command's hook, which may throw Cancelled to stop the command (the
// workbench, `import relsim`), else as the line "NAME: done/total UNIT" on a
// terminal (terminal_progress), ended at done == total; else nowhere.
std::function<void(std::int64_t, std::int64_t)> command_progress(std::string name, std::string unit);

Runner add_exact(CLI::App& app);
Runner add_check(CLI::App& app);
Runner add_plan(CLI::App& app);
Runner add_sweep(CLI::App& app);
Runner add_demo(CLI::App& app);
Runner add_live(CLI::App& app);
Runner add_oracle(CLI::App& app);
Runner add_simulate(CLI::App& app);
Runner add_serve(CLI::App& app);
Runner add_proxy(CLI::App& app);
Runner add_audit(CLI::App& app);
Runner add_fit(CLI::App& app);
Runner add_advise(CLI::App& app);
Runner add_tune(CLI::App& app);
Runner add_ui(CLI::App& app);
Runner add_fleet(CLI::App& app);
Runner add_bughunt(CLI::App& app);
Runner add_tools(CLI::App& app);
Runner add_contention(CLI::App& app);

// The relsim command line: every subcommand registered, each with its runner
// (commands not split over MPI ranks wrapped to run on rank 0). Both run_cli
// and run_command parse with it, so the two never differ.
struct Commands {
  Commands();
  CLI::App app;
  std::vector<Runner> runners;  // in the order of app's subcommands
  // The runner of the subcommand parse() found; call after app.parse.
  const Runner& parsed() const;
};

}  // namespace relsim::cli
