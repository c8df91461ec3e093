// relsim plan: write a fault plan, generated from the simulator's draws or scripted.
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/live/plan.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

struct PlanArgs {
  ModelArgs model;
  long long tasks = 400;
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = 16;
  std::string fault, times = "once";
  std::string out;
};

int run_plan(const PlanArgs& a) {
  Plan plan;
  if (!a.fault.empty()) {
    plan = scripted_plan(a.tasks, parse_fault_kind(a.fault), parse_times(a.times), a.model.policy());
  } else {
    if (!a.model.p_option->count())
      throw InputError("plan: give --p (and --q ...) to generate a plan, or --fault KIND --times once|always");
    SimConfig config;
    config.tasks = a.tasks;
    config.seed = a.seed;
    config.lanes = a.lanes;
    config.kinds = a.model.fault_weights();
    plan = generate_plan(a.model.model(), a.model.policy(), config);
  }
  const std::string text = write_plan(plan);
  if (a.out.empty()) std::cout << text;
  else write_file_atomically(a.out, text);
  return 0;
}

}  // namespace

Runner add_plan(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand(
      "plan",
      "write a fault plan (JSON Lines): each task's requests, \"ok\" or a fault kind, as the simulator draws them\n"
      "  for --seed, or scripted with --fault KIND --times once|always");
  add_model_options(*cmd, args->model, false);
  add_policy_options(*cmd, args->model);
  cmd->add_option("--tasks", args->tasks, fmt::format("tasks, in [1, {}]", kMaxPlanTasks))->capture_default_str();
  cmd->add_option("--seed", args->seed, "simulation seed the plan reproduces")->capture_default_str();
  cmd->add_option("--lanes", args->lanes, "independent chains for the continuous scope")->capture_default_str();
  cmd->add_option("--fault", args->fault, "scripted plan: this fault kind on every task");
  cmd->add_option("--times", args->times, "scripted plan: once (first request, then good) or always")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "write the plan here (atomically) instead of stdout");
  return [args] { return run_plan(*args); };
}

}  // namespace relsim::cli
