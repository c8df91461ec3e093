// relsim demo: the reference experiment (docs/model.md, Reference experiment), exactly and by
// simulation, for independent and bursty faults.
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/live/demo.hpp"
#include "relsim/live/demo_report.hpp"
#include "relsim/live/live.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {
namespace {

struct DemoArgs {
  long long tasks = 400;
  std::uint64_t seed = rng::kReferenceSeed;
  int threads = 0;
  long long tight_tasks = 1'000'000;
  bool json = false;
  bool no_live = false;
  int concurrency = LiveOptions{}.concurrency;
  std::string dialect = "anthropic";
};

int run_demo(const DemoArgs& a) {
  DemoConfig config;
  config.tasks = a.tasks;
  config.seed = a.seed;
  config.threads = a.threads;
  config.tight_tasks = a.tight_tasks;
  config.live = !a.no_live;
  config.concurrency = a.concurrency;
  config.dialect = parse_dialect(a.dialect);
  const DemoRun run = run_reference_experiment(config);
  if (a.json) {
    out() << dump_json(demo_json(run)) << "\n";
    return 0;
  }
  out() << demo_table(run);
  return demo_mismatched(run) ? kExitMiss : 0;
}

}  // namespace

Runner add_demo(CLI::App& app) {
  auto args = std::make_shared<DemoArgs>();
  auto* cmd = app.add_subcommand("demo", "the reference experiment: exact, simulated and live, independent and bursty; exit 1 on any oracle mismatch");
  cmd->add_option("--tasks", args->tasks, "simulated tasks per model")->capture_default_str();
  add_seed_option(*cmd, args->seed, "simulation seed");
  cmd->add_option("--threads", args->threads, "OpenMP threads (0: OpenMP's default)")->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object instead of tables");
  auto* tight_tasks =
      cmd->add_option("--tight-tasks", args->tight_tasks,
                      fmt::format("also simulate this many tasks per model, for a tight interval (0: none), in [0, {}]",
                                  kMaxTasks))
          ->capture_default_str();
  check_value<decltype(DemoArgs::tight_tasks)>(tight_tasks, [](const auto& n) {
    if (n < 0 || n > kMaxTasks)
      throw InputError(fmt::format("tight-tasks = {} is out of range: it must be in [0, {}] (0: none)", n, kMaxTasks));
  });
  cmd->add_flag("--no-live", args->no_live, "leave out the live run over HTTP");
  cmd->add_option("--concurrency", args->concurrency, "live tasks in flight at once")->capture_default_str();
  cmd->add_option("--dialect", args->dialect,
                  "the API the live client speaks: anthropic (POST /v1/messages) or openai (POST /v1/chat/completions)")
      ->capture_default_str();
  return [args] { return run_demo(*args); };
}

}  // namespace relsim::cli
