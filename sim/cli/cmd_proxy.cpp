// relsim proxy: a plan's faults in front of a real model API (docs/proxy.md),
// on 127.0.0.1, until SIGINT or SIGTERM.
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "relsim/audit/audit.hpp"
#include "relsim/core/bursts.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/request_chain.hpp"
#include "relsim/core/outage.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"
#include "cli/stop_signals.hpp"

namespace relsim::cli {
namespace {

struct ProxyArgs {
  std::string upstream;
  int port = 0;
  int threads = 2;
  std::string plan;
  // Chain mode (--p), or in seconds (--t-good, --t-bad).
  double p = 0.0, q = 0.0, burst_mean = 0.0, t_good = 0.0, t_bad = 0.0;
  std::string kinds;
  std::uint64_t seed = rng::kReferenceSeed;
  CLI::Option *plan_opt = nullptr, *p_opt = nullptr, *q_opt = nullptr, *burst_opt = nullptr, *t_good_opt = nullptr,
              *kinds_opt = nullptr;
  std::string log;
  std::string task_header;
  std::string upstream_ca;
  std::string retry_after = "0";
  std::string retry_after_ms;
  double upstream_timeout = 60.0;
  int max_connections = 2048;
  std::string record;
  std::vector<std::string> redact;
};

// A header name given to `option` (--task-header, --redact), lower-cased;
// "" stays "". Throws InputError unless it is a header name (letters, digits
// and '-', up to 64 of them).
std::string header_name(const std::string& name, std::string_view option = "--task-header") {
  std::string out;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-')
      throw InputError(fmt::format("{} '{}' is not a header name: use letters, digits and '-'", option, name));
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (out.size() > 64)
    throw InputError(fmt::format("{} '{}' is too long: at most 64 characters", option, name.substr(0, 80)));
  return out;
}

FaultWeights kinds_of(const ProxyArgs& a) {
  return a.kinds_opt->count() ? parse_fault_weights(a.kinds) : FaultWeights::in_stream_uniform();
}

// --p with --q or --burst-mean: chain mode; else none.
std::optional<RequestChainConfig> chain_config(const ProxyArgs& a) {
  if (!a.p_opt->count()) return std::nullopt;
  RequestChainConfig c;
  c.p = a.p;
  c.q = a.burst_opt->count() ? q_from_burst_mean(a.burst_mean) : a.q_opt->count() ? a.q : a.p;
  c.seed = a.seed;
  c.kinds = kinds_of(a);
  RequestChain check(c);
  return c;
}

// --t-good and --t-bad: outage mode on the wall clock; else none.
std::optional<OutageConfig> seconds_config(const ProxyArgs& a) {
  if (!a.t_good_opt->count()) return std::nullopt;
  OutageConfig o;
  o.t_good = a.t_good;
  o.t_bad = a.t_bad;
  o.seed = a.seed;
  o.kinds = kinds_of(a);
  validate(o);
  return o;
}

int run_proxy(const ProxyArgs& a) {
  if (!a.plan_opt->count() && !a.p_opt->count() && !a.t_good_opt->count())
    throw InputError("where the faults come from is missing: give one of --plan, --p (chain mode) or --t-good with "
                     "--t-bad (seconds mode)");
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
  config.chain = chain_config(a);
  config.outage = seconds_config(a);
  config.record_dir = a.record;
  for (const std::string& name : a.redact) {
    if (name.empty()) throw InputError("--redact '' is not a header name: use letters, digits and '-'");
    config.record_redact.push_back(header_name(name, "--redact"));
  }
  if (!a.redact.empty() && a.record.empty())
    throw InputError("--redact applies to recordings: give --record DIR too");
  validate(config);
  const std::optional<Plan> plan = a.plan_opt->count() ? std::optional<Plan>(read_plan(a.plan)) : std::nullopt;
  if (plan) check_auditable(*plan, a.plan);
  if (plan && plan_fallback_after(*plan) > 0)
    throw InputError(fmt::format("{}: the plan has a fallback column, and the proxy has no second provider: make the "
                                 "plan without --fallback-after",
                                 a.plan));
  StopSignals signals;  // before the server's threads start
  {
    std::optional<Server> server;
    if (plan) server.emplace(config, *plan);
    else server.emplace(config);
    const std::string faults = plan      ? fmt::format("the plan {}", a.plan)
                               : config.chain ? fmt::format("a chain with p = {:g}, q = {:g}", config.chain->p, config.chain->q)
                                              : fmt::format("outages of {:g} s every {:g} s on average", a.t_bad,
                                                            a.t_good + a.t_bad);
    // The listening address last: scripts take the port after the last colon.
    out() << fmt::format("relsim proxy: forwarding to {} with {}; listening on http://127.0.0.1:{}",
                         config.upstream->url, faults, server->port())
          << std::endl;
    signals.wait();
    server->stop();  // the requests still open are logged "stopped", the log file closed
  }
  return 0;
}

}  // namespace

Runner add_proxy(CLI::App& app) {
  auto a = std::make_shared<ProxyArgs>();
  auto* cmd = app.add_subcommand("proxy", "put bursty faults in front of a real model API, on 127.0.0.1");
  cmd->footer(
      "Where the faults come from, one of: --plan (each task's requests take the plan's entries in order, as\n"
      "relsim serve does); --p with --q or --burst-mean (chain mode: each task's requests, as they arrive, walk\n"
      "the fault chain); --t-good and --t-bad (seconds: a request is bad when it arrives inside a bad period).\n"
      "A good request is forwarded to the upstream and its answer streamed back unchanged; cut, no_stop,\n"
      "malformed, overloaded and stall break the real stream; http_429/500/503/529, slow_headers, reset and\n"
      "garbage are answered here and never reach the upstream. A request's task: POST /t/{task}/v1/messages, or\n"
      "POST /v1/messages with --task-header (else task 0, one chain over every such request); the same for\n"
      "OpenAI's /v1/chat/completions, broken and answered in that dialect. The request log is relsim serve's,\n"
      "with what each hop did; relsim audit and fit read it (docs/proxy.md). GET /metrics gives its counters in\n"
      "Prometheus' text format.");
  cmd->add_option("--upstream", a->upstream,
                  "the model API to forward to: http[s]://HOST[:PORT][/PATH], e.g. https://api.anthropic.com")
      ->required();
  cmd->add_option("--upstream-ca", a->upstream_ca,
                  "https: a PEM file of the CAs to trust instead of the system's store (a private CA)");
  cmd->add_option("--port", a->port, "port on 127.0.0.1 to listen on, in [0, 65535]; 0 picks a free one")->required();
  a->plan_opt = cmd->add_option("--plan", a->plan, "each task's requests, ok or a fault kind (relsim plan)");
  a->p_opt = cmd->add_option("--p", a->p, "chain mode: long-run fraction of bad requests, in [0, 1]");
  a->q_opt = cmd->add_option("--q", a->q,
                             "chain mode: P(bad | previous bad), in [max(0, (2p-1)/p), 1]; default p (independent)");
  a->burst_opt = cmd->add_option("--burst-mean", a->burst_mean,
                                 "chain mode: mean burst length in requests, >= 1, instead of --q: q = 1 - 1/L");
  a->t_good_opt = cmd->add_option("--t-good", a->t_good, "seconds mode: mean good period, seconds, in (0, 1e9]");
  auto* t_bad = cmd->add_option("--t-bad", a->t_bad,
                                "seconds mode: mean bad period, seconds, in [0.001, 1e9]; every request that arrives "
                                "inside one is bad");
  a->kinds_opt = cmd->add_option("--kinds", a->kinds,
                                 "chain and seconds modes: fault-kind weights of bad requests, e.g. cut=1,http_529=2; "
                                 "default uniform over cut,no_stop,malformed,overloaded,stall");
  auto* seed = add_seed_option(*cmd, a->seed, "chain and seconds modes: seed of the faults and their kinds");
  const std::string one_source = "give one of --plan, --p (chain mode) or --t-good with --t-bad (seconds mode)";
  refuse_with(a->p_opt, a->plan_opt, "--p and --plan are two sources of faults: " + one_source);
  refuse_with(a->t_good_opt, a->plan_opt, "--t-good and --plan are two sources of faults: " + one_source);
  refuse_with(a->t_good_opt, a->p_opt, "--t-good and --p are two sources of faults: " + one_source);
  refuse_with(a->burst_opt, a->q_opt, "give --q or --burst-mean, not both: --burst-mean L means q = 1 - 1/L");
  needs_option(a->q_opt, a->p_opt, "--q applies in chain mode only: give --p too");
  needs_option(a->burst_opt, a->p_opt, "--burst-mean applies in chain mode only: give --p too");
  needs_option(t_bad, a->t_good_opt, "--t-bad applies in seconds mode only: give --t-good too");
  needs_option(a->t_good_opt, t_bad, "--t-good needs --t-bad: the mean bad period");
  refuse_with(a->kinds_opt, a->plan_opt, "--kinds does not apply with --plan: the plan names every request's kind");
  refuse_with(seed, a->plan_opt, "--seed does not apply with --plan: the plan's draws are made");
  check_value<double>(a->burst_opt, [](double L) { q_from_burst_mean(L); });
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
  cmd->add_option("--record", a->record,
                  "record every messages exchange (request less its credentials, the upstream's answer and each "
                  "event's arrival time) into a new JSON Lines file in this directory (docs/replay.md)");
  cmd->add_option("--redact", a->redact,
                  "a request header to leave out of the recordings besides x-api-key and authorization "
                  "(repeatable, or NAME,NAME)")
      ->delimiter(',');
  return [a] { return run_proxy(*a); };
}

}  // namespace relsim::cli
