// relsim live: run tasks for real against the embedded mock server and check
// each against the oracle.
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/fleet/scenario.hpp"
#include "relsim/live/live.hpp"
#include "relsim/live/live_report.hpp"
#include "relsim/live/live_time.hpp"
#include "relsim/live/live_time_report.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {
namespace {

struct LiveArgs {
  ModelArgs model;
  long long tasks = 400;
  CLI::Option* tasks_option = nullptr;
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = 16;
  std::string fault, times = "once", plan_file, dialect = "anthropic";
  ClientTiming timing = live_timing();
  LiveOptions options;
  bool json = false, timeline = false;
  std::string out;
  std::string throttle = "none";  // --throttle, as relsim fleet takes it
  // Time mode (--t-good --t-bad): the server in outage mode.
  TimeArgs time;
  FallbackArgs fallback;
  double spacing = 0.0;          // model seconds (--task-spacing; default_spacing unless given)
  double wait_tolerance = 0.05;  // wall seconds
  CLI::App* cmd = nullptr;
  bool given(const char* name) const { return cmd->get_option(name)->count() > 0; }
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


TimeLiveConfig time_live_config(const LiveArgs& a) {
  const TimeModel time = *a.time.time_model(a.model);  // validates the time options
  TimeLiveConfig c;
  c.t_good = a.time.t_good;
  c.t_bad = a.time.t_bad;
  c.retry_after = time.retry_after;
  c.kinds = a.model.fault_weights();
  c.policy = a.model.policy();
  c.timing = a.timing;
  c.timing.backoff_schedule = time.backoff;
  c.timing.think_seconds = time.think_seconds;
  c.tasks = a.tasks;
  c.dialect = parse_dialect(a.dialect);
  c.spacing = a.given("--task-spacing") ? a.spacing : default_spacing(c.t_good, c.t_bad);
  c.concurrency = a.options.concurrency;
  c.client_threads = a.options.client_threads;
  c.server_threads = a.options.server_threads;
  c.seed = a.seed;
  c.wait_tolerance = a.wait_tolerance;
  // The exact value knows no deadline: unless given, the deadlines are the
  // longest a call and a task can take.
  const LiveDeadlines need = needed_deadlines(c);
  if (!a.given("--call-timeout")) c.timing.call_timeout = need.call;
  if (!a.given("--task-timeout")) c.timing.task_timeout = need.task;
  return c;
}

int run_time_mode(const LiveArgs& a) {
  const TimeLiveCheck check = run_time_live_check(time_live_config(a));
  if (!a.out.empty()) write_file_atomically(a.out, time_live_csv(check));
  if (a.json) out() << dump_json(time_live_json(check)) << "\n";
  else out() << time_live_summary(check);
  for (const std::string& p : check.problems) std::cerr << "relsim live: " << p << "\n";
  if (!check.covered())
    std::cerr << fmt::format("relsim live: the exact success {:.6f} is outside the interval [{:.4f}, {:.4f}]\n",
                             check.exact, check.interval.low, check.interval.high);
  return check.passed() ? 0 : kExitMiss;
}

int run_live_command(const LiveArgs& a) {
  if (a.time.timed()) return run_time_mode(a);
  const Policy policy = a.model.policy();
  SimConfig config;
  config.tasks = a.tasks;
  config.seed = a.seed;
  config.lanes = a.lanes;
  config.kinds = a.model.fault_weights();
  config.fallback = a.fallback.parsed(config.kinds, policy);  // a drawn plan with its fallback column (and header)
  std::optional<Model> model;
  const Plan plan = live_plan(a, policy, config, model);
  LiveOptions options = a.options;
  options.fallback_after = plan_fallback_after(plan);
  options.dialect = parse_dialect(a.dialect);
  options.jitter_seed = a.seed;
  options.keep_logs = a.timeline;
  options.throttle = fleet::parse_throttle(a.throttle);
  const LiveCheck check = run_live_check(plan, policy, a.timing, options);
  LiveReport report = live_report(check, policy, model, config.kinds, config.fallback);
  if (options.fallback_after > 0)
    report.fallback = plan.header.contains("fallback") ? plan.header["fallback"] : Json{{"after", options.fallback_after}};
  report.throttle = a.throttle;
  report.seed = a.seed;
  report.concurrency = a.options.concurrency;
  report.fault = a.fault;
  report.times = a.times;
  report.dialect = options.dialect;
  report.timeline = a.timeline;
  if (!a.out.empty()) write_file_atomically(a.out, live_csv(check));
  if (a.json) out() << dump_json(live_json(report)) << "\n";
  else out() << live_table(report);
  std::cerr << live_mismatch_lines(check);
  if (!a.json) out() << live_mismatch_count(check);
  return check.mismatches.empty() ? 0 : kExitMiss;
}

constexpr const char* kNoHiddenChain =
    "--hidden-chain does not apply to relsim live in time mode: the mock's outage mode has two states: give "
    "--t-good and --t-bad";

// Options of the plan-driven check that time mode has no use for, and why
// (--hidden-chain: kNoHiddenChain, before its other rules).
void refuse_plan_options_in_time_mode(CLI::App& cmd, const std::function<bool()>& timed) {
  const std::pair<const char*, const char*> refused[] = {
      {"--throttle", "the check compares the success rate with the exact value, which has no throttle"},
      {"--fault", "the outage schedule decides which requests fail"},
      {"--plan", "the outage schedule decides which requests fail"},
      {"--lanes", "tasks start --task-spacing apart on one schedule"},
      {"--coordinated-start", "tasks start --task-spacing apart"},
      {"--backoff-base", "give --backoff exp:BASE,CAP,JITTER"},
      {"--backoff-cap", "give --backoff exp:BASE,CAP,JITTER"},
      {"--request-seconds", "the mock answers at once, and the exact value takes 0 s"},
      {"--request-seconds-from", "the mock answers at once, and the exact value takes 0 s"},
      {"--fault-seconds", "a slow_headers fault takes the client's --header-timeout and a stall its --idle-timeout"},
      {"--timeline", "it draws the requests of a plan's tasks: give --fault, --plan or --p"}};
  for (const auto& [name, why] : refused) {
    CLI::Option* option = cmd.get_option(name);
    refuse_when(option, timed, fmt::format("{} does not apply to relsim live in time mode: {}", name, why));
    // A time option is refused in time mode too, the only one it has here: --help says so.
    if (std::string_view(name).starts_with("--request-seconds") || std::string_view(name) == "--fault-seconds")
      option->description(fmt::format("refused here: {}", why));
  }
  cmd.get_option("--hidden-chain")->description("refused here: the mock's outage mode has two states");
  check_value<std::string>(cmd.get_option("--chain"), [timed](const std::string& chain) {
    if (timed() && parse_chain_scope(chain) != ChainScope::fresh)
      throw InputError("--chain continuous does not apply to relsim live in time mode: tasks start --task-spacing "
                       "apart, each on the stationary state (the fresh scope)");
  });
}

}  // namespace

Runner add_live(CLI::App& app) {
  auto a = std::make_shared<LiveArgs>();
  a->model.policy_kind = "layered";
  auto* cmd = app.add_subcommand(
      "live",
      "run tasks for real against the embedded mock server and check each against the oracle; exit 1 on any mismatch.\n"
      "  Time mode (--t-good --t-bad): the server in outage mode, the success rate against the exact value and every "
      "retry's wait against the backoff");
  a->cmd = cmd;
  add_model_options(*cmd, a->model, false);
  add_policy_options(*cmd, a->model);
  // The one command whose default is not simple: it runs a real client, and
  // a real client (the SDK) retries at the HTTP layer under any stream retries.
  cmd->get_option("--policy")->description(
      "simple, naive, layered or budgeted (docs/policies.md); live alone defaults to layered, the SDK's "
      "HTTP retries under the stream retries of a real client (every other command: simple); the output names it");
  a->tasks_option = cmd->add_option("--tasks", a->tasks, "tasks (scripted runs: default 1)")->capture_default_str();
  add_seed_option(*cmd, a->seed, "seed of the plan (time mode: of the outage schedule) and of the client's backoff jitter");
  cmd->add_option("--lanes", a->lanes, "independent chains for the continuous scope")->capture_default_str();
  cmd->add_option("--fault", a->fault, "scripted run: this fault kind on every task");
  cmd->add_option("--times", a->times, "scripted run: once or always")->capture_default_str();
  cmd->add_option("--plan", a->plan_file, "replay this plan file (from relsim plan)");
  cmd->add_option("--dialect", a->dialect,
                  "the API the client speaks: anthropic (POST /v1/messages) or openai (POST /v1/chat/completions); "
                  "the plan, the oracle and the verdicts are the same")
      ->capture_default_str();
  cmd->add_option("--concurrency", a->options.concurrency, "tasks in flight at once")->capture_default_str();
  cmd->add_flag("--coordinated-start", a->options.coordinated_start,
                "the burst-start experiment: run tasks in waves of --concurrency, all of a wave's tasks starting "
                "together, instead of a sliding window that starts a task whenever one ends");
  cmd->add_option("--throttle", a->throttle,
                  "the client's retry throttle, as relsim fleet takes it: none, grpc:MAX,RATIO, aws or "
                  "budget:RATIO[,MIN] (docs/fleet.md, Throttles); checked against the oracle with --concurrency 1")
      ->capture_default_str();
  cmd->add_option("--client-threads", a->options.client_threads, "threads running the client")->capture_default_str();
  cmd->add_option("--server-threads", a->options.server_threads, "threads running the server")->capture_default_str();
  add_timing_options(*cmd, a->timing);
  auto* json = cmd->add_flag("--json", a->json, "print one JSON object");
  needs_option(cmd->add_flag("--timeline", a->timeline,
                             "with --json: add \"timeline\", each task against the oracle and each request as the server "
                             "logged it (start and end ms, reply, status, retry count, retry layer)"),
               json, "--timeline adds a key to the --json object: give --json too");
  cmd->add_option("--out", a->out, "per-task CSV (oracle and live outcome, requests, seconds, match), atomically");
  add_time_options(*cmd, a->time, {{"--hidden-chain", kNoHiddenChain}});
  const std::function<bool()> timed = a->time.timed_rule();
  needs_time_mode(cmd->add_option("--task-spacing", a->spacing,
                                  "time mode: model seconds between two task starts, > 0; default 5 / (1/t_good + "
                                  "1/t_bad)"),
                  timed);
  needs_time_mode(cmd->add_option("--wait-tolerance", a->wait_tolerance,
                                  "time mode: wall seconds a retry's wait may fall outside [max (1 - jitter), max], "
                                  "in [0, 60]")
                      ->capture_default_str(),
                  timed);
  refuse_plan_options_in_time_mode(*cmd, timed);
  add_fallback_options(*cmd, a->fallback, nullptr, timed, false);
  a->fallback.after_option->description(
      "a second provider after K failed requests of a call (docs/model.md, Fallback): the client sends the call's "
      "later requests to the server's /t/{task}/fallback/ path, the plan is drawn with both providers' replies "
      "(a --plan made with --fallback-after brings its own)");
  for (const char* name : {"--plan", "--fault"})
    refuse_with(a->fallback.after_option, cmd->get_option(name),
                fmt::format("--fallback-after draws a plan with both providers' replies from --p and --p2; {} gives "
                            "the plan (a plan made by relsim plan --fallback-after brings its own fallback)",
                            name));
  return [a] { return run_live_command(*a); };
}

}  // namespace relsim::cli
