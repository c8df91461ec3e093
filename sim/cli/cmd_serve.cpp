// relsim serve: the fault-injecting mock server, standalone, until SIGINT or SIGTERM.
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/live/outage.hpp"
#include "relsim/live/plan.hpp"
#include "relsim/live/server/server.hpp"
#include "cli/commands.hpp"
#include "cli/stop_signals.hpp"

namespace relsim::cli {
namespace {

struct ServeArgs {
  int port = 0;
  int threads = 1;
  std::string retry_after = "0";
  std::string plan;
  std::string log;
  // Outage mode.
  std::string outage;  // T_GOOD,T_BAD
  std::uint64_t outage_seed = rng::kReferenceSeed;
  std::string kinds;
  double time_scale = 1.0;
  CLI::App* cmd = nullptr;
  bool given(const char* name) const { return cmd->get_option(name)->count() > 0; }
};

// --outage and its options: the outage schedule's config, or none.
std::optional<OutageConfig> outage_config(const ServeArgs& a) {
  if (!a.given("--outage")) {
    for (const char* name : {"--outage-seed", "--kinds", "--time-scale"})
      if (a.given(name)) throw InputError(fmt::format("{} applies in outage mode only: give --outage T_GOOD,T_BAD", name));
    return std::nullopt;
  }
  if (a.given("--plan"))
    throw InputError("--plan does not apply in outage mode (--outage): the outage schedule answers every task");
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

int run_serve(const ServeArgs& a) {
  ServerConfig config;
  config.port = a.port;
  config.threads = a.threads;
  config.retry_after = a.retry_after;
  config.log_path = a.log;
  config.outage = outage_config(a);
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
    out() << fmt::format("relsim serve: listening on http://127.0.0.1:{}", server->port()) << std::endl;
    signals.wait();
    server->stop();  // the requests still open are logged "stopped", the log file closed
  }
  return code;
}

}  // namespace

Runner add_serve(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand(
      "serve",
      "run the fault-injecting mock of the Messages streaming API on 127.0.0.1 until SIGINT/SIGTERM:\n"
      "  POST /t/{task}/v1/messages answers from the task's script; POST /control/tasks/{task}/script sets it;\n"
      "  GET /control/tasks lists the tasks, POST /control/tasks/{task}/outcome takes a harness's report;\n"
      "  with --outage every task is answered by an on/off outage schedule in scaled real time (GET /control/outage)");
  args->cmd = cmd;
  cmd->add_option("--port", args->port, "port on 127.0.0.1, in [0, 65535]; 0 picks a free one")->required();
  cmd->add_option("--threads", args->threads, "threads serving connections, in [1, 64]")->capture_default_str();
  cmd->add_option("--retry-after", args->retry_after, "retry-after header of http_429 replies, seconds")
      ->capture_default_str();
  cmd->add_option("--plan", args->plan, "load every task's script from this plan file (relsim plan)");
  cmd->add_option("--log", args->log,
                  "write the request log (JSON Lines, for relsim audit) to this file, line by line; "
                  "also served at GET /control/log");
  cmd->add_option("--outage", args->outage,
                  "outage mode: T_GOOD,T_BAD, the mean good and bad sojourns in model seconds; a request is bad when "
                  "the schedule is bad as it arrives");
  cmd->add_option("--outage-seed", args->outage_seed, "outage mode: seed of the schedule and the fault kinds")
      ->capture_default_str();
  cmd->add_option("--kinds", args->kinds,
                  "outage mode: fault-kind weights of bad requests, e.g. cut=1,http_529=2; default uniform over "
                  "cut,no_stop,malformed,overloaded,stall");
  cmd->add_option("--time-scale", args->time_scale,
                  "outage mode: wall seconds per model second, in [1e-6, 1000]")
      ->capture_default_str();
  return [args] { return run_serve(*args); };
}

}  // namespace relsim::cli
