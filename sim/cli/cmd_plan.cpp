// relsim plan: write a fault plan, generated from the simulator's draws or scripted.
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {
namespace {

struct PlanArgs {
  ModelArgs model;
  TimeArgs time;
  FallbackArgs fallback;
  long long tasks = 400;
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = 16;
  std::string fault, times = "once";
  std::string out;
  int max_requests = 0;
  CLI::Option* max_requests_option = nullptr;  // not given: a plan for the policy given
  CLI::Option *fault_option = nullptr, *times_option = nullptr;
  bool audit() const { return max_requests_option->count() > 0; }
};

// Time mode: the draws of simulate_time, with each request's start
// (--fault, --times and --max-requests were refused while parsing).
Plan time_plan(const PlanArgs& a, const TimeModel& time) {
  SimConfig config;
  config.tasks = a.tasks;
  config.seed = a.seed;
  config.lanes = a.lanes;
  config.kinds = a.model.fault_weights();
  return generate_time_plan(time, a.time.chain_json(time), a.model.policy(), config);
}

int run_plan(const PlanArgs& a) {
  Plan plan;
  if (const std::optional<TimeModel> time = a.time.time_model(a.model)) {
    plan = time_plan(a, *time);
  } else if (!a.fault.empty()) {
    const FaultKind kind = parse_fault_kind(a.fault);
    const Times times = parse_times(a.times);
    plan = a.audit() ? scripted_audit_plan(a.tasks, kind, times, a.model.policy(), a.max_requests)
                          : scripted_plan(a.tasks, kind, times, a.model.policy());
  } else {
    if (!a.model.p_option->count())
      throw InputError("plan: give --p (and --q ...) to generate a plan, or --fault KIND --times once|always");
    SimConfig config;
    config.tasks = a.tasks;
    config.seed = a.seed;
    config.lanes = a.lanes;
    config.kinds = a.model.fault_weights();
    config.fallback = a.fallback.parsed(config.kinds, a.model.policy());
    plan = a.audit() ? generate_audit_plan(a.model.model(), a.model.policy(), config, a.max_requests)
                          : generate_plan(a.model.model(), a.model.policy(), config);
  }
  const std::string text = write_plan(plan);
  if (a.out.empty()) out() << text;
  else write_file_atomically(a.out, text);
  return 0;
}

}  // namespace

Runner add_plan(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand(
      "plan",
      "write a fault plan (JSON Lines): each task's requests, \"ok\" or a fault kind, as the simulator draws them\n"
      "  for --seed, or scripted with --fault KIND --times once|always; with the time options (--t-good ...), as\n"
      "  simulate in time mode draws them, each with its start in seconds");
  add_model_options(*cmd, args->model, false);
  add_policy_options(*cmd, args->model);
  cmd->add_option("--tasks", args->tasks, fmt::format("tasks, in [1, {}]", kMaxPlanTasks))->capture_default_str();
  add_seed_option(*cmd, args->seed, "simulation seed the plan reproduces");
  cmd->add_option("--lanes", args->lanes, "independent chains for the continuous scope")->capture_default_str();
  args->fault_option = cmd->add_option("--fault", args->fault, "scripted plan: this fault kind on every task");
  args->times_option =
      cmd->add_option("--times", args->times, "scripted plan: once (first request, then good) or always")
          ->capture_default_str();
  add_time_options(*cmd, args->time);
  const std::function<bool()> timed = args->time.timed_rule();
  add_fallback_options(*cmd, args->fallback, nullptr, timed, false);
  cmd->get_option("--fallback-after")
      ->description("a second provider after K failed requests of a call (docs/model.md, Fallback): each task gets a "
                    "\"fallback\" column, what each request gets at the server's /t/{task}/fallback/ path");
  refuse_with(args->fallback.after_option, args->fault_option,
              "plan: --fallback-after draws both providers' replies from the model: give --p2 and --p, not --fault");
  args->max_requests_option = cmd->add_option("--max-requests", args->max_requests,
                  fmt::format("a plan for auditing any client (relsim audit): every call's draws up to this many "
                              "requests, in [1, {}] and at least the policy's requests per call; needs b = g = 0",
                              kMaxRequestsPerCall));
  cmd->add_option("--out", args->out, "write the plan here (atomically) instead of stdout");
  for (CLI::Option* scripted : {args->fault_option, args->times_option})
    refuse_when(scripted, timed,
                "plan: --fault and --times script a plan; the time options (--t-good ...) generate one: give one or "
                "the other");
  refuse_when(args->max_requests_option, timed,
              "plan: --max-requests (a plan for auditing) is for the discrete model; drop it or the time options");
  return [args] { return run_plan(*args); };
}

}  // namespace relsim::cli
