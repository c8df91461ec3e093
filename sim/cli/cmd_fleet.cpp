// relsim fleet: many agents over tenants sharing one provider, simulated
// event by event (fleet/fleet.hpp): task success, 429 and 529 rates,
// amplification, latency and pool-wait quantiles, and goodput over time;
// with --live also run on loopback and compared (live/fleet_agreement.hpp).
#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/fleet/fleet.hpp"
#include "relsim/fleet/fleet_report.hpp"
#include "relsim/live/fleet_agreement.hpp"
#include "relsim/live/fleet_agreement_report.hpp"
#include "relsim/live/fleet_live.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {
namespace {

struct FleetArgs {
  ModelArgs model;
  long long agents = 50, tenants = 1, tasks_per_agent = 1;
  double quota = 0.0;
  long long capacity = 0, queue = 0;
  std::string pool;
  std::string start = "coordinated", throttle = "none", trigger = "none", backoff = "sdk";
  double duration = 600.0, header_timeout = 0.0, request_seconds = 1.0, long_seconds = 30.0;
  long long long_agents = 0;
  bool force = false, json = false, live = false;
  double time_scale = 0.1;
  std::string dialect = "anthropic";
  std::string csv;
  bool series = false;  // --json --series: the time series in the JSON
  int replicates = 1, threads = 0;
  double bin_seconds = 1.0;
  std::uint64_t seed = rng::kReferenceSeed;
  BillingArgs billing;
  CLI::Option *quota_option = nullptr, *capacity_option = nullptr, *pool_option = nullptr,
              *header_timeout_option = nullptr, *replicates_option = nullptr, *time_scale_option = nullptr,
              *dialect_option = nullptr;
};

// --quota, --capacity and --header-timeout (and --pool, in scenario_of):
// absent means no limit, so a given value must be a real limit. Declared on
// the option (option_rules.hpp).
CLI::Option* require_positive(CLI::Option* option, const std::string& name, const std::string& unit) {
  return check_value<double>(option, [name, unit](double value) {
    if (!(value > 0.0))
      throw InputError(fmt::format("{} = {} is out of range: it must be > 0 {} (leave it out for no limit)", name,
                                   value, unit));
  });
}

fleet::Scenario scenario_of(const FleetArgs& a) {
  fleet::Scenario s;
  s.agents = a.agents;
  s.tenants = a.tenants;
  s.tasks_per_agent = a.tasks_per_agent;
  s.start = fleet::parse_start(a.start);
  s.duration = a.duration;
  s.quota = a.quota;
  s.capacity = a.capacity;
  s.queue = a.queue;
  s.trigger = fleet::parse_trigger(a.trigger);
  if (a.pool_option->count()) {
    if (a.pool == "task") {
      s.pool_per_task = true;
    } else {
      const long long k = parse_integer(a.pool, "pool");
      if (k <= 0)
        throw InputError(fmt::format("pool = {} is out of range: it must be > 0 connections per tenant, or task "
                                     "(leave it out for no limit)", a.pool));
      s.pool = k;
    }
  }
  s.throttle = fleet::parse_throttle(a.throttle);
  s.header_timeout = a.header_timeout;
  s.model = a.model.model();
  s.policy = a.model.policy();
  s.kinds = a.model.fault_weights();
  s.request_seconds = a.request_seconds;
  s.dialect = parse_dialect(a.dialect);
  s.long_agents = a.long_agents;
  s.long_seconds = a.long_seconds;
  s.backoff = parse_backoff(a.backoff);
  s.billing = a.billing.parsed();
  return s;
}

int run_fleet_live_command(const FleetArgs& a, const fleet::Scenario& scenario, const fleet::RunConfig& config) {
  if (!config.share.single()) throw InputError("--live runs in one process: start it without mpirun");
  FleetLiveConfig lc;
  lc.time_scale = a.time_scale;
  lc.dialect = parse_dialect(a.dialect);
  validate_live(scenario, lc);
  const int replicates = a.replicates_option->count() ? a.replicates : 20;
  if (replicates < 2)
    throw InputError(fmt::format("replicates = {} is out of range: --live compares with at least 2", replicates));
  const bool show = terminal_progress();
  const auto simulated = [&](int done) {
    if (!show) return;
    std::cerr << fmt::format("\rfleet: {}/{} replicates simulated", done, replicates);
    if (done == replicates) std::cerr << "\nfleet: running live...\n";
  };
  const FleetAgreementRun run = run_fleet_agreement(scenario, config, lc, replicates, a.force, simulated);
  out() << (a.json ? dump_json(fleet_agreement_json(run)) + "\n" : fleet_agreement_table(run));
  return run.agrees() ? 0 : 1;
}

int run_fleet_command(const FleetArgs& a) {
  const fleet::Scenario scenario = scenario_of(a);
  fleet::RunConfig config;
  config.replicates = a.replicates;
  config.seed = a.seed;
  config.threads = a.threads;
  config.bin_seconds = a.bin_seconds;
  config.share = ranks();
  if (a.live) return run_fleet_live_command(a, scenario, config);
  // In-process (the workbench, `import relsim`) the hook hears each replicate
  // on the command's thread and may stop the run; else a line on a terminal.
  const ui::CommandHooks* h = hooks();
  const bool show = terminal_progress();  // never beside a hook
  if (h && h->progress)
    config.progress = [&](std::int64_t done) { h->progress(std::min<std::int64_t>(done, a.replicates), a.replicates); };
  else if (show && a.replicates > 1)
    config.progress = [&](std::int64_t done) { std::cerr << fmt::format("\rfleet: {}/{} replicates", done, a.replicates); };
  const fleet::FleetResult result = fleet::run_fleet(scenario, config, a.force);
  if (show && a.replicates > 1) std::cerr << "\n";
  if (!config.share.root()) return 0;
  if (!a.csv.empty()) write_file_atomically(a.csv, fleet::series_csv(result));
  if (a.json) {
    Json j = fleet::fleet_json(scenario, config, result);
    if (a.series) j["series"] = fleet::series_json(result);
    out() << dump_json(j) << "\n";
  } else {
    out() << fleet::fleet_table(scenario, config, result);
  }
  return 0;
}

// --live, --time-scale and --dialect; returns --live.
CLI::Option* add_live_options(CLI::App& cmd, FleetArgs& a) {
  CLI::Option* live = cmd.add_flag("--live", a.live,
                fmt::format("also run the scenario live: relsim's mock provider and client on 127.0.0.1, replaying "
                            "replicate 0's draws, time-scaled; compared with the simulated replicates and with the "
                            "server's log (exit 1 when they disagree). Coordinated start, in-stream fault kinds, no "
                            "queue, header timeout or trigger; at most {} agents and {} tasks",
                            kMaxLiveAgents, kMaxLiveTasks));
  a.time_scale_option =
      cmd.add_option("--time-scale", a.time_scale, "--live: wall seconds per model second, in [0.001, 10]")
          ->capture_default_str();
  a.dialect_option =
      cmd.add_option("--dialect", a.dialect,
                      "where the mock breaks a bad stream (docs/fleet.md), and with --live the API the agents speak: "
                      "anthropic (/v1/messages) or openai (/v1/chat/completions)")
          ->capture_default_str();
  return live;
}

}  // namespace

Runner add_fleet(CLI::App& app) {
  auto args = std::make_shared<FleetArgs>();
  args->model.n = 1;
  args->model.r = 2;
  auto* cmd = app.add_subcommand(
      "fleet", "many agents over tenants sharing one provider (quotas, capacity, pools, retry throttles, an outage), "
               "simulated event by event: success, 429 and 529 rates, amplification, latency, goodput over time");
  cmd->add_option("--agents", args->agents, fmt::format("agents, in [1, {}]", fleet::kMaxAgents))->capture_default_str();
  cmd->add_option("--tenants", args->tenants, "tenants (API keys); agent a is tenant a mod tenants, in [1, agents]")
      ->capture_default_str();
  cmd->add_option("--tasks-per-agent", args->tasks_per_agent, "coordinated start: tasks each agent runs back to back")
      ->capture_default_str();
  cmd->add_option("--start", args->start,
                  "coordinated (first tasks within 0.1 s), coordinated:WINDOW (seconds) or poisson:RATE (tasks per "
                  "second, an open stream)")
      ->capture_default_str();
  cmd->add_option("--duration", args->duration,
                  fmt::format("virtual seconds in which tasks start, in (0, {:g}]; up to {:g} with --force",
                              fleet::kMaxDuration, fleet::kMaxForcedDuration))
      ->capture_default_str();
  cmd->add_flag("--force", args->force, "allow a duration over the limit");
  args->quota_option = cmd->add_option("--quota", args->quota, "requests per minute per tenant (429 past it); default none");
  args->capacity_option = cmd->add_option("--capacity", args->capacity, "streams the provider serves at once; default none");
  cmd->add_option("--queue", args->queue, "requests that may wait for a stream (past it 529)")->capture_default_str();
  cmd->add_option("--trigger", args->trigger, "none or outage:START,LENGTH (no stream starts meanwhile: requests queue, or 529 past the queue)")
      ->capture_default_str();
  args->pool_option = cmd->add_option("--pool", args->pool, "connections per tenant, or task (one per task); default none");
  cmd->add_option("--throttle", args->throttle, "retry throttle per tenant: none, grpc:MAX,RATIO, aws or budget:RATIO[,MIN]")
      ->capture_default_str();
  args->header_timeout_option =
      cmd->add_option("--header-timeout", args->header_timeout, "seconds a request may wait in the provider's queue; default none");
  cmd->add_option("--request-seconds", args->request_seconds, "seconds a served request holds its stream")
      ->capture_default_str();
  cmd->add_option("--long-agents", args->long_agents,
                  "agents 0 .. L-1 stream for --long-seconds instead (long generations beside short calls)")
      ->capture_default_str();
  cmd->add_option("--long-seconds", args->long_seconds, "seconds a long agent's request holds its stream")
      ->capture_default_str();
  cmd->add_option("--backoff", args->backoff, "sdk, exp:BASE,CAP,JITTER, list:W1,W2,... or none")->capture_default_str();
  add_model_options(*cmd, args->model, false);
  add_policy_options(*cmd, args->model);
  for (const char* name : {"--p", "--r", "--n"}) cmd->get_option(name)->capture_default_str();
  args->replicates_option =
      cmd->add_option("--replicates", args->replicates,
                      fmt::format("independent runs, in [1, {}] (with --live: the replicates it is compared with, "
                                  "default 20)",
                                  fleet::kMaxReplicates))
          ->capture_default_str();
  CLI::Option* live = add_live_options(*cmd, *args);
  add_seed_option(*cmd, args->seed, "Philox key");
  add_billing_options(*cmd, args->billing, false);
  cmd->add_option("--threads", args->threads, "OpenMP threads (0: OpenMP's default); never changes the output")
      ->capture_default_str();
  cmd->add_option("--bin-seconds", args->bin_seconds, "the time series' bin (--csv)")->capture_default_str();
  auto* json = cmd->add_flag("--json", args->json, "print one JSON object instead of a table");
  auto* csv = cmd->add_option("--csv", args->csv, "write the time series (goodput over time) to this file");
  auto* series = cmd->add_flag("--series", args->series,
                               "--json: add the time series as columns (series: t, sent, good, r429, r529, timeouts, "
                               "goodput)");
  require_positive(args->quota_option, "quota", "requests per minute");
  require_positive(args->capacity_option, "capacity", "streams");
  require_positive(args->header_timeout_option, "header-timeout", "seconds");
  needs_option(args->time_scale_option, live, "--time-scale needs --live: the simulation runs in virtual time");
  refuse_with(live, csv, "--csv with --live: the live run keeps no time series; leave --csv out");
  refuse_with(live, series, "--series with --live: the live run keeps no time series; leave --series out");
  needs_option(series, json, "--series adds the time series to --json: give --json too");
  return [args] { return run_fleet_command(*args); };
}

}  // namespace relsim::cli
