// relsim tools: tool calls, the other half of an agent's I/O (docs/tools.md).
// `serve` runs the fault-injecting MCP server on 127.0.0.1 until SIGINT or
// SIGTERM: the three tools of tools/tool_catalog.hpp over the
// streamable HTTP transport, each tools/call under a fault from --plan or
// drawn from the chain.
#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "relsim/core/bursts.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/tools/mcp_service.hpp"
#include "relsim/tools/tool_audit.hpp"
#include "relsim/ui/ui_server.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"
#include "relsim/tools/tools_audit_report.hpp"
#include "cli/stop_signals.hpp"

namespace relsim::cli {
namespace {

struct ToolsServeArgs {
  int port = 0;
  std::string sandbox;
  std::string log;
  long long hold_ms = 2000;
  std::string plan;
  double p = 0.0, q = 0.0, burst_mean = 0.0;
  std::string kinds;
  std::uint64_t seed = rng::kReferenceSeed;
  std::string quota;
  double cache_threshold = 0.8;
  std::string queue_order = "fifo";
  std::uint64_t queue_seed = rng::kReferenceSeed;
  CLI::Option* plan_option = nullptr;
  CLI::Option* p_option = nullptr;
  CLI::Option* q_option = nullptr;
  CLI::Option* burst_option = nullptr;
  CLI::Option* kinds_option = nullptr;
  CLI::Option* seed_option = nullptr;
};

// Where the calls' faults come from: the plan, the chain, or nowhere.
tools::ToolFaultSource fault_source(const ToolsServeArgs& a) {
  const bool drawn = a.p_option->count() || a.q_option->count() || a.burst_option->count() || a.kinds_option->count() ||
                     a.seed_option->count();
  if (a.plan_option->count()) {
    try {
      return tools::ToolFaultSource(tools::read_tool_plan(read_file(a.plan, "plan")));
    } catch (const InputError& e) {
      throw InputError(fmt::format("plan = '{}': {}", a.plan, e.what()));
    }
  }
  if (!drawn) return {};
  if (!a.p_option->count()) throw InputError("the chain's options need --p: the long-run share of failed tool calls");
  Model model;
  model.p = a.p;
  model.q = a.p;
  if (a.q_option->count()) model.q = a.q;
  if (a.burst_option->count()) model.q = q_from_burst_mean(a.burst_mean);
  const tools::ToolFaultWeights weights =
      a.kinds_option->count() ? tools::parse_tool_fault_weights(a.kinds) : tools::ToolFaultWeights{};
  return tools::ToolFaultSource(model, weights, a.seed);
}

int run_tools_serve(const ToolsServeArgs& a) {
  tools::ToolsConfig tools_config;
  tools_config.sandbox = a.sandbox;
  if (!a.log.empty()) tools_config.log = a.log;
  tools_config.hold = std::chrono::milliseconds(a.hold_ms);
  tools_config.shared = {a.cache_threshold, tools::parse_queue_order(a.queue_order), a.queue_seed};
  if (!a.quota.empty()) tools_config.quota = tools::parse_quota(a.quota);
  ui::UiConfig config;
  config.site = ui::Site::tools;
  config.port = a.port;
  config.threads = 1;
  tools::ToolFaultSource faults = fault_source(a);
  config.tools = std::make_shared<tools::McpService>(tools_config, std::move(faults));
  StopSignals signals;  // before the server's threads start
  // The tools site runs no command: its one route is /mcp.
  ui::UiServer server(config, ui::CommandRunner([](const std::vector<std::string>&, const ui::CommandHooks&) {
                        return ui::CommandResult{kExitInput, "", "the tools server runs no command", ""};
                      }));
  out() << fmt::format("relsim tools: listening on {}mcp", server.url()) << std::endl;
  signals.wait();
  server.stop();
  return 0;
}

struct ToolsAuditArgs {
  std::string log, server_log, sandbox;
  bool json = false;
};

int run_tools_audit(const ToolsAuditArgs& a) {
  const std::string report = read_file(a.log, "log");
  std::optional<std::string> server;
  if (!a.server_log.empty()) server = read_file(a.server_log, "server log");
  std::optional<std::filesystem::path> sandbox;
  if (!a.sandbox.empty()) sandbox = a.sandbox;
  tools::ToolAudit audit;
  try {
    audit = tools::audit_tool_calls(report, server, sandbox);
  } catch (const InputError& e) {
    throw InputError(fmt::format("log = '{}': {}", a.log, e.what()));
  }
  out() << (a.json ? dump_json(tools_audit_json(audit)) + "\n" : tools_audit_text(audit)) << std::flush;
  return 0;
}

// Ranges and which options go together, declared on the options
// (option_rules.hpp): checked as the command line is read, before the
// sandbox is made.
void declare_tools_serve_rules(const ToolsServeArgs& a, CLI::Option* port, CLI::Option* hold_ms,
                               const std::array<CLI::Option*, 3>& shared) {
  check_value<std::string>(shared[0], [](const std::string& q) { tools::parse_quota(q); });
  check_value<double>(shared[1], [](double x) {
    if (!(x > 0.0 && x <= 1.0))
      throw InputError(fmt::format("cache-threshold = {} is out of range: it must be in (0, 1]", x));
  });
  check_value<std::string>(shared[2], [](const std::string& order) { tools::parse_queue_order(order); });
  check_value<int>(port, [](int p) {
    if (p < 0 || p > 65535)
      throw InputError(fmt::format("port = {} is out of range: it must be in [0, 65535] (0: a free one)", p));
  });
  check_value<long long>(hold_ms, [](long long ms) {
    if (ms < 1 || ms > tools::kMaxHoldMs)
      throw InputError(fmt::format("hold-ms = {} is out of range: it must be in [1, {}]", ms, tools::kMaxHoldMs));
  });
  refuse_with(a.burst_option, a.q_option, "give --q or --burst-mean, not both: --burst-mean L means q = 1 - 1/L");
  for (const CLI::Option* chain : {a.p_option, a.q_option, a.burst_option, a.kinds_option, a.seed_option})
    refuse_with(a.plan_option, chain,
                "give --plan or the chain's options (--p, --q or --burst-mean, --kinds, --seed), not both");
}

}  // namespace

Runner add_tools(CLI::App& app) {
  auto a = std::make_shared<ToolsServeArgs>();
  auto* cmd = app.add_subcommand("tools", "tool calls, the other half of an agent's I/O (docs/tools.md)");
  auto* serve = cmd->add_subcommand(
      "serve",
      "serve a fault-injecting MCP server on 127.0.0.1 until SIGINT/SIGTERM: POST /mcp or\n"
      "  /t/TENANT/a/AGENT/mcp (streamable HTTP, JSON responses) with the tools note_write(path, text), dump(n)\n"
      "  and add(a, b), and the shared tools scratch_*, cache_*, lock_* and job_* (docs/contention.md); each\n"
      "  tools/call meets a fault (ok, timeout, drop, unknown_tool, exec_error, partial_write, truncate) from\n"
      "  --plan or drawn from the chain (--p, --q, --kinds, --seed); without either every call is served");
  auto* port =
      serve->add_option("--port", a->port, "port on 127.0.0.1, in [0, 65535]; 0 picks a free one")->capture_default_str();
  serve->add_option("--sandbox", a->sandbox, "the folder note_write writes into (created if missing)")->required();
  serve->add_option("--log", a->log,
                    "write the call log here: one JSON line per tools/call (call, t_ms, tool, fault, stage, answer, "
                    "error, sandbox)");
  auto* hold_ms = serve->add_option("--hold-ms", a->hold_ms,
                    fmt::format("how long a timeout fault holds the answer, in [1, {}] ms", tools::kMaxHoldMs))
      ->capture_default_str();
  a->plan_option = serve->add_option(
      "--plan", a->plan, "the calls' faults: JSON lines, one per call in arrival order, {\"fault\": \"timeout\"}; "
                         "later calls are served");
  a->p_option = serve->add_option("--p", a->p, "long-run share of failed tool calls, in [0, 1]");
  a->q_option = serve->add_option("--q", a->q, "P(a call fails | the call before failed); default p (independent)");
  a->burst_option = serve->add_option("--burst-mean", a->burst_mean, "mean run of failed calls L >= 1 (q = 1 - 1/L)");
  a->kinds_option = serve->add_option(
      "--kinds", a->kinds,
      "weights of the faults a failed call gets, e.g. timeout=1,truncate=2 (default: all six equally)");
  a->seed_option = add_seed_option(*serve, a->seed, "seeds the calls' faults");
  // The shared tools (docs/contention.md, "Shared tools").
  auto* quota = serve->add_option("--tool-quota", a->quota,
                                  "tools/calls each tenant may make per window, CALLS/SECONDS (e.g. 5000/3600); "
                                  "a call over it gets HTTP 429 with retry-after (default: no quota)");
  auto* threshold = serve->add_option("--cache-threshold", a->cache_threshold,
                                      "the semantic cache's similarity for a hit, in (0, 1]")
                        ->capture_default_str();
  auto* order = serve->add_option("--queue-order", a->queue_order,
                                  "how job_next delivers a queue's results: fifo, or shuffled (seeded by --queue-seed)")
                    ->capture_default_str();
  add_seed_option(*serve, a->queue_seed, "seeds the shuffled queues' deliveries", "--queue-seed");
  declare_tools_serve_rules(*a, port, hold_ms, {quota, threshold, order});
  auto audit_args = std::make_shared<ToolsAuditArgs>();
  auto* audit = cmd->add_subcommand(
      "audit",
      "what a harness made of each tool-call fault group: from its report lines (examples/tools/lab.mjs), the\n"
      "  stage it caught each at, who reported it, the locating facts its error carried (stage, tool, parameter,\n"
      "  expected, got), side effects left in the sandbox and how far the call got at the server");
  audit->add_option("--log", audit_args->log, "the harness's report: JSON lines, one per call (docs/tools.md)")
      ->required();
  audit->add_option("--server-log", audit_args->server_log,
                    "the server's call log of the same run (relsim tools serve --log): how far each call got");
  audit->add_option("--sandbox", audit_args->sandbox, "the server's sandbox: a failed write's file looked for there");
  audit->add_flag("--json", audit_args->json, "one JSON object: per harness the counts and per_call");
  return [a, serve, audit_args, audit] {
    if (serve->parsed()) return run_tools_serve(*a);
    if (audit->parsed()) return run_tools_audit(*audit_args);
    throw InputError("relsim tools needs a subcommand: serve or audit (relsim tools --help)");
  };
}

}  // namespace relsim::cli
