// relsim proxy: a plan's faults in front of a real model API (docs/proxy.md),
// on 127.0.0.1, until SIGINT or SIGTERM.
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"
#include "cli/commands.hpp"
#include "cli/option_rules.hpp"
#include "cli/stop_signals.hpp"

namespace relsim::cli {
namespace {

struct ProxyArgs {
  std::string upstream;
  int port = 0;
  int threads = 2;
  std::string plan;
  std::string log;
  std::string task_header;
  std::string upstream_ca;
  std::string retry_after = "0";
  std::string retry_after_ms;
  double upstream_timeout = 60.0;
  int max_connections = 2048;
};

// --task-header, lower-cased; "" stays "". Throws InputError unless it is a
// header name (letters, digits and '-', 1 to 64 of them).
std::string header_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-')
      throw InputError(fmt::format("--task-header '{}' is not a header name: use letters, digits and '-'", name));
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (out.size() > 64)
    throw InputError(fmt::format("--task-header '{}' is too long: at most 64 characters", name.substr(0, 80)));
  return out;
}

int run_proxy(const ProxyArgs& a) {
  ServerConfig config;
  config.upstream = parse_upstream(a.upstream);
  config.port = a.port;
  config.threads = a.threads;
  config.retry_after = a.retry_after;
  config.retry_after_ms = a.retry_after_ms;
  config.log_path = a.log;
  config.task_header = header_name(a.task_header);
  config.upstream_ca = a.upstream_ca;
  config.max_connections = static_cast<std::size_t>(a.max_connections);
  config.upstream_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(a.upstream_timeout * 1000.0)));
  validate(config);
  const Plan plan = read_plan(a.plan);
  StopSignals signals;  // before the server's threads start
  {
    Server server(config, plan);
    // The listening address last: scripts take the port after the last colon.
    out() << fmt::format("relsim proxy: forwarding to {}; listening on http://127.0.0.1:{}", config.upstream->url,
                         server.port())
          << std::endl;
    signals.wait();
    server.stop();  // the requests still open are logged "stopped", the log file closed
  }
  return 0;
}

}  // namespace

Runner add_proxy(CLI::App& app) {
  auto a = std::make_shared<ProxyArgs>();
  auto* cmd = app.add_subcommand("proxy", "put a plan's faults in front of a real model API, on 127.0.0.1");
  cmd->footer(
      "Each task's requests take the plan's entries in order, as relsim serve does: an ok entry is forwarded to\n"
      "the upstream and its answer streamed back unchanged; cut, no_stop, malformed, overloaded and stall break\n"
      "the real stream; http_429/500/503/529, slow_headers and reset are answered here and never reach the\n"
      "upstream. A request's task: POST /t/{task}/v1/messages, or POST /v1/messages with --task-header (else\n"
      "task 0). The request log is relsim serve's, with what each hop did (docs/proxy.md).");
  cmd->add_option("--upstream", a->upstream,
                  "the model API to forward to: http[s]://HOST[:PORT][/PATH], e.g. https://api.anthropic.com")
      ->required();
  cmd->add_option("--upstream-ca", a->upstream_ca,
                  "https: a PEM file of the CAs to trust instead of the system's store (a private CA)");
  cmd->add_option("--port", a->port, "port on 127.0.0.1 to listen on, in [0, 65535]; 0 picks a free one")->required();
  cmd->add_option("--plan", a->plan, "each task's requests, ok or a fault kind (relsim plan)")->required();
  cmd->add_option("--log", a->log, "write the request log (JSON Lines, for relsim audit and fit) to this file");
  cmd->add_option("--task-header", a->task_header,
                  "the header that names a request's task on POST /v1/messages, e.g. x-relsim-task");
  cmd->add_option("--threads", a->threads, "threads serving connections, in [1, 64]")->capture_default_str();
  cmd->add_option("--retry-after", a->retry_after, "retry-after header of http_429 replies, seconds")
      ->capture_default_str();
  cmd->add_option("--retry-after-ms", a->retry_after_ms, "also send retry-after-ms on http_429 replies, milliseconds");
  check_value<double>(cmd->add_option("--upstream-timeout", a->upstream_timeout,
                                      "seconds to connect and get the upstream's headers, and between two reads "
                                      "of its body, in [0.001, 3600]")
                          ->capture_default_str(),
                      [](double s) {
                        if (!(s >= 0.001 && s <= 3600.0))
                          throw InputError(fmt::format(
                              "upstream timeout = {:g} s is out of range: it must be in [0.001, 3600] seconds", s));
                      });
  cmd->add_option("--max-connections", a->max_connections, "client connections at once, in [1, 1000000]")
      ->capture_default_str();
  return [a] { return run_proxy(*a); };
}

}  // namespace relsim::cli
