// relsim serve: the fault-injecting mock server, standalone, until SIGINT or SIGTERM.
#include <csignal>
#include <iostream>
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
};

int run_serve(const ServeArgs& a) {
  ServerConfig config;
  config.port = a.port;
  config.threads = a.threads;
  config.retry_after = a.retry_after;
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
    Server server(config);
    if (!a.plan.empty()) server.load_plan(plan);
    std::cout << fmt::format("relsim serve: listening on http://127.0.0.1:{}", server.port()) << std::endl;
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server.stop();
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
      "  POST /t/{task}/v1/messages answers from the task's script; POST /control/tasks/{task}/script sets it");
  cmd->add_option("--port", args->port, "port on 127.0.0.1, in [0, 65535]; 0 picks a free one")->required();
  cmd->add_option("--threads", args->threads, "threads serving connections, in [1, 64]")->capture_default_str();
  cmd->add_option("--retry-after", args->retry_after, "retry-after header of http_429 replies, seconds")
      ->capture_default_str();
  cmd->add_option("--plan", args->plan, "load every task's script from this plan file (relsim plan)");
  return [args] { return run_serve(*args); };
}

}  // namespace relsim::cli
