// relsim fleet: many agents over tenants sharing one provider, simulated
// event by event (fleet/fleet.hpp): task success, 429 and 529 rates,
// amplification, latency and pool-wait quantiles, and goodput over time;
// with --live also run on loopback and compared (live/fleet_agreement.hpp).
#include <cmath>
#include <iostream>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/fleet/fleet.hpp"
#include "relsim/live/fleet_agreement.hpp"
#include "relsim/live/fleet_live.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "cli/commands.hpp"

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
  std::string csv;
  int replicates = 1, threads = 0;
  double bin_seconds = 1.0;
  std::uint64_t seed = rng::kReferenceSeed;
  CLI::Option *quota_option = nullptr, *capacity_option = nullptr, *pool_option = nullptr,
              *header_timeout_option = nullptr, *replicates_option = nullptr, *time_scale_option = nullptr;
};

// --quota, --capacity, --pool and --header-timeout: absent means no limit, so
// a given value must be a real limit.
void require_positive(const CLI::Option* option, double value, const std::string& name, const std::string& unit) {
  if (option->count() && !(value > 0.0))
    throw InputError(fmt::format("{} = {} is out of range: it must be > 0 {} (leave it out for no limit)", name, value,
                                 unit));
}

fleet::Scenario scenario_of(const FleetArgs& a) {
  fleet::Scenario s;
  s.agents = a.agents;
  s.tenants = a.tenants;
  s.tasks_per_agent = a.tasks_per_agent;
  s.start = fleet::parse_start(a.start);
  s.duration = a.duration;
  require_positive(a.quota_option, a.quota, "quota", "requests per minute");
  require_positive(a.capacity_option, static_cast<double>(a.capacity), "capacity", "streams");
  require_positive(a.header_timeout_option, a.header_timeout, "header-timeout", "seconds");
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
  s.long_agents = a.long_agents;
  s.long_seconds = a.long_seconds;
  s.backoff = parse_backoff(a.backoff);
  return s;
}

Json fleet_json(const fleet::Scenario& s, const fleet::RunConfig& c, const fleet::FleetResult& r) {
  const Interval ci = r.tasks > 0 ? binomial_interval(IntervalKind::wilson, r.successes, r.tasks, 0.95) : Interval{};
  Json j;
  j["tasks"] = r.tasks;
  j["successes"] = r.successes;
  j["success_rate"] = r.success_rate();
  j["ci_low"] = ci.low;
  j["ci_high"] = ci.high;
  j["requests"] = r.requests;
  j["rate_429"] = r.rate_429();
  j["rate_529"] = r.rate_529();
  j["amplification"] = r.amplification();
  j["latency_p50"] = r.latency_quantile(0.5);
  j["latency_p99"] = r.latency_quantile(0.99);
  j["pool_wait_p99"] = r.pool_wait_quantile(0.99);
  j["short_pool_wait_p99"] = r.short_pool_wait_quantile(0.99);
  j["seed"] = c.seed;
  j["replicates"] = r.replicates;
  j["good"] = r.good;
  j["r429"] = r.r429;
  j["r529"] = r.r529;
  j["timeouts"] = r.timeouts;
  j["wasted"] = r.wasted;
  j["denied"] = r.denied;
  j["events"] = r.events;
  Json outcomes = Json::object();
  for (int o = 0; o < kOutcomeClasses; ++o)
    if (r.outcomes[static_cast<std::size_t>(o)] > 0) outcomes[outcome_class(o).name()] = r.outcomes[static_cast<std::size_t>(o)];
  j["outcomes"] = outcomes;
  j["scenario"] = {{"agents", s.agents},       {"tenants", s.tenants},
                   {"tasks_per_agent", s.tasks_per_agent},
                   {"start", fleet::to_string(s.start)},
                   {"duration", s.duration},   {"quota", s.quota},
                   {"capacity", s.capacity},   {"queue", s.queue},
                   {"pool", s.pool_per_task ? Json("task") : Json(s.pool)},
                   {"throttle", fleet::to_string(s.throttle)},
                   {"trigger", fleet::to_string(s.trigger)},
                   {"header_timeout", s.header_timeout},
                   {"request_seconds", s.request_seconds},
                   {"long_agents", s.long_agents},
                   {"long_seconds", s.long_seconds},
                   {"backoff", to_string(s.backoff)},
                   {"policy", describe(s.policy)}};
  return j;
}

// t,sent,good,r429,r529,timeouts,started,finished,successes,goodput: one row
// per bin, counts over every replicate, goodput per second per replicate.
std::string series_csv(const fleet::FleetResult& r) {
  std::string s = "t,sent,good,r429,r529,timeouts,started,finished,successes,goodput\n";
  for (std::size_t i = 0; i < r.series.size(); ++i) {
    const fleet::Bin& b = r.series[i];
    const double goodput = static_cast<double>(b.good) / r.bin_seconds / r.replicates;
    s += fmt::format("{:g},{},{},{},{},{},{},{},{},{:g}\n", static_cast<double>(i) * r.bin_seconds, b.sent, b.good,
                     b.r429, b.r529, b.timeouts, b.started, b.finished, b.successes, goodput);
  }
  return s;
}

std::string fleet_table(const Json& j) {
  std::string s;
  const auto row = [&](const std::string& name, const std::string& value) { s += fmt::format("{:<16}{}\n", name, value); };
  const auto seconds = [](const Json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.3g} s", v.get<double>()); };
  const auto share = [](const Json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.3g}%", 100.0 * v.get<double>()); };
  const Json& sc = j["scenario"];
  const auto count = [](long long k, const char* one, const char* many) { return fmt::format("{} {}", k, k == 1 ? one : many); };
  row("scenario", fmt::format("{} over {}, start {}, {}", count(sc["agents"].get<long long>(), "agent", "agents"),
                              count(sc["tenants"].get<long long>(), "tenant", "tenants"), sc["start"].get<std::string>(),
                              sc["policy"].get<std::string>()));
  row("provider", fmt::format("quota {} rpm, capacity {}, queue {}, trigger {}",
                              sc["quota"].get<double>() > 0 ? fmt::format("{:g}", sc["quota"].get<double>()) : "none",
                              sc["capacity"].get<long long>() > 0 ? std::to_string(sc["capacity"].get<long long>()) : "none",
                              sc["queue"].get<long long>(), sc["trigger"].get<std::string>()));
  row("client", fmt::format("pool {}, throttle {}", sc["pool"].dump(), sc["throttle"].get<std::string>()));
  row("tasks", fmt::format("{} ({})", j["tasks"].get<long long>(), count(j["replicates"].get<int>(), "replicate", "replicates")));
  row("success", fmt::format("{} [{}, {}] (Wilson 95%)", share(j["success_rate"]), share(j["ci_low"]), share(j["ci_high"])));
  row("requests", fmt::format("{} ({} good, amplification {:.4g})", j["requests"].get<long long>(),
                              j["good"].get<long long>(), j["amplification"].is_null() ? NAN : j["amplification"].get<double>()));
  row("429", fmt::format("{} ({} of requests)", j["r429"].get<long long>(), share(j["rate_429"])));
  row("529", fmt::format("{} ({} of requests)", j["r529"].get<long long>(), share(j["rate_529"])));
  row("timeouts", fmt::format("{} given up, {} streams served for nobody", j["timeouts"].get<long long>(),
                              j["wasted"].get<long long>()));
  row("throttled", fmt::format("{} retries refused", j["denied"].get<long long>()));
  row("latency", fmt::format("p50 {}, p99 {}", seconds(j["latency_p50"]), seconds(j["latency_p99"])));
  if (sc["long_agents"].get<long long>() > 0)
    row("pool wait", fmt::format("p99 {} (the short agents' requests: {})", seconds(j["pool_wait_p99"]),
                                 seconds(j["short_pool_wait_p99"])));
  else
    row("pool wait", fmt::format("p99 {}", seconds(j["pool_wait_p99"])));
  row("seed", fmt::format("{}", j["seed"].get<std::uint64_t>()));
  return s;
}

// The live run beside the simulation: the live figures as the fleet's keys,
// then "live" (the run and its log), "simulated" (the replicates pooled)
// and "agreement" (each figure against the replicates' spread).
Json live_json(const fleet::Scenario& s, const fleet::RunConfig& c, const FleetLiveConfig& lc,
               const FleetLiveResult& live, const fleet::FleetResult& pooled,
               const std::vector<FigureAgreement>& figures, const LogAgreement& log) {
  Json j = fleet_json(s, c, live.counts);
  j.erase("events");  // the live run has none
  j["live"] = {{"time_scale", lc.time_scale},
               {"wall_seconds", live.wall_seconds},
               {"stream_seconds", live.stream_seconds},
               {"replayed_replicate", lc.replicate},
               {"wrong_answers", live.wrong_answers},
               {"server_log",
                {{"requests", live.log.requests},
                 {"r429", live.log.r429},
                 {"r529", live.log.r529},
                 {"most_in_flight_per_tenant", live.log.most_in_flight},
                 {"wrong_tenant", live.log.wrong_tenant},
                 {"unfinished", live.log.unfinished}}},
               {"log_agrees", log.agrees},
               {"log_problems", log.problems}};
  if (s.long_agents > 0) j["live"]["long_stream_seconds"] = live.long_stream_seconds;
  j["simulated"] = fleet_json(s, c, pooled);
  Json rows = Json::array();
  bool all = log.agrees;
  for (const FigureAgreement& f : figures) {
    rows.push_back({{"figure", f.name}, {"live", f.live}, {"mean", f.mean}, {"sd", f.sd}, {"min", f.min},
                    {"max", f.max}, {"replayed", f.replayed}, {"allowed", f.allowed}, {"agrees", f.agrees},
                    {"judged", f.judged}});
    all = all && (f.agrees || !f.judged);
  }
  j["agreement"] = rows;
  j["agrees"] = all;
  return j;
}

std::string live_table(const Json& j) {
  std::string s = "the live run:\n" + fleet_table(j);
  const Json& l = j["live"];
  const auto number = [](const Json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.4g}", v.get<double>()); };
  s += fmt::format("{:<16}{:.3g} wall s per model s; {:.2f} s of wall time; streams {:.4g} model s\n", "time scale",
                   l["time_scale"].get<double>(), l["wall_seconds"].get<double>(), l["stream_seconds"].get<double>());
  const Json& g = l["server_log"];
  s += fmt::format("{:<16}{} requests, {} 429s, {} 529s, at most {} of one tenant open at once: {}\n", "server log",
                   g["requests"].get<long long>(), g["r429"].get<long long>(), g["r529"].get<long long>(),
                   g["most_in_flight_per_tenant"].get<long long>(),
                   l["log_agrees"].get<bool>() ? "agrees with the client" : "DISAGREES");
  for (const auto& p : l["log_problems"]) s += fmt::format("{:<16}{}\n", "", p.get<std::string>());
  s += fmt::format("\nagainst {} simulated replicates (live within {:g} sd + {:g}% of the mean):\n",
                   j["simulated"]["replicates"].get<int>(), kSpreads, 100.0 * kRelativeSlack);
  s += fmt::format("{:<15}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}  {}\n", "figure", "live", "mean", "sd", "min", "max",
                   "replayed", "verdict");
  for (const auto& f : j["agreement"])
    s += fmt::format("{:<15}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}  {}\n", f["figure"].get<std::string>(),
                     number(f["live"]), number(f["mean"]), number(f["sd"]), number(f["min"]), number(f["max"]),
                     number(f["replayed"]),
                     !f["judged"].get<bool>() ? "(shown, not judged)" : f["agrees"].get<bool>() ? "agrees" : "DISAGREES");
  return s;
}

int run_fleet_live_command(const FleetArgs& a, const fleet::Scenario& scenario, fleet::RunConfig config) {
  if (!a.csv.empty()) throw InputError("--csv with --live: the live run keeps no time series; leave --csv out");
  if (!config.share.single()) throw InputError("--live runs in one process: start it without mpirun");
  FleetLiveConfig lc;
  lc.time_scale = a.time_scale;
  validate_live(scenario, lc);
  const int replicates = a.replicates_option->count() ? a.replicates : 20;
  if (replicates < 2)
    throw InputError(fmt::format("replicates = {} is out of range: --live compares with at least 2", replicates));
  config.replicates = 1;
  fleet::validate(scenario, a.force);
  const bool show = terminal_progress();
  std::vector<fleet::FleetResult> each;
  fleet::FleetResult pooled;
  for (int i = 0; i < replicates; ++i) {
    config.first_replicate = i;
    each.push_back(fleet::run_fleet(scenario, config, a.force));
    if (show) std::cerr << fmt::format("\rfleet: {}/{} replicates simulated", i + 1, replicates);
  }
  if (show) std::cerr << "\nfleet: running live...\n";
  const std::int64_t planned = scenario.agents * scenario.tasks_per_agent;
  for (const auto& r : each)
    if (r.tasks < planned)
      throw InputError(fmt::format("duration = {:g} s let a simulated replicate start only {} of the {} tasks: a live "
                                   "run runs them all, so give --live a longer --duration",
                                   scenario.duration, r.tasks, planned));
  const FleetLiveResult live = run_fleet_live(scenario, config.seed, lc);
  config.first_replicate = 0;
  config.replicates = replicates;
  pooled = fleet::run_fleet(scenario, config, a.force);
  const auto figures = compare_figures(live.counts, each, lc.replicate);
  const LogAgreement log = check_log(live, scenario);
  const Json j = live_json(scenario, config, lc, live, pooled, figures, log);
  out() << (a.json ? dump_json(j) + "\n" : live_table(j));
  return j["agrees"].get<bool>() ? 0 : 1;
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
  if (a.time_scale_option->count()) throw InputError("--time-scale needs --live: the simulation runs in virtual time");
  const bool show = terminal_progress();
  if (show && a.replicates > 1)
    config.progress = [&](std::int64_t done) { std::cerr << fmt::format("\rfleet: {}/{} replicates", done, a.replicates); };
  const fleet::FleetResult result = fleet::run_fleet(scenario, config, a.force);
  if (show && a.replicates > 1) std::cerr << "\n";
  if (!config.share.root()) return 0;
  const Json j = fleet_json(scenario, config, result);
  if (!a.csv.empty()) write_file_atomically(a.csv, series_csv(result));
  out() << (a.json ? dump_json(j) + "\n" : fleet_table(j));
  return 0;
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
  cmd->add_flag("--live", args->live,
                fmt::format("also run the scenario live: relsim's mock provider and client on 127.0.0.1, replaying "
                            "replicate 0's draws, time-scaled; compared with the simulated replicates and with the "
                            "server's log (exit 1 when they disagree). Coordinated start, in-stream fault kinds, no "
                            "queue, header timeout or trigger; at most {} agents and {} tasks",
                            kMaxLiveAgents, kMaxLiveTasks));
  args->time_scale_option =
      cmd->add_option("--time-scale", args->time_scale, "--live: wall seconds per model second, in [0.001, 10]")
          ->capture_default_str();
  add_seed_option(*cmd, args->seed, "Philox key");
  cmd->add_option("--threads", args->threads, "OpenMP threads (0: OpenMP's default); never changes the output")
      ->capture_default_str();
  cmd->add_option("--bin-seconds", args->bin_seconds, "the time series' bin (--csv)")->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object instead of a table");
  cmd->add_option("--csv", args->csv, "write the time series (goodput over time) to this file");
  return [args] { return run_fleet_command(*args); };
}

}  // namespace relsim::cli
