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

namespace relsim::cli {

// Exit codes: 0 success, 1 a check or comparison failed, 2 bad input,
// 3 an internal error.
inline constexpr int kExitMiss = 1;
inline constexpr int kExitInput = 2;
inline constexpr int kExitInternal = 3;

// A missing --p where time mode would go without it (ModelArgs::model, sweep).
inline constexpr const char* kNeedP = "--p is required (or, for time mode, --t-good and --t-bad)";

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

// --p --q --r --n --b --g --chain, shared by every command that takes a model.
struct ModelArgs {
  double p = 0.0, q = 0.0;
  double burst_mean = 0.0;  // --burst-mean L: q = 1 - 1/L
  long long b = 0, g = 0;
  long long n = 0;
  int r = 0;
  std::string chain = "fresh";
  std::string policy_kind = "simple";
  int s = 2;
  int B = 0;
  std::string kinds;  // empty: uniform over the in-stream kinds
  CLI::Option* q_option = nullptr;
  CLI::Option* burst_mean_option = nullptr;
  CLI::Option* p_option = nullptr;
  CLI::Option* kinds_option = nullptr;
  CLI::Option* n_option = nullptr;
  // --p is needed outside time mode (add_time_options leaves it to model(),
  // so that --help does not call it REQUIRED where time mode goes without).
  bool p_needed = false;

  // Validated; q from --q or --burst-mean, else p. Throws InputError when
  // --p is needed and was not given.
  Model model() const;
  Policy policy() const;  // validated
  FaultWeights fault_weights() const;
};
void add_model_options(CLI::App& cmd, ModelArgs& args, bool p_required = true);
// --seed SEED, the same in every command: an integer in [0, 2^64 - 1], read
// strictly (CLI11's own unsigned parse would take -1 as 2^64 - 1); `what`
// says what it seeds. Its default shows in --help.
CLI::Option* add_seed_option(CLI::App& cmd, std::uint64_t& seed, const std::string& what,
                             const std::string& flag = "--seed");
// A CLI11 parse error as the one line relsim prints (without "relsim: error: ").
std::string parse_error_line(const CLI::ParseError& error);
// --policy --s --B --kinds, for commands that run every policy.
void add_policy_options(CLI::App& cmd, ModelArgs& args);

// --t-good --t-bad --request-seconds --fault-seconds --think-seconds
// --backoff --retry-after (and --hidden-chain --step-seconds): time in
// seconds (docs/time.md). Giving --t-good, --t-bad or --hidden-chain puts the
// command in time mode; the other time options need it.
struct TimeArgs {
  double t_good = 0.0, t_bad = 0.0;
  double request_seconds = 0.0;
  std::string fault_seconds;  // empty: every request takes request_seconds
  double think_seconds = 0.0;
  std::string backoff = "sdk";
  double retry_after = 0.0;
  std::string hidden_chain;  // a `relsim fit --hidden --json` output
  double step_seconds = 0.0;
  CLI::Option* t_good_option = nullptr;
  CLI::Option* t_bad_option = nullptr;
  CLI::Option* hidden_option = nullptr;
  CLI::Option* step_option = nullptr;

  bool timed() const;
  // timed(), for option rules (option_rules.hpp): it holds the options, not
  // these arguments, so it stays true to them wherever they move.
  std::function<bool()> timed_rule() const;
  // In time mode the validated time model, with the chain scope of --chain;
  // nullopt otherwise. Throws InputError for a bad value; the options that
  // do not fit the mode were refused while parsing (add_time_options).
  std::optional<TimeModel> time_model(const ModelArgs& model) const;
  // The chain as it was given, for reports: {"t_good", "t_bad"} or
  // {"hidden_chain", "states", "step_seconds"}; and the same in words.
  Json chain_json(const TimeModel& time) const;
  std::string chain_words(const TimeModel& time) const;
};
// Adds the time options to a command that has the model options: in time
// mode --p is no longer required, and --p --q --burst-mean --b --g are
// refused; the other time options need it. `refused`: the time options a
// command cannot take (by name), each refused with its line before any other
// rule on it.
using OptionRefusals = std::vector<std::pair<std::string, std::string>>;
void add_time_options(CLI::App& cmd, TimeArgs& args, const OptionRefusals& refused = {});
// Declared while parsing, with `timed` saying whether the command is in time
// mode: `option` (a time option) refused without it; `discrete` (--p --q
// --burst-mean --b --g, or sweep's axes of them) refused in it, each naming
// what time mode takes instead.
void needs_time_mode(CLI::Option* option, std::function<bool()> timed);
void refuse_in_time_mode(CLI::Option* discrete, std::function<bool()> timed);

// --tool-faults --harness: a tool call after each successful model call
// (docs/tool_model.md), for exact and simulate.
struct ToolArgs {
  std::string faults;
  std::string harness = "guarded";
  CLI::Option* faults_option = nullptr;
  CLI::Option* harness_option = nullptr;

  // The validated tool model, or nullopt without --tool-faults. Throws
  // InputError for a bad value.
  std::optional<ToolModel> tool_model() const;
};
// Declares --harness without --tool-faults refused, and --tool-faults in time
// mode (`timed`: TimeArgs::timed_rule), which does not support it yet.
void add_tool_options(CLI::App& cmd, ToolArgs& args, std::function<bool()> timed);

// --input-tokens --output-tokens --price-in --price-out --break-at: what a
// request costs (billing.hpp; docs/model.md, Cost), for exact.
struct BillingArgs {
  Billing billing;
  std::string break_at;
  CLI::Option* price_in_option = nullptr;

  // The validated billing, or nullopt when no price was given. Throws
  // InputError for a bad value.
  std::optional<Billing> parsed() const;
};
// Declares the five options; any of them needs the other four but
// --break-at (whose default is the mock server's break positions).
void add_billing_options(CLI::App& cmd, BillingArgs& args);

// --fallback-after and the second provider's chain (in steps or seconds), kinds
// and prices (fallback.hpp; docs/model.md, Fallback), for exact and simulate.
struct FallbackArgs {
  int after = 1;
  double p2 = 0.0, q2 = 0.0, burst_mean2 = 0.0;
  std::string kinds2;
  double price_in2 = 0.0, price_out2 = 0.0;
  double shared_p = 0.0, shared_burst_mean = 0.0;
  double t_good2 = 0.0, t_bad2 = 0.0, shared_t_good = 0.0, shared_t_bad = 0.0;  // time mode
  CLI::Option *after_option{}, *p2_option{}, *q2_option{}, *burst2_option{}, *kinds2_option{}, *price_in2_option{},
      *price_out2_option{}, *shared_p_option{}, *shared_burst_option{}, *t_good2_option{}, *t_bad2_option{},
      *shared_t_good_option{}, *shared_t_bad_option{};

  // The validated fallback, or nullopt without --fallback-after; the second
  // provider's kinds default to `first_kinds`. Throws InputError.
  std::optional<Fallback> parsed(const FaultWeights& first_kinds, const Policy& policy) const;
};
// Declares the options; each needs --fallback-after, which needs --p2 (in time
// mode, `timed`, --t-good2 and --t-bad2); the prices need the first's (`price_in`).
void add_fallback_options(CLI::App& cmd, FallbackArgs& args, const CLI::Option* price_in, std::function<bool()> timed);

// --connect-timeout ... --time-scale: the client's clock (timing.hpp).
void add_timing_options(CLI::App& cmd, ClientTiming& timing);

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
