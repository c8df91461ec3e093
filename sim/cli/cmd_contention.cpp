// relsim contention run: many agents at once against the shared tools,
// scored (docs/contention.md).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "relsim/contention/contention.hpp"
#include "relsim/contention/trend.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/version.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/server/server.hpp"
#include "cli/agent_command.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"
#include "cli/require_option.hpp"

namespace relsim::cli {
namespace {

const std::vector<std::string> kContentionMetrics{"success",        "tool_429_rate",  "wrong_tenant_hit_rate",
                                                  "lost_updates",   "collisions",     "deadlocks",
                                                  "stale_accepted", "locks_past_ttl", "half_written_seen",
                                                  "pool_wait_p99",  "key_collisions", "rounds_lost",
                                                  "model_requests"};

struct ContentionArgs {
  std::string scenario, agent = "naive", agent_cmd, quota = "50/60", log, history, require;
  contention::ContentionConfig config;
  bool json = false;
  CLI::Option* deadline = nullptr;
};

Measured contention_measured(const contention::ContentionScores& s) {
  Measured m;
  m.values = {{"success", s.success.value()},
              {"tool_429_rate", s.tool_429.value()},
              {"wrong_tenant_hit_rate", s.wrong_tenant_hits.value()},
              {"lost_updates", double(s.lost_updates)},
              {"collisions", double(s.collisions)},
              {"deadlocks", double(s.deadlocks)},
              {"stale_accepted", s.stale_accepted.value()},
              {"locks_past_ttl", double(s.locks_past_ttl)},
              {"half_written_seen", double(s.half_written_seen)}};
  m.values["key_collisions"] = double(s.key_collisions);
  m.values["rounds_lost"] = s.rounds_lost.value();
  if (s.pool_wait_p99)
    m.values["pool_wait_p99"] = *s.pool_wait_p99;
  else
    m.missing["pool_wait_p99"] = "only long-short and mixed measure the pool wait";
  if (s.model_requests)
    m.values["model_requests"] = double(*s.model_requests);
  else
    m.missing["model_requests"] = "only --agent-cmd with {model_url} counts model requests";
  return m;
}

// The mock provider of {model_url}: relsim serve in chain mode with p = 0,
// so that every request of every task gets a healthy stream, and no agent
// runs out of script.
ServerConfig model_config(const contention::ContentionConfig& c) {
  ServerConfig sc;
  sc.threads = 2;
  sc.chain = RequestChainConfig{0.0, 1.0, c.seed};
  sc.max_connections = std::max<std::size_t>(sc.max_connections, 2 * static_cast<std::size_t>(c.agents) + 64);
  return sc;
}

// --history FILE: the run's scores as one JSON line, with when and which
// relsim, appended (docs/contention.md, History).
void append_history(const std::string& file, const contention::ContentionScores& s) {
  Json line = contention::scores_json(s);
  line["time"] = fmt::format("{:%FT%TZ}", std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
  line["relsim"] = std::string(version());
  line["commit"] = std::string(commit());
  append_line(file, line.dump(), "history file");
}

int run_contention_command(ContentionArgs& a) {
  a.config.scenario = contention::parse_scenario(a.scenario);
  a.config.agent = contention::parse_agent_kind(a.agent);
  a.config.quota = tools::parse_quota(a.quota);
  if (!a.history.empty()) check_appendable(a.history, "history file");
  const bool show = terminal_progress();
  const auto progress = [&](int done, int total) {
    if (show) std::cerr << fmt::format("\rcontention: {}/{} agents done", done, total) << (done == total ? "\n" : "");
  };
  contention::AgentRunner runner;
  std::unique_ptr<Server> model;  // {model_url}: a mock provider, every request a healthy stream
  if (!a.agent_cmd.empty()) {
    a.config.external = true;
    if (!a.deadline->count()) a.config.deadline_s = 60;
    const std::vector<std::string> words = parse_agent_command(a.agent_cmd);
    if (wants_model(words)) model = std::make_unique<Server>(model_config(a.config));
    runner = [words, port = model ? model->port() : 0](const contention::ContentionConfig& c,
                                                       const contention::AgentSlot& slot) {
      return run_agent_command(words, c, slot, port);
    };
  }
  contention::ContentionScores s = contention::run_contention(
      a.config, a.log.empty() ? std::nullopt : std::optional<std::string>(a.log), progress, runner);
  if (model) {
    model->stop();
    s.model_requests = 0;
    for (int i = 0; i < a.config.agents; ++i) {
      const TaskLog log = model->log(i);
      *s.model_requests += static_cast<std::int64_t>(log.requests.size() + log.dropped);
    }
  }
  if (!a.history.empty()) append_history(a.history, s);
  out() << (a.json ? dump_json(contention::scores_json(s)) + "\n" : contention::scores_table(s)) << std::flush;
  return require_verdict(a.require, kContentionMetrics, contention_measured(s));
}

// relsim contention trend: the four trend lines of a --history file.
struct TrendArgs {
  std::string history;
  bool json = false, csv = false;
};

int run_trend_command(const TrendArgs& a) {
  std::istringstream in(read_file(a.history, "history file"));
  const std::vector<contention::TrendRun> runs = contention::read_trend(in, a.history);
  out() << (a.json ? dump_json(contention::trend_json(runs)) + "\n"
                   : a.csv ? contention::trend_csv(runs) : contention::trend_table(runs))
        << std::flush;
  return 0;
}

CLI::App* add_trend(CLI::App& cmd, TrendArgs& a) {
  auto* trend = cmd.add_subcommand(
      "trend",
      "the essay's four trend lines across runs, from a --history file: accuracy, the tool 429 rate under a burst,\n"
      "  the cross-tenant leak rate and the pool wait p99, one row a run (what the workbench's trend panel draws)");
  trend->add_option("--history", a.history, "the file relsim contention run --history appended to")->required();
  auto* json = trend->add_flag("--json", a.json, "print one JSON object {\"runs\": [...]}");
  auto* csv = trend->add_flag("--csv", a.csv, "print CSV, one row a run (an empty cell where a run has no value)");
  json->excludes(csv);
  return trend;
}

}  // namespace

Runner add_contention(CLI::App& app) {
  auto a = std::make_shared<ContentionArgs>();
  auto* cmd = app.add_subcommand("contention", "many agents at once against shared tools, scored (docs/contention.md)");
  auto* run = cmd->add_subcommand(
      "run",
      "run N reference agents over M tenants at once against the MCP tools server's shared tools (a scratchpad,\n"
      "  a semantic cache, locks, result queues, a per-tenant quota) in one scenario, and score what a\n"
      "  sequential eval cannot see: lost updates, collisions, wrong-tenant cache hits, deadlocks, stale results,\n"
      "  locks held past their TTL, half-written records, 429s; the closed forms are checked with --concurrency 1,\n"
      "  --call-rate (the quota's exhaustion time), --key-bits (the birthday bound) and --think (lost updates).\n"
      "  long-short plays the model API's side (long streams starving a connection pool) with relsim's mock\n"
      "  provider and client beside the fleet's simulation; mixed runs all six in turn");
  run->add_option("--scenario", a->scenario,
                  "interleaved, probe-pairs, crash-mid-write, out-of-order, burst, long-short or mixed (all six in "
                  "turn)")
      ->required();
  auto* agent = run->add_option("--agent", a->agent, "the reference agent: naive or careful (docs/contention.md)")
                    ->capture_default_str();
  auto* agent_cmd = run->add_option(
      "--agent-cmd", a->agent_cmd,
      "your own agent instead, one process each: a command with {tools_url} and {tenant} (and {agent}, {task}, "
      "{scenario}, {seed}, {increments}, {burst_calls}, {model_url}: a mock provider's healthy streams), split at "
      "spaces, no shell");
  check_value<std::string>(agent_cmd, [](const std::string& text) { parse_agent_command(text); });
  refuse_with(agent_cmd, agent, "give --agent or --agent-cmd, not both");
  auto* agents = run->add_option("--agents", a->config.agents,
                                 fmt::format("agents, in [1, {}]", contention::kMaxAgents))->capture_default_str();
  run->add_option("--tenants", a->config.tenants, "tenants, in [1, agents]; agent i belongs to tenant i mod M")
      ->capture_default_str();
  run->add_option("--concurrency", a->config.concurrency, "agents at once, in [1, agents] (default: all at once)");
  add_seed_option(*run, a->config.seed, "seeds the shuffled queues and the agents' pauses");
  a->deadline = run->add_option("--deadline", a->config.deadline_s,
                                "seconds an agent has for its task, in [0.1, 600]; one still waiting then is "
                                "deadlocked (default 3, or 60 with --agent-cmd: a process must start first)");
  run->add_option("--increments", a->config.increments, "interleaved: counter increments per agent, in [1, 1000]")
      ->capture_default_str();
  run->add_option("--burst-calls", a->config.burst_calls, "burst: tool calls per agent, in [1, 10000]")
      ->capture_default_str();
  run->add_option("--tool-quota", a->quota, "burst: tools/calls per tenant per window, CALLS/SECONDS")
      ->capture_default_str();
  run->add_option("--call-rate", a->config.call_rate,
                  "burst: each agent's calls a second, in [0.001, 10000], all on one clock; the quota's exhaustion "
                  "time is checked (default: as fast as it can)");
  run->add_option("--key-bits", a->config.key_bits,
                  "interleaved: each agent first stores a memo under a key hashed to this many bits, in [1, 64]; the "
                  "birthday bound is checked (default: no memo)");
  auto* think = run->add_option("--think", a->config.think_s,
                  "interleaved: seconds from each increment's read to its write, in [0, 10]; one increment a round, "
                  "the lost-update probability checked (default 0: no rounds)");
  auto* spread = run->add_option("--spread", a->config.spread_s,
                                 "interleaved with --think: seconds over which each round's reads fall, uniformly, "
                                 "in [0.001, 600]")
                     ->capture_default_str();
  needs_option(spread, think, "--spread sets the rounds of --think: give --think too");
  run->add_option("--pool", a->config.pool,
                  "long-short: connections per tenant, in [1, 100]; that many of each tenant's agents stream long")
      ->capture_default_str();
  run->add_option("--log", a->log, "keep the tools server's call log here (JSON lines, docs/contention.md)");
  run->add_option("--history", a->history,
                  "append the scores to this file as one JSON line, with the time and relsim's version");
  run->add_flag("--json", a->json, "print one JSON object");
  add_require_option(*run, a->require, kContentionMetrics);
  check_value<int>(agents, [](int n) {
    if (n < 1 || n > contention::kMaxAgents)
      throw InputError(fmt::format("agents = {} is out of range: it must be in [1, {}]", n, contention::kMaxAgents));
  });
  auto t = std::make_shared<TrendArgs>();
  auto* trend = add_trend(*cmd, *t);
  return [a, run, t, trend] {
    if (run->parsed()) return run_contention_command(*a);
    if (trend->parsed()) return run_trend_command(*t);
    throw InputError("relsim contention needs a subcommand: run or trend (relsim contention --help)");
  };
}

}  // namespace relsim::cli
