// run_command (cli.hpp): one relsim command in-process, for the workbench.
// It parses with the very App that run_cli does (cli::Commands), so
// `GET /api/exact?p=0.3` prints what `relsim exact --p=0.3 --json` prints.
//
// What is the command's own lives on this thread only (out(), hooks(),
// ranks(), commands.hpp): several threads run commands at once, each with
// its own App, arguments and buffer.
#include "relsim/cli/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "cli/commands.hpp"
#include "cli/unknown_option.hpp"

namespace relsim {
namespace cli {
namespace {

// The in-process state of the command running on this thread; null
// pointers from the command line.
struct InProcess {
  std::ostream* out = nullptr;
  const ui::CommandHooks* hooks = nullptr;
  std::ostream* notes = nullptr;
};
thread_local InProcess current;

// Sets this thread's state for one command and restores it after, however
// the command ends.
class InProcessScope {
 public:
  InProcessScope(std::ostream& out, const ui::CommandHooks& hooks, std::ostream& notes) : saved_(current) {
    current = {&out, &hooks, &notes};
  }
  ~InProcessScope() { current = saved_; }
  InProcessScope(const InProcessScope&) = delete;
  InProcessScope& operator=(const InProcessScope&) = delete;

 private:
  InProcess saved_;
};

// The message as one line: CLI11's can span several.
std::string one_line(std::string_view message) {
  std::string line(message);
  std::replace(line.begin(), line.end(), '\n', ' ');
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// Commands that run until a signal: on a workbench thread they would never
// end, and their signal masks are the process's business.
void refuse_servers(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->get_name() == "serve" || sub->get_name() == "ui")
      throw InputError(fmt::format("relsim {} runs until a signal: it cannot run in-process; start it from the "
                                   "command line",
                                   sub->get_name()));
}

// Parses and runs; the exit code, with the one-line message in `err` when it
// is not 0 or 1. --help and --version print to `capture`.
int execute(const std::vector<std::string>& args, std::ostream& capture, std::string& err) {
  Commands commands;
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // as CLI11 takes a vector
    commands.app.parse(reversed);
    refuse_servers(commands.app);
    return commands.parsed()();
  } catch (const CLI::Success& e) {
    commands.app.exit(e, capture, capture);
    return 0;
  } catch (const CLI::ParseError& e) {
    err = one_line(unknown_option_line(commands.app, args).value_or(parse_error_line(e)));
    return kExitInput;
  } catch (const InputError& e) {
    err = one_line(e.what());
    return kExitInput;
  } catch (const Cancelled&) {
    err = "cancelled";
    return ui::kCommandCancelled;
  } catch (const std::exception& e) {
    err = one_line(fmt::format("internal error: {}", e.what()));
    return kExitInternal;
  }
}

// The notes' lines as one: each without its "relsim: ", joined by "; ".
std::string notes_line(std::string_view text) {
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view one = text.substr(start, end - start);
    if (one.starts_with("relsim: ")) one.remove_prefix(8);
    if (!one.empty()) line += (line.empty() ? "" : "; ") + std::string(one);
    start = end + 1;
  }
  return line;
}

}  // namespace

std::ostream& out() { return current.out ? *current.out : std::cout; }

std::ostream& notes() { return current.notes ? *current.notes : std::cerr; }

const ui::CommandHooks* hooks() { return current.hooks; }

parallel::Share ranks() { return current.hooks ? parallel::Share{} : parallel::world(); }

bool terminal_progress() { return !current.hooks && ranks().root() && ::isatty(STDERR_FILENO) != 0; }

std::function<void(std::int64_t, std::int64_t)> command_progress(std::string name, std::string unit) {
  if (const ui::CommandHooks* h = hooks(); h && h->progress) return h->progress;
  if (!terminal_progress()) return {};
  return [name = std::move(name), unit = std::move(unit)](std::int64_t done, std::int64_t total) {
    std::cerr << fmt::format("\r{}: {}/{} {}", name, done, total, unit) << (done == total ? "\n" : "");
  };
}

}  // namespace cli

ui::CommandResult run_command(const std::vector<std::string>& args, const ui::CommandHooks& hooks) {
  ui::CommandResult result;
  try {
    std::ostringstream capture, notes;
    const cli::InProcessScope scope(capture, hooks, notes);
    result.code = cli::execute(args, capture, result.err);
    result.out = std::move(capture).str();
    result.notes = std::move(notes).str();
    if (result.err.empty()) result.err = cli::notes_line(result.notes);
  } catch (...) {
    // Only making the App or the buffer can get here (out of memory): the
    // command's own exceptions are mapped in execute.
    result = {cli::kExitInternal, "", "internal error: the command could not be set up", ""};
  }
  return result;
}

}  // namespace relsim
