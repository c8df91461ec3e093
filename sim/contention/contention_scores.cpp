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

// Agents of tenant t among N: those i < N with i mod M = t.
std::int64_t agents_of(int t, int n, int m) { return n / m + (t < n % m ? 1 : 0); }

Prediction rate_prediction(std::string what, double value, const Rate& r) {
  Prediction p{std::move(what), value, r.value(), r.interval(), true};
  p.agrees = r.n == 0 || p.interval->covers(value);
  return p;
}

Prediction count_prediction(std::string what, double value, double measured) {
  return {std::move(what), value, measured, std::nullopt, std::abs(value - measured) < 0.5};
}

// Closed forms for agents run one at a time (--concurrency 1), where the
// order of the calls is the order of the agents (docs/contention.md).
void sequential_predictions(ContentionScores& s) {
  const ContentionConfig& c = s.config;
  const int n = c.agents, m = c.tenants;
  const bool naive = c.agent == AgentKind::naive;
  switch (c.scenario) {
    case Scenario::interleaved:
      // The first read and write of each naive agent after the first meet the previous agent's entry.
      s.predictions.push_back(count_prediction("collisions, one at a time", naive && m > 1 ? 2.0 * (n - 1) : 0.0,
                                               double(s.collisions)));
      s.predictions.push_back(count_prediction("lost updates, one at a time", 0.0, double(s.lost_updates)));
      break;
    case Scenario::probe_pairs: {
      // Naive: both lookups of every agent after the first hit agent 0's
      // entry (tenant 0), all four wordings being alike past the threshold.
      const double wrong = naive ? 2.0 * double((n - 1) - (n - 1) / m) : 0.0;
      s.predictions.push_back(
          rate_prediction("wrong-tenant hit rate, one at a time", wrong / (2.0 * n), s.wrong_tenant_hits));
      break;
    }
    case Scenario::out_of_order: {
      // Naive: agent k takes one of k + 2 pending results at random (k left over, its own two).
      double right = 0.0;
      for (int k = 0; k < n; ++k) right += 1.0 / (k + 2);
      s.predictions.push_back(
          rate_prediction("stale accepted, one at a time", naive ? 1.0 - right / n : 0.0, s.stale_accepted));
      break;
    }
    case Scenario::crash_mid_write: {
      // Naive: agent 4 dies holding a lock that never expires; every agent after it waits out its deadline.
      const double after = naive && n > 5 ? n - 5 : 0;
      s.predictions.push_back(count_prediction("deadlocks, one at a time", after, double(s.deadlocks)));
      s.predictions.push_back(count_prediction("half-written records seen, one at a time", after,
                                               double(s.half_written_seen)));
      s.predictions.push_back(count_prediction("locks past TTL, one at a time", naive && n >= 5 ? 1 : 0,
                                               double(s.locks_past_ttl)));
      break;
    }
    case Scenario::burst: break;  // the same for any concurrency: below
    case Scenario::long_short:      // the fleet's simulation: long_short.cpp
    case Scenario::mixed: break;    // each scenario's own
  }
}

// The quota: a tenant's first Q calls are served, the rest refused; agent
// by agent, floor(Q / C) of its agents are served whole and every other one
// meets a 429 once (careful) or four times (naive, three retries at once).
void burst_prediction(ContentionScores& s) {
  const ContentionConfig& c = s.config;
  const std::int64_t calls = c.burst_calls, q = c.quota.calls;
  std::int64_t served = 0, refused = 0;
  for (int t = 0; t < c.tenants; ++t) {
    const std::int64_t n_t = agents_of(t, c.agents, c.tenants);
    served += std::min(q, n_t * calls);
    refused += std::max<std::int64_t>(0, n_t - q / calls) * (c.agent == AgentKind::naive ? 4 : 1);
  }
  const double rate = double(refused) / double(served + refused);
  if (c.concurrency == 1) {
    s.predictions.push_back(rate_prediction("tool 429 rate, one at a time", rate, s.tool_429));
    return;
  }
  // At once, the quota is spread over more agents, and more of them meet
  // a 429: one at a time is a lower bound.
  Prediction p = rate_prediction("tool 429 rate, at least (one at a time)", rate, s.tool_429);
  p.agrees = p.interval->high >= rate;
  s.predictions.push_back(std::move(p));
}

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
                       std::int64_t counted, std::int64_t locks_held_at_end) {
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
  if (config.scenario == Scenario::interleaved)
    s.lost_updates = std::int64_t{config.agents} * config.increments - counted;  // the same counters, by contract
  for (const Json& line : log) {
    const bool scratch = line.value("tool", "").starts_with("scratch_");
    if (scratch && line.contains("facts") && line["facts"].value("other_tenant", false)) ++s.collisions;
  }
  s.locks_past_ttl = locks_held_at_end;
  s.agents = std::move(agents);
  if (config.external) return s;  // the closed forms are the reference agents'
  if (config.scenario == Scenario::burst)
    burst_prediction(s);
  else if (config.concurrency == 1)
    sequential_predictions(s);
  return s;
}

}  // namespace relsim::contention
