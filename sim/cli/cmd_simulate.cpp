// relsim simulate: seeded Monte Carlo of any policy (simple, naive, layered or
// budgeted), its confidence interval, and whether that covers the exact value;
// in time mode (--t-good, --t-bad) also the wall time per task, its mean and
// quantiles with intervals.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/simulate_report.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "relsim/parallel/parallel.hpp"
#include "cli/commands.hpp"
#include "cli/require_option.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {
namespace {

// A progress line is shown only on a terminal and only for runs long enough to wait for.
constexpr std::int64_t kProgressMinTasks = 20'000'000;

struct SimulateArgs {
  ModelArgs model;
  TimeArgs time;
  ToolArgs tools;
  BillingArgs billing;
  FallbackArgs fallback;
  long long tasks = 400;
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = SimConfig{}.lanes;
  int threads = 0;
  std::string kernel = "auto";
  std::string interval = "wilson";
  double confidence = 0.95;
  bool json = false;
  std::string require;  // --require: thresholds for CI
};

// Reads and checks the arguments; the order of the checks decides which
// error a command line with several bad values reports.
SimulateSetup simulate_setup(const SimulateArgs& a) {
  SimulateSetup setup;
  setup.config.tools = a.tools.tool_model();
  setup.config.billing = a.billing.parsed();
  setup.time = a.time.time_model(a.model);
  if (setup.time) {
    setup.chain_json = a.time.chain_json(*setup.time);
    setup.chain_words = a.time.chain_words(*setup.time);
  } else {
    setup.model = a.model.model();
  }
  setup.policy = a.model.policy();
  setup.config.fallback = a.fallback.parsed(a.model.fault_weights(), setup.policy);
  SimConfig& config = setup.config;
  config.tasks = a.tasks;
  config.seed = a.seed;
  config.lanes = a.lanes;
  config.threads = a.threads;
  config.kernel = parse_kernel(a.kernel);
  config.kinds = a.model.fault_weights();
  setup.interval = parse_interval_kind(a.interval);
  setup.confidence = a.confidence;
  validate(config);
  // Under mpirun each rank runs its share of the chunks or lanes; rank 0
  // alone prints.
  config.share = ranks();
  return setup;
}

// How the run reports its progress: to the workbench's hook (hooks(), every
// run, done counted over the whole run), or as a line on stderr for rank 0 on
// a terminal and a run long enough to wait for; or not at all.
enum class Shown { none, line, hook };

// The workbench's hook gets (done, total), strictly increasing; the engines
// call this on OpenMP's thread 0 only, which is the command's thread, so the
// hook may throw Cancelled there (carried out of the region by FirstError).
Shown attach_progress(SimConfig& config) {
  const std::int64_t total = config.tasks;
  if (const ui::CommandHooks* h = hooks(); h && h->progress) {
    auto last = std::make_shared<std::int64_t>(0);
    config.progress = [last, total, report = h->progress](std::int64_t done) {
      if (done <= *last) return;
      *last = std::min(total, done);
      report(*last, total);
    };
    return Shown::hook;
  }
  if (!(terminal_progress() && config.tasks >= kProgressMinTasks)) return Shown::none;
  using Clock = std::chrono::steady_clock;
  auto last = std::make_shared<Clock::time_point>(Clock::now());
  const std::int64_t ranks = config.share.ranks;
  config.progress = [last, total, ranks](std::int64_t mine) {
    // Ranks run shares of equal size: rank 0's count times the ranks.
    const std::int64_t done = std::min(total, mine * ranks);
    const auto now = Clock::now();
    if (now - *last < std::chrono::milliseconds(500)) return;
    *last = now;
    std::fprintf(stderr, "\rrelsim: simulated %lld of %lld tasks (%.0f%%)", static_cast<long long>(done),
                 static_cast<long long>(total), 100.0 * static_cast<double>(done) / static_cast<double>(total));
    std::fflush(stderr);
  };
  return Shown::line;
}

// After the run: the hook's last report is the whole run (thread 0 may have
// run none of the last units); the terminal's line is cleared.
void end_progress(const SimConfig& config, Shown shown) {
  if (shown == Shown::hook) config.progress(config.tasks);
  if (shown == Shown::line) std::fprintf(stderr, "\r\033[K");
}

int run_simulate(const SimulateArgs& a) {
  SimulateSetup setup = simulate_setup(a);
  const Shown shown = attach_progress(setup.config);
  const SimulateCheck check = simulate_and_check(setup, [&] { end_progress(setup.config, shown); });
  if (!setup.config.share.root()) return 0;
  if (a.json) out() << dump_json(simulate_json(setup, check)) << "\n";
  else out() << simulate_table(setup, check);
  return require_verdict(a.require, kSimulateMetrics, simulate_measured(check));
}

}  // namespace

Runner add_simulate(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand("simulate", "seeded Monte Carlo of any policy, with a confidence interval");
  add_model_options(*cmd, args->model);
  add_policy_options(*cmd, args->model);
  add_time_options(*cmd, args->time);
  add_tool_options(*cmd, args->tools, args->time.timed_rule());
  add_billing_options(*cmd, args->billing);
  add_fallback_options(*cmd, args->fallback, args->billing.price_in_option, args->time.timed_rule());
  add_cooldown_options(*cmd, args->fallback, args->time.timed_rule());
  refuse_with(args->fallback.after_option, args->tools.faults_option,
              "--fallback-after does not cover tool calls (--tool-faults) yet: leave out one of them");
  cmd->add_option("--tasks", args->tasks, fmt::format("tasks to simulate, in [1, {}]", kMaxTasks))
      ->capture_default_str();
  add_seed_option(*cmd, args->seed, "Philox key");
  cmd->add_option("--lanes", args->lanes,
                  fmt::format("continuous scope: independent chains, task i in lane i mod lanes, in [1, {}]",
                              kMaxLanes))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "OpenMP threads (0: OpenMP's default); never changes the output")
      ->capture_default_str();
  cmd->add_option("--kernel", args->kernel,
                  "the simple policy's Monte Carlo kernel: auto (the fastest this CPU runs), scalar, avx2 or avx512; "
                  "never changes the output but --json's \"kernel\"")
      ->capture_default_str();
  cmd->add_option("--interval", args->interval, "wilson, clopper-pearson or jeffreys")->capture_default_str();
  check_value<double>(
      cmd->add_option("--confidence", args->confidence, "confidence level of the interval, in (0, 1)")
          ->capture_default_str(),
      [](double confidence) {
        if (!(confidence > 0.0 && confidence < 1.0))
          throw InputError(fmt::format("confidence = {} is out of range: it must be in (0, 1)", confidence));
      });
  cmd->add_flag("--json", args->json, "print one JSON object instead of a table");
  add_require_option(*cmd, args->require, kSimulateMetrics);
  return [args] { return run_simulate(*args); };
}

}  // namespace relsim::cli
