// relsim contention run's scores (contention.hpp): rates with Wilson
// intervals, counts from the server's log, and the closed forms that a run
// can be checked against before it runs (docs/contention.md).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>

#include <fmt/format.h>

#include "relsim/contention/contention.hpp"
#include "relsim/core/error.hpp"

namespace relsim::contention {
namespace {

constexpr std::string_view kScenarios[] = {"interleaved", "probe-pairs", "crash-mid-write", "out-of-order",
                                           "burst",       "long-short",  "mixed"};

// An external agent's calls, 429s and lookups, as the server logged them
// (its own report says only whether it was done and, if it took a result,
// whether the result was stale).
void counts_from_log(std::vector<AgentReport>& agents, const std::vector<Json>& log) {
  for (const Json& line : log) {
    const std::string name = line.value("agent", "");
    if (name.size() < 2 || name[0] != 'a') continue;
    const int i = std::atoi(name.c_str() + 1);
    if (i < 0 || i >= static_cast<int>(agents.size())) continue;
    AgentReport& a = agents[static_cast<std::size_t>(i)];
    ++a.tool_calls;
    a.http_429 += line.value("stage", "") == "quota";
    if (line.value("tool", "") == "cache_get" && line.contains("outcome")) {
      ++a.lookups;
      a.wrong_tenant_hits += line["outcome"] == "hit" && line["facts"].value("other_tenant", false);
    }
  }
}

}  // namespace

std::string_view to_string(Scenario s) { return kScenarios[static_cast<int>(s)]; }

Scenario parse_scenario(std::string_view word) {
  for (std::size_t i = 0; i < std::size(kScenarios); ++i)
    if (word == kScenarios[i]) return static_cast<Scenario>(i);
  throw InputError(fmt::format("scenario = '{}' is not a scenario: use interleaved, probe-pairs, crash-mid-write, "
                               "out-of-order, burst, long-short or mixed",
                               word.substr(0, 100)));
}

std::string_view to_string(AgentKind a) { return a == AgentKind::naive ? "naive" : "careful"; }

AgentKind parse_agent_kind(std::string_view word) {
  if (word == "naive") return AgentKind::naive;
  if (word == "careful") return AgentKind::careful;
  throw InputError(fmt::format("agent = '{}' is not a reference agent: use naive or careful", word.substr(0, 100)));
}

void validate(const ContentionConfig& c) {
  if (c.agents < 1 || c.agents > kMaxAgents)
    throw InputError(fmt::format("agents = {} is out of range: it must be in [1, {}]", c.agents, kMaxAgents));
  if (c.tenants < 1 || c.tenants > c.agents)
    throw InputError(fmt::format("tenants = {} is out of range: it must be in [1, agents = {}]", c.tenants, c.agents));
  if (c.concurrency < 0 || c.concurrency > c.agents)
    throw InputError(fmt::format("concurrency = {} is out of range: it must be in [1, agents = {}] (0: all at once)",
                                 c.concurrency, c.agents));
  if (!(c.deadline_s >= 0.1 && c.deadline_s <= 600))
    throw InputError(fmt::format("deadline = {} s is out of range: it must be in [0.1, 600]", c.deadline_s));
  if (c.increments < 1 || c.increments > 1000)
    throw InputError(fmt::format("increments = {} is out of range: it must be in [1, 1000]", c.increments));
  if (c.burst_calls < 1 || c.burst_calls > 10000)
    throw InputError(fmt::format("burst calls = {} is out of range: it must be in [1, 10000]", c.burst_calls));
  if (c.quota.calls < 1 || c.quota.window_ms < 1)
    throw InputError(fmt::format("tool quota = {}/{} ms is out of range: both must be >= 1", c.quota.calls,
                                 c.quota.window_ms));
  if (c.pool < 1 || c.pool > 100)
    throw InputError(fmt::format("pool = {} is out of range: it must be in [1, 100]", c.pool));
  if (c.call_rate != 0 && !(c.call_rate >= 0.001 && c.call_rate <= 10000))
    throw InputError(fmt::format("call rate = {} is out of range: it must be in [0.001, 10000] calls a second "
                                 "(0: as fast as the agent can)",
                                 c.call_rate));
  if (c.key_bits < 0 || c.key_bits > 64)
    throw InputError(fmt::format("key bits = {} is out of range: it must be in [1, 64] (0: no memo)", c.key_bits));
  if (!(c.think_s >= 0 && c.think_s <= 10))
    throw InputError(fmt::format("think = {} s is out of range: it must be in [0, 10]", c.think_s));
  if (!(c.spread_s >= 0.001 && c.spread_s <= 600))
    throw InputError(fmt::format("spread = {} s is out of range: it must be in [0.001, 600]", c.spread_s));
  const auto in = [&](Scenario one) { return c.scenario == one || c.scenario == Scenario::mixed; };
  if (c.call_rate > 0 && !in(Scenario::burst))
    throw InputError(fmt::format("call rate = {} paces the burst's calls: scenario = {} makes none (use burst or mixed)",
                                 c.call_rate, to_string(c.scenario)));
  if (c.key_bits > 0 && !in(Scenario::interleaved))
    throw InputError(fmt::format("key bits = {} sets interleaved's memo keys: scenario = {} writes none (use "
                                 "interleaved or mixed)",
                                 c.key_bits, to_string(c.scenario)));
  if (c.think_s > 0 && !in(Scenario::interleaved))
    throw InputError(fmt::format("think = {} s sets interleaved's rounds: scenario = {} has none (use interleaved or "
                                 "mixed)",
                                 c.think_s, to_string(c.scenario)));
  const bool timed = c.think_s > 0 || c.call_rate > 0;
  if (timed && c.concurrency > 0 && c.concurrency < c.agents)
    throw InputError(fmt::format("{} times every agent at once on one clock: concurrency = {} must be the agents ({}) "
                                 "or left out",
                                 c.think_s > 0 ? fmt::format("think = {} s", c.think_s)
                                               : fmt::format("call rate = {}", c.call_rate),
                                 c.concurrency, c.agents));
  // A paced run's length, bounded as the deadline is.
  const double paced = std::max(c.call_rate > 0 ? (c.burst_calls - 1) / c.call_rate : 0.0,
                                c.think_s > 0 ? c.increments * (c.spread_s + 2 * c.think_s) : 0.0);
  if (paced > 600)
    throw InputError(fmt::format("the paced run would last {:.0f} s: it must be at most 600 s (burst: (burst calls - "
                                 "1) / call rate; interleaved: increments x (spread + 2 think))",
                                 paced));
  if (c.external && (c.call_rate > 0 || c.key_bits > 0 || c.think_s > 0))
    throw InputError("--call-rate, --key-bits and --think set the reference agents' timing and keys: your agent "
                     "(--agent-cmd) keeps its own");
  const bool model_side = c.scenario == Scenario::long_short || c.scenario == Scenario::mixed;
  if (model_side && c.external)
    throw InputError(fmt::format("scenario = {}: long streams are played by relsim's own client against its mock "
                                 "provider; --agent-cmd takes the five tool scenarios",
                                 to_string(c.scenario)));
  if (model_side && c.agents < c.tenants * (c.pool + 1))
    throw InputError(fmt::format("agents = {} is too few for {}: each of the {} tenants needs pool = {} long agents "
                                 "and a short one, so agents must be >= {}",
                                 c.agents, to_string(c.scenario), c.tenants, c.pool, c.tenants * (c.pool + 1)));
}

void merge_into(ContentionScores& all, ContentionScores one) {
  const auto add = [](Rate& to, const Rate& from) {
    to.k += from.k;
    to.n += from.n;
  };
  add(all.success, one.success);
  add(all.tool_429, one.tool_429);
  add(all.wrong_tenant_hits, one.wrong_tenant_hits);
  add(all.stale_accepted, one.stale_accepted);
  all.lost_updates += one.lost_updates;
  all.collisions += one.collisions;
  all.deadlocks += one.deadlocks;
  all.locks_past_ttl += one.locks_past_ttl;
  all.half_written_seen += one.half_written_seen;
  all.key_collisions += one.key_collisions;
  add(all.rounds_lost, one.rounds_lost);
  if (one.pool_wait_p99) all.pool_wait_p99 = one.pool_wait_p99;
  for (Prediction p : one.predictions) {
    p.what = fmt::format("{}: {}", to_string(one.config.scenario), p.what);
    all.predictions.push_back(std::move(p));
  }
  all.seconds += one.seconds;
  one.agents.clear();  // kept per scenario in the scores alone
  all.by_scenario.push_back(std::move(one));
}

Interval Rate::interval() const {
  return n ? binomial_interval(IntervalKind::wilson, k, n, 0.95) : Interval{0.0, 1.0};
}

ContentionScores score(const ContentionConfig& config, std::vector<AgentReport> agents, const std::vector<Json>& log,
                       const std::vector<std::int64_t>& counted, std::int64_t locks_held_at_end) {
  ContentionScores s;
  s.config = config;
  if (config.external) counts_from_log(agents, log);
  for (const AgentReport& a : agents) {
    if (!a.crashed) {
      ++s.success.n;
      s.success.k += a.done;
    }
    s.tool_429.n += a.tool_calls;
    s.tool_429.k += a.http_429;
    s.wrong_tenant_hits.n += a.lookups;
    s.wrong_tenant_hits.k += a.wrong_tenant_hits;
    s.deadlocks += a.stuck;
    if (config.scenario == Scenario::out_of_order && (a.done || a.stale_accepted)) {
      ++s.stale_accepted.n;
      s.stale_accepted.k += a.stale_accepted;
    }
    s.half_written_seen += a.half_written_seen;
  }
  if (config.scenario == Scenario::interleaved) {
    // The same counters, by contract; with think_s one a round, each of
    // which holds every agent's increment when none is lost.
    const std::int64_t per_round = rounds(config) > 0 ? config.agents : std::int64_t{config.agents} * config.increments;
    for (const std::int64_t sum : counted) {
      s.lost_updates += per_round - sum;
      if (rounds(config) > 0) {
        ++s.rounds_lost.n;
        s.rounds_lost.k += sum < per_round;
      }
    }
  }
  for (const Json& line : log) {
    const std::string tool = line.value("tool", "");
    const bool met = line.contains("facts") && line["facts"].contains("owner");
    if (tool.starts_with("scratch_") && met && line["facts"].value("other_tenant", false)) ++s.collisions;
    // A memo write (--key-bits) over another agent's entry: the key's hash collided.
    if (tool == "scratch_put" && met && line.value("key", "").find("memo:") != std::string::npos &&
        line["facts"]["owner"] != fmt::format("{}/{}", line.value("tenant", ""), line.value("agent", "")))
      ++s.key_collisions;
  }
  s.locks_past_ttl = locks_held_at_end;
  s.agents = std::move(agents);
  if (!config.external) add_predictions(s, log);  // the closed forms are the reference agents'
  return s;
}

}  // namespace relsim::contention
