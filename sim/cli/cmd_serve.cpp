// relsim serve: the fault-injecting mock server, standalone, until SIGINT or SIGTERM.
#include <csignal>
#include <iostream>
#include <optional>
#include <pthread.h>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/live/plan.hpp"
#include "relsim/live/server/server.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

struct ServeArgs {
  int port = 0;
  int threads = 1;
  std::string retry_after = "0";
  std::string plan;
  std::string log;
};

int run_serve(const ServeArgs& a) {
  ServerConfig config;
  config.port = a.port;
  config.threads = a.threads;
  config.retry_after = a.retry_after;
  config.log_path = a.log;
  validate(config);
  Plan plan;
  if (!a.plan.empty()) plan = read_plan(a.plan);

  // The signals are taken by sigwait below, never by a handler: block them
  // before the server's threads start so that they inherit the mask.
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
  int code = 0;
  {
    // With a plan, the server loads it before listening: the log's header
    // names its number of tasks. The log file is created before either.
    std::optional<Server> server;
    if (a.plan.empty()) server.emplace(config);
    else server.emplace(config, plan);
    std::cout << fmt::format("relsim serve: listening on http://127.0.0.1:{}", server->port()) << std::endl;
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server->stop();  // the requests still open are logged "stopped", the log file closed
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return code;
}

}  // namespace

Runner add_serve(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand(
      "serve",
      "run the fault-injecting mock of the Messages streaming API on 127.0.0.1 until SIGINT/SIGTERM:\n"
      "  POST /t/{task}/v1/messages answers from the task's script; POST /control/tasks/{task}/script sets it;\n"
      "  GET /control/tasks lists the tasks, POST /control/tasks/{task}/outcome takes a harness's report");
  cmd->add_option("--port", args->port, "port on 127.0.0.1, in [0, 65535]; 0 picks a free one")->required();
  cmd->add_option("--threads", args->threads, "threads serving connections, in [1, 64]")->capture_default_str();
  cmd->add_option("--retry-after", args->retry_after, "retry-after header of http_429 replies, seconds")
      ->capture_default_str();
  cmd->add_option("--plan", args->plan, "load every task's script from this plan file (relsim plan)");
  cmd->add_option("--log", args->log,
                  "write the request log (JSON Lines, for relsim audit) to this file, line by line; "
                  "also served at GET /control/log");
  return [args] { return run_serve(*args); };
}

}  // namespace relsim::cli
