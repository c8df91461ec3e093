// relsim serve: the fault-injecting mock server, standalone, until SIGINT or SIGTERM.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/outage.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"
#include "cli/stop_signals.hpp"

namespace relsim::cli {
namespace {

struct ServeArgs {
  int port = 0;
  int threads = 1;
  std::string retry_after = "0";
  std::string retry_after_ms;
  std::string plan;
  std::string log;
  // Outage mode.
  std::string outage;  // T_GOOD,T_BAD
  std::uint64_t outage_seed = rng::kReferenceSeed;
  std::string kinds;
  double time_scale = 1.0;
  // Provider mode.
  double quota = 0.0;
  std::int64_t capacity = 0;
  std::size_t max_connections = ServerConfig{}.max_connections;
  double read_timeout = 5.0;
  // Replay mode.
  std::string replay;
  double pace = 1.0;
  std::vector<std::string> match;
  std::string upstream;
  CLI::App* cmd = nullptr;
  bool given(const char* name) const { return cmd->get_option(name)->count() > 0; }
};

// --outage and its options: the outage schedule's config, or none.
std::optional<OutageConfig> outage_config(const ServeArgs& a) {
  if (!a.given("--outage")) return std::nullopt;
  const auto sojourns = parse_outage_sojourns(a.outage);
  OutageConfig o;
  o.t_good = sojourns[0];
  o.t_bad = sojourns[1];
  o.time_scale = a.time_scale;
  o.seed = a.outage_seed;
  if (a.given("--kinds")) o.kinds = parse_fault_weights(a.kinds);
  validate(o);
  return o;
}

// --quota and --capacity: the provider in front of the scripts, or none. A
// limit left out is none; 0 or below is refused here, not read as none (the
// provider's config takes 0 for none), and validate() checks the rest.
std::optional<ProviderConfig> provider_config(const ServeArgs& a) {
  if (!a.given("--quota") && !a.given("--capacity")) return std::nullopt;
  ProviderConfig p;
  if (a.given("--quota")) {
    p.quota_rpm = a.quota;
  }
  if (a.given("--capacity")) {
    p.capacity = a.capacity;
  }
  p.time_scale = a.time_scale;
  validate(p);
  return p;
}

int run_serve(const ServeArgs& a) {
  ServerConfig config;
  config.port = a.port;
  config.threads = a.threads;
  config.retry_after = a.retry_after;
  config.retry_after_ms = a.retry_after_ms;
  config.log_path = a.log;
  config.outage = outage_config(a);
  config.provider = provider_config(a);
  config.max_connections = a.max_connections;
  config.read_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(a.read_timeout * 1000.0)));
  config.replay_dir = a.replay;
  config.replay_pace = a.pace;
  config.replay_match = a.match;
  if (a.given("--upstream")) {  // record-on-miss: into the replay's own directory
    config.upstream = parse_upstream(a.upstream);
    config.record_dir = a.replay;
  }
  validate(config);
  Plan plan;
  if (!a.plan.empty()) plan = read_plan(a.plan);

  int code = 0;
  StopSignals signals;  // before the server's threads start
  {
    // With a plan, the server loads it before listening: the log's header
    // names its number of tasks. The log file is created before either.
    std::optional<Server> server;
    if (a.plan.empty()) server.emplace(config);
    else server.emplace(config, plan);
    // One line, the listening address last: scripts take the port after the last colon.
    const std::string replaying =
        a.replay.empty() ? ""
                         : fmt::format("replaying {} of {} at pace {:g}{}; ", server->replay_summary(), a.replay, a.pace,
                                       config.upstream ? fmt::format(", recording misses from {}", config.upstream->url)
                                                       : "");
    out() << fmt::format("relsim serve: {}listening on http://127.0.0.1:{}", replaying, server->port()) << std::endl;
    signals.wait();
    server->stop();  // the requests still open are logged "stopped", the log file closed
  }
  return code;
}

// The options the rules below name.
struct ServeOptionsGiven {
  CLI::Option *plan, *outage, *outage_seed, *kinds, *time_scale, *quota, *capacity, *read_timeout, *replay, *pace,
      *match, *upstream;
};

// Which options go together and their ranges, declared on them
// (option_rules.hpp).
void declare_serve_rules(const ServeOptionsGiven& o) {
  refuse_when(o.time_scale, [o] { return !o.outage->count() && !o.quota->count() && !o.capacity->count(); },
              "--time-scale applies in outage or provider mode only: give --outage, --quota or --capacity");
  needs_option(o.outage_seed, o.outage, "--outage-seed applies in outage mode only: give --outage T_GOOD,T_BAD");
  needs_option(o.kinds, o.outage, "--kinds applies in outage mode only: give --outage T_GOOD,T_BAD");
  refuse_with(o.outage, o.plan,
              "--plan does not apply in outage mode (--outage): the outage schedule answers every task");
  check_value<double>(o.quota, [](double quota) {
    if (!(quota > 0.0))
      throw InputError(fmt::format("quota = {:g} is out of range: it must be in (0, 1e9] requests per minute per "
                                   "tenant (leave --quota out for none)",
                                   quota));
  });
  check_value<std::int64_t>(o.capacity, [](std::int64_t capacity) {
    if (capacity < 1)
      throw InputError(fmt::format("capacity = {} is out of range: it must be in [1, 1000000] replies at once "
                                   "(leave --capacity out for none)",
                                   capacity));
  });
  needs_option(o.pace, o.replay, "--pace applies to a replay: give --replay DIR too");
  needs_option(o.match, o.replay, "--match applies to a replay: give --replay DIR too");
  needs_option(o.upstream, o.replay,
               "--upstream applies to a replay (record-on-miss); to forward every request, use relsim proxy");
  check_value<double>(o.read_timeout, [](double seconds) {
    if (!(seconds >= 0.001 && seconds <= 3600.0))
      throw InputError(
          fmt::format("read timeout = {:g} s is out of range: it must be in [0.001, 3600] seconds", seconds));
  });
}

}  // namespace

Runner add_serve(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand(
      "serve",
      "run the fault-injecting mock of the Messages streaming API on 127.0.0.1 until SIGINT/SIGTERM:\n"
      "  POST /t/{task}/v1/messages answers from the task's script; POST /control/tasks/{task}/script sets it;\n"
      "  POST /t/{task}/v1/chat/completions answers the same script in OpenAI's shapes, streamed or whole;\n"
      "  GET /control/tasks lists the tasks, POST /control/tasks/{task}/outcome takes a harness's report;\n"
      "  with --outage every task is answered by an on/off outage schedule in scaled real time (GET /control/outage);\n"
      "  with --quota or --capacity a provider in front limits each tenant's requests and all replies at once;\n"
      "  with --replay it answers with recorded exchanges (relsim proxy --record), at their pace, faults on top;\n"
      "  GET /metrics gives its counters in Prometheus' text format (docs/proxy.md, Metrics)");
  args->cmd = cmd;
  cmd->add_option("--port", args->port, "port on 127.0.0.1, in [0, 65535]; 0 picks a free one")->required();
  cmd->add_option("--threads", args->threads, "threads serving connections, in [1, 64]")->capture_default_str();
  cmd->add_option("--retry-after", args->retry_after, "retry-after header of http_429 replies, seconds")
      ->capture_default_str();
  cmd->add_option("--retry-after-ms", args->retry_after_ms,
                  "also send retry-after-ms on http_429 replies, milliseconds (the SDKs read it first); default: not sent");
  auto* plan = cmd->add_option("--plan", args->plan, "load every task's script from this plan file (relsim plan)");
  cmd->add_option("--log", args->log,
                  "write the request log (JSON Lines, for relsim audit) to this file, line by line; "
                  "also served at GET /control/log");
  auto* outage = cmd->add_option("--outage", args->outage,
                  "outage mode: T_GOOD,T_BAD, the mean good and bad sojourns in model seconds; a request is bad when "
                  "the schedule is bad as it arrives");
  auto* outage_seed = cmd->add_option("--outage-seed", args->outage_seed, "outage mode: seed of the schedule and the fault kinds")
      ->capture_default_str();
  auto* kinds = cmd->add_option("--kinds", args->kinds,
                  "outage mode: fault-kind weights of bad requests, e.g. cut=1,http_529=2; default uniform over "
                  "cut,no_stop,malformed,overloaded,stall");
  auto* time_scale = cmd->add_option("--time-scale", args->time_scale,
                  "outage and provider modes: wall seconds per model second, in [1e-6, 1000]")
      ->capture_default_str();
  auto* quota = cmd->add_option("--quota", args->quota,
                  "provider mode: requests per minute per tenant (tenant = x-api-key), a token bucket that starts "
                  "full; past it 429 with retry-after and anthropic-ratelimit-requests-* headers "
                  "(x-ratelimit-*-requests in the OpenAI dialect); in (0, 1e9]");
  auto* capacity = cmd->add_option("--capacity", args->capacity,
                  "provider mode: replies served at once, in [1, 1000000]; past it 529 overloaded");
  cmd->add_option("--max-connections", args->max_connections,
                  "connections open at once, in [1, 1000000]; past it the server refuses them")
      ->capture_default_str();
  auto* read_timeout = cmd->add_option("--read-timeout", args->read_timeout,
                  "seconds a connection has to send a whole request, from its accept (the first) or its first byte, "
                  "in [0.001, 3600]")
      ->capture_default_str();
  auto* replay = cmd->add_option("--replay", args->replay,
                  "replay mode: answer each request with the exchange recorded in this directory (relsim proxy "
                  "--record) that it matches, the plan's faults on top; no match: 404 naming the nearest (docs/replay.md)");
  auto* pace = cmd->add_option("--pace", args->pace,
                  "replay mode: the recorded timing times this, in [0, 1000]; 1: as recorded, 0: at once")
      ->capture_default_str();
  auto* match = cmd->add_option("--match", args->match,
                  "replay mode: the request-body fields compared, e.g. model,messages; default every field but "
                  "metadata, stream_options and user")
      ->delimiter(',');
  auto* upstream = cmd->add_option("--upstream", args->upstream,
                  "replay mode: forward a request no recording matches to this API (http[s]://HOST[:PORT][/PATH]) and "
                  "record it into the --replay directory (record-on-miss)");
  declare_serve_rules({plan, outage, outage_seed, kinds, time_scale, quota, capacity, read_timeout, replay, pace, match,
                       upstream});
  return [args] { return run_serve(*args); };
}

}  // namespace relsim::cli
