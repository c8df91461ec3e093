#include "relsim/cli/cli.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/core/version.hpp"
#include "relsim/parallel/parallel.hpp"
#include "cli/commands.hpp"
#include "cli/unknown_option.hpp"

namespace relsim {
namespace cli {

// CLI11's parse errors in the project's words: a declared rule's own line
// (option_rules.hpp) without CLI11's prefix; "Could not convert: --r =
// 0:20:1" names the value and what it must be, with a hint for a range or a
// list, which only relsim sweep takes.
std::string parse_error_line(const CLI::ParseError& e) {
  const std::string what = e.what();
  // A rule or check of option_rules.hpp: "--x: " and the project's line.
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    const auto colon = what.find(": ");
    return colon == std::string::npos ? what : what.substr(colon + 2);
  }
  const std::string prefix = "Could not convert: ";
  const auto eq = what.find(" = ");
  if (what.rfind(prefix, 0) != 0 || eq == std::string::npos) return what;
  const std::string name = what.substr(prefix.size(), eq - prefix.size());
  const std::string value = what.substr(eq + 3);
  std::string line = fmt::format("{} = '{}' is not a number", name, value);
  if (value.find_first_of(":,") != std::string::npos)
    line += ": a range or a list of values is for relsim sweep (for example --r 0:20:1 or --q 0.3,0.8)";
  return line;
}

namespace {

// `relsim --help`: each command in one line, grouped by what a user wants to
// do (as git and cargo do). A command's longer description moves to the foot
// of its own --help, where the detail lives.
struct HelpLine {
  const char* name;
  const char* group;
  const char* line;
};
constexpr HelpLine kHelpLines[] = {
    {"exact", "Compute success and cost", "exact P(success), outcomes and requests per task, for any policy"},
    {"simulate", "Compute success and cost", "seeded Monte Carlo of any policy, with a confidence interval"},
    {"sweep", "Compute success and cost", "exact (and simulated) success over a grid of parameters, as CSV"},
    {"tune", "Compute success and cost", "retry schedules that reach a target in seconds: the Pareto front"},
    {"check", "Compute success and cost", "regression check against a CSV of known values; exit 1 on any miss"},
    {"fit", "From your logs", "estimate p and q (and t_good, t_bad) from request logs, with intervals"},
    {"advise", "From your logs", "fit a log, then the SDK's maxRetries that meets a target, with code"},
    {"audit", "From your logs", "check what any client did against a policy, task by task"},
    {"plan", "Faults for real clients", "write a fault plan: each task's requests, ok or a fault kind"},
    {"oracle", "Faults for real clients", "predict each task's outcome, requests and longest wait from a plan"},
    {"serve", "Faults for real clients", "run the fault-injecting mock of the Messages API on 127.0.0.1"},
    {"proxy", "Faults for real clients", "put bursty faults in front of a real model API, on 127.0.0.1"},
    {"live", "Faults for real clients", "run tasks against the embedded mock, each checked against the oracle"},
    {"demo", "Faults for real clients", "the reference experiment: exact, simulated, live; exit 1 on a mismatch"},
    {"fleet", "Faults for real clients", "many agents of many tenants sharing one provider, event by event"},
    {"ui", "Workbench and labs", "serve the browser workbench on 127.0.0.1"},
    {"bughunt", "Workbench and labs", "a testing agent's world: environment faults against product bugs"},
    {"tools", "Workbench and labs", "tool calls, the other half of an agent's I/O: MCP server and audit"},
    {"contention", "Workbench and labs", "many agents at once against shared tools: leaks, lost updates, deadlocks"},
};

void group_help(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    const auto it = std::find_if(std::begin(kHelpLines), std::end(kHelpLines),
                                 [&](const HelpLine& h) { return sub->get_name() == h.name; });
    RELSIM_ASSERT(it != std::end(kHelpLines));  // every command has its line
    const std::string longer = sub->get_description();
    if (longer != it->line) sub->footer(longer);
    sub->description(it->line);
    sub->group(it->group);
  }
}

// Commands that are not split over MPI ranks run on rank 0 alone.
Runner on_root(Runner job) {
  return [job = std::move(job)] { return parallel::on_root(job, ranks()); };
}

}  // namespace

Commands::Commands() : app("relsim: how often an agent task finishes when model requests fail in bursts", "relsim") {
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("relsim {} (commit {})", version(), commit()));
  // exact, simulate and sweep split their work over MPI ranks themselves.
  runners = {add_exact(app),          on_root(add_check(app)), on_root(add_plan(app)),  on_root(add_oracle(app)),
             add_simulate(app),       add_sweep(app),          on_root(add_demo(app)),  on_root(add_live(app)),
             on_root(add_serve(app)), on_root(add_proxy(app)), on_root(add_audit(app)), on_root(add_fit(app)),   on_root(add_advise(app)), on_root(add_tune(app)),
             on_root(add_ui(app)),    add_fleet(app),          on_root(add_bughunt(app)), on_root(add_tools(app)),
             on_root(add_contention(app))};
  group_help(app);
}

const Runner& Commands::parsed() const {
  // Subcommands are listed in the order they were added, as are runners.
  const auto all = app.get_subcommands({});
  RELSIM_ASSERT(all.size() == runners.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i]->parsed()) return runners[i];
  // require_subcommand(1) lets no parse end without one.
  RELSIM_ASSERT(false);
  return runners.front();
}

}  // namespace cli

namespace {

// One line on stderr and the exit code. Under MPI with several ranks, rank 0
// alone prints for a failure every rank shares, and a failure on one rank
// ends the whole job (parallel::abort_job) instead of leaving the others
// waiting in a collective.
int fail(const std::string& line, int code) {
  if (!cli::ranks().single()) parallel::abort_job(line, code);
  std::cerr << line << "\n";
  return code;
}

int dispatch(int argc, char** argv) {
  cli::Commands commands;
  try {
    commands.app.parse(argc, argv);
    return commands.parsed()();
  } catch (const CLI::Success& e) {
    if (!cli::ranks().root()) return 0;  // --help and --version, printed once
    return commands.app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::optional<std::string> unknown =
        cli::unknown_option_line(commands.app, std::vector<std::string>(argv + 1, argv + argc));
    return fail(fmt::format("relsim: error: {}", unknown ? *unknown : cli::parse_error_line(e)), cli::kExitInput);
  } catch (const InputError& e) {
    return fail(fmt::format("relsim: error: {}", e.what()), cli::kExitInput);
  } catch (const std::exception& e) {
    // A bug of relsim's (a failed RELSIM_ASSERT) or the system's (out of
    // memory): still one line and a non-zero exit, never a core dump.
    return fail(fmt::format("relsim: internal error: {}", e.what()), cli::kExitInternal);
  }
}

}  // namespace

int run_cli(int argc, char** argv) {
  // MPI runs from here to the return (finalised by the destructor), so every
  // command sees the same world.
  const parallel::Session mpi(argc, argv);
  return dispatch(argc, argv);
}

}  // namespace relsim
