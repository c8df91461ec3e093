// relsim live: run tasks for real against the embedded mock server and check
// each against the oracle.
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/live/live.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

struct LiveArgs {
  ModelArgs model;
  long long tasks = 400;
  CLI::Option* tasks_option = nullptr;
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = 16;
  std::string fault, times = "once", plan_file;
  ClientTiming timing = live_timing();
  LiveOptions options;
  bool json = false;
  std::string out;
};

// The plan to run: scripted (--fault), replayed (--plan), or drawn from the
// model, which is then returned in `model` for the exact value.
Plan live_plan(const LiveArgs& a, const Policy& policy, const SimConfig& config, std::optional<Model>& model) {
  if (!a.fault.empty())
    return scripted_plan(a.tasks_option->count() ? a.tasks : 1, parse_fault_kind(a.fault), parse_times(a.times),
                         policy);
  if (!a.plan_file.empty()) return read_plan(a.plan_file);
  if (!a.model.p_option->count())
    throw InputError("live: give --p (and --q ...) for a generated plan, --fault KIND --times once|always, or --plan FILE");
  model = a.model.model();
  return generate_plan(*model, policy, config);
}

struct LiveSummary {
  const LiveCheck& check;
  std::int64_t tasks;
  Interval ci;
  std::optional<double> exact;
};

Json live_json(const LiveArgs& a, const Policy& policy, const LiveSummary& s) {
  const LiveCheck& check = s.check;
  Json outcomes = Json::object();
  for (const auto& [name, count] : check.outcomes) outcomes[name] = count;
  Json mism = Json::array();
  for (auto t : check.mismatches) {
    const auto i = static_cast<std::size_t>(t);
    mism.push_back(Json{{"task", t},
                        {"oracle", check.oracle[i].outcome.name()},
                        {"oracle_requests", check.oracle[i].requests},
                        {"live", check.live[i].outcome.name()},
                        {"live_requests", check.live[i].requests},
                        {"error", check.live[i].error}});
  }
  return Json{{"policy", std::string(to_string(policy.kind))},
              {"n", policy.n},
              {"r", policy.r},
              {"s", policy.s},
              {"tasks", s.tasks},
              {"successes", check.successes},
              {"ci_low", s.ci.low},
              {"ci_high", s.ci.high},
              {"exact", s.exact ? Json(*s.exact) : Json(nullptr)},
              {"outcomes", outcomes},
              {"requests", check.requests},
              {"wrong", check.wrong},
              {"mismatches", static_cast<std::int64_t>(check.mismatches.size())},
              {"mismatched_tasks", mism},
              {"wall_seconds", check.wall_seconds},
              {"seed", a.seed}};
}

// A scripted run: every task, live against the oracle.
void print_scripted(const LiveArgs& a, const Policy& policy, const LiveCheck& check) {
  std::cout << fmt::format("relsim live: {} {} under {}\n", a.fault, a.times, describe(policy));
  std::cout << fmt::format("  {:>5}  {:<24} {:>8} {:>10}   {:<24} {:>8} {:>12}\n", "task", "live outcome",
                           "requests", "waited s", "oracle outcome", "requests", "waits <= s");
  for (std::size_t i = 0; i < check.live.size(); ++i)
    std::cout << fmt::format("  {:>5}  {:<24} {:>8} {:>10.3f}   {:<24} {:>8} {:>12.3f}\n", check.live[i].task,
                             check.live[i].outcome.name(), check.live[i].requests, check.live[i].seconds,
                             check.oracle[i].outcome.name(), check.oracle[i].requests,
                             check.oracle[i].max_wait_seconds);
}

// A generated or replayed run: the counts, and the interval against the exact value.
void print_counts(const LiveArgs& a, const Policy& policy, const LiveSummary& s) {
  const LiveCheck& check = s.check;
  std::cout << fmt::format("relsim live: {} tasks, {} policy, {} concurrent, {:.2f} s\n", s.tasks,
                           to_string(policy.kind), a.options.concurrency, check.wall_seconds);
  std::cout << fmt::format("  done {}/{}  95% Wilson [{:.4f}, {:.4f}]{}\n", check.successes, s.tasks, s.ci.low,
                           s.ci.high,
                           s.exact ? fmt::format("  exact {:.6f} ({})", *s.exact, s.ci.covers(*s.exact) ? "covered" : "NOT covered") : "");
  std::cout << fmt::format("  requests {}  wrong outcomes {}\n", check.requests, check.wrong);
  for (const auto& [name, count] : check.outcomes)
    if (name != "done") std::cout << fmt::format("  {:<24} {}\n", name, count);
}

int run_live_command(const LiveArgs& a) {
  const Policy policy = a.model.policy();
  SimConfig config;
  config.tasks = a.tasks;
  config.seed = a.seed;
  config.lanes = a.lanes;
  config.kinds = a.model.fault_weights();
  std::optional<Model> model;
  const Plan plan = live_plan(a, policy, config, model);
  LiveOptions options = a.options;
  options.jitter_seed = a.seed;
  const LiveCheck check = run_live_check(plan, policy, a.timing, options);
  const auto tasks = static_cast<std::int64_t>(check.live.size());
  LiveSummary summary{check, tasks, binomial_interval(IntervalKind::wilson, check.successes, tasks, 0.95), std::nullopt};
  if (model) {
    ExactOptions eopt;
    eopt.distribution = false;
    eopt.kinds = config.kinds;
    summary.exact = exact_matrix(*model, policy, eopt).success;
  }
  if (!a.out.empty()) write_file_atomically(a.out, live_csv(check));

  if (a.json) std::cout << dump_json(live_json(a, policy, summary)) << "\n";
  else if (!a.fault.empty()) print_scripted(a, policy, check);
  else print_counts(a, policy, summary);
  for (auto t : check.mismatches) {
    const auto i = static_cast<std::size_t>(t);
    std::cerr << fmt::format("relsim live: MISMATCH task {}: oracle {} after {} requests, live {} after {} ({})\n", t,
                             check.oracle[i].outcome.name(), check.oracle[i].requests, check.live[i].outcome.name(),
                             check.live[i].requests, check.live[i].error);
  }
  if (!a.json)
    std::cout << fmt::format("  oracle mismatches: {}\n", check.mismatches.size());
  return check.mismatches.empty() ? 0 : kExitMiss;
}

}  // namespace

Runner add_live(CLI::App& app) {
  auto a = std::make_shared<LiveArgs>();
  a->model.policy_kind = "layered";
  auto* cmd = app.add_subcommand(
      "live",
      "run tasks for real against the embedded mock server and check each against the oracle; exit 1 on any mismatch");
  add_model_options(*cmd, a->model, false);
  add_policy_options(*cmd, a->model);
  a->tasks_option = cmd->add_option("--tasks", a->tasks, "tasks (scripted runs: default 1)")->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of the plan and of the client's backoff jitter")->capture_default_str();
  cmd->add_option("--lanes", a->lanes, "independent chains for the continuous scope")->capture_default_str();
  cmd->add_option("--fault", a->fault, "scripted run: this fault kind on every task");
  cmd->add_option("--times", a->times, "scripted run: once or always")->capture_default_str();
  cmd->add_option("--plan", a->plan_file, "replay this plan file (from relsim plan)");
  cmd->add_option("--concurrency", a->options.concurrency, "tasks in flight at once")->capture_default_str();
  cmd->add_flag("--coordinated-start", a->options.coordinated_start,
                "the burst-start experiment: run tasks in waves of --concurrency, all of a wave's tasks starting "
                "together, instead of a sliding window that starts a task whenever one ends");
  cmd->add_option("--client-threads", a->options.client_threads, "threads running the client")->capture_default_str();
  cmd->add_option("--server-threads", a->options.server_threads, "threads running the server")->capture_default_str();
  add_timing_options(*cmd, a->timing);
  cmd->add_flag("--json", a->json, "print one JSON object");
  cmd->add_option("--out", a->out, "per-task CSV (oracle and live outcome, requests, seconds, match), atomically");
  return [a] { return run_live_command(*a); };
}

}  // namespace relsim::cli
