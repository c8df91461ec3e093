// A fleet scenario run live (fleet_live.hpp): the plan from the simulation's
// draws, the server in provider mode, the client as the agents, and the
// server's log read back.
#include "relsim/live/fleet_live.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/client/client.hpp"
#include "relsim/server/server.hpp"

namespace relsim {
namespace {

// The delay before each event of a healthy stream in `dialect`, whole ms of
// wall time, for a stream of `seconds`: the same wall time in either dialect.
std::int64_t chunk_delay_ms(double seconds, double time_scale, Dialect dialect) {
  return std::llround(seconds * time_scale * 1000.0 / healthy_stream_events(dialect));
}

double stream_seconds(std::int64_t delay_ms, double time_scale, Dialect dialect) {
  return static_cast<double>(delay_ms * healthy_stream_events(dialect)) / 1000.0 / time_scale;
}

std::int64_t total_tasks(const fleet::Scenario& s) { return s.agents * s.tasks_per_agent; }

ClientConfig client_for(const fleet::Scenario& s, std::uint64_t seed, const FleetLiveConfig& c, int port,
                        std::int64_t longest_delay_ms) {
  ClientConfig client;
  client.port = static_cast<std::uint16_t>(port);
  client.dialect = c.dialect;
  client.policy = s.policy;
  client.seed = seed;
  client.threads = c.client_threads;
  client.concurrency = static_cast<int>(s.agents);
  client.tasks_per_agent = s.tasks_per_agent;
  client.tenants = static_cast<int>(s.tenants);
  client.throttle = s.throttle;
  client.pool = s.pool_per_task ? 0 : static_cast<int>(s.pool);
  client.timing.backoff_schedule = s.backoff;
  client.timing.time_scale = c.time_scale;
  // A stall is given up after four of the longest event gaps (at least 250
  // ms of wall time), well past what a loaded machine delays a paced event
  // by: with 50 ms, a CI run building beside the tests once took 7 streams
  // of 2 ms gaps for stalls.
  client.timing.idle_timeout = std::max(0.25, 4.0 * static_cast<double>(longest_delay_ms) / 1000.0);
  client.start_at.assign(static_cast<std::size_t>(total_tasks(s)), 0.0);
  for (std::int64_t a = 0; a < s.agents; ++a)
    client.start_at[static_cast<std::size_t>(a * s.tasks_per_agent)] =
        fleet::coordinated_start_time(s, seed, c.replicate, a) * c.time_scale;
  return client;
}

// Every task's script: its served requests as the replicate draws them, as
// many as its policy can send, each paced.
void load_scripts(Server& server, const fleet::Scenario& s, std::uint64_t seed, const FleetLiveConfig& c,
                  std::int64_t delay_ms, std::int64_t long_delay_ms) {
  const auto most = static_cast<std::size_t>(s.policy.max_requests());
  for (std::int64_t task = 0; task < total_tasks(s); ++task) {
    const bool long_agent = task / s.tasks_per_agent < s.long_agents;
    std::vector<ScriptEntry> script;
    script.reserve(most);
    for (const auto& fault : fleet::served_faults(s, seed, c.replicate, static_cast<std::uint64_t>(task), most)) {
      ScriptEntry e = fault ? ScriptEntry::of(*fault) : ScriptEntry::ok();
      e.chunk_delay_ms = long_agent ? long_delay_ms : delay_ms;
      script.push_back(e);
    }
    server.set_script(task, std::move(script));
  }
}

// `nano`: nano_costs of the scenario's billing (none: not billed).
void count_task(const LiveTask& t, const fleet::Scenario& s, double scale,
                const std::optional<std::array<std::int64_t, kFaultKinds + 1>>& nano, FleetLiveResult& r) {
  fleet::FleetResult& f = r.counts;
  ++f.tasks;
  const bool done = t.outcome.outcome == Outcome::done;
  if (done) ++f.successes;
  ++f.outcomes[static_cast<std::size_t>(index_of(t.outcome))];
  ++f.latency[static_cast<std::size_t>(fleet::latency_bin(t.seconds / scale))];
  if (t.throttled) ++f.denied;
  if (!t.text_ok) ++r.wrong_answers;
  f.requests += t.requests;
  // Billed as the simulation bills: each answer the client saw, by its kind
  // (a 429 or 529 not at all).
  if (nano) {
    std::int64_t cost = 0;
    for (const auto& seen : t.seen) cost += (*nano)[seen ? static_cast<std::size_t>(*seen) : kFaultKinds];
    f.cost_nano += cost;
    if (done) f.cost_done_nano += cost;
  }
  const bool short_agent = t.task / s.tasks_per_agent >= s.long_agents;
  for (std::size_t k = 0; k < t.seen.size(); ++k) {
    const auto& seen = t.seen[k];
    if (!seen) ++f.good;
    else if (*seen == FaultKind::http_429) ++f.r429;
    else if (*seen == FaultKind::http_529) ++f.r529;
    const double waited = k < t.pool_waits.size() ? t.pool_waits[k] / scale : 0.0;
    const auto bin = static_cast<std::size_t>(fleet::latency_bin(waited));
    ++f.pool_wait[bin];
    if (short_agent) ++f.pool_wait_short[bin];
  }
}

// The most of `spans` (start, end) open at once; an end at the same time
// as a start comes first.
std::int64_t most_open(std::vector<std::pair<double, double>>& spans) {
  std::vector<std::pair<double, int>> edges;
  for (const auto& [a, b] : spans) {
    edges.emplace_back(a, +1);
    edges.emplace_back(b, -1);
  }
  std::sort(edges.begin(), edges.end());
  std::int64_t open = 0, most = 0;
  for (const auto& [t, d] : edges) most = std::max(most, open += d);
  return most;
}

FleetLiveLog read_log(const Server& server, const ClientConfig& client, const std::vector<LiveTask>& tasks) {
  FleetLiveLog log;
  std::map<int, std::vector<std::pair<double, double>>> spans;  // per tenant
  for (const LiveTask& t : tasks) {
    if (!server.wait_finished(t.task, static_cast<std::size_t>(t.requests), std::chrono::milliseconds(5000)))
      ++log.unfinished;
    const int tenant = client.tenant_of(t.task);
    for (const LoggedRequest& r : server.log(t.task).requests) {
      ++log.requests;
      if (r.status == 429) ++log.r429;
      if (r.status == 529) ++log.r529;
      if (client.tenants > 0 && r.header("x-api-key") != tenant_key(tenant)) ++log.wrong_tenant;
      // A reply the client left in the middle (a malformed event, a stall)
      // went on at the server after the client had let its connection go:
      // it counts only at the moment it was read.
      const bool left = r.end == "client_gone";
      spans[tenant].emplace_back(r.received_ms, left ? r.received_ms : r.finished_ms.value_or(r.received_ms));
    }
  }
  for (auto& [tenant, s] : spans) log.most_in_flight = std::max(log.most_in_flight, most_open(s));
  return log;
}

}  // namespace

void validate_live(const fleet::Scenario& s, const FleetLiveConfig& c) {
  if (!(c.time_scale >= 1e-3 && c.time_scale <= 10.0))
    throw InputError(fmt::format("time-scale = {} is out of range: it must be in [0.001, 10] wall seconds per model "
                                 "second",
                                 c.time_scale));
  if (c.replicate < 0 || c.replicate > fleet::kMaxReplicates)
    throw InputError(fmt::format("replicate = {} is out of range: it must be in [0, {}]", c.replicate,
                                 fleet::kMaxReplicates));
  if (c.server_threads < 1 || c.server_threads > 64)
    throw InputError(fmt::format("server threads = {} is out of range: it must be in [1, 64]", c.server_threads));
  const auto refuse = [](const std::string& what) {
    throw InputError(fmt::format("--live: {}", what));
  };
  if (s.start.kind != fleet::Start::Kind::coordinated)
    refuse(fmt::format("start = '{}': a live run takes a coordinated start (agents that run their tasks in turn)",
                       fleet::to_string(s.start)));
  if (s.queue > 0) refuse(fmt::format("queue = {}: the mock provider has no queue (past capacity it answers 529)", s.queue));
  if (s.header_timeout > 0.0) refuse(fmt::format("header-timeout = {:g}: it needs the provider's queue, which the mock has not", s.header_timeout));
  if (s.trigger.active()) refuse(fmt::format("trigger = '{}': the mock provider has no outage", fleet::to_string(s.trigger)));
  for (int k = 0; k < kFaultKinds; ++k) {
    const auto kind = static_cast<FaultKind>(k);
    if (s.kinds.weight[static_cast<std::size_t>(k)] > 0.0 && !streams_answer(kind))
      refuse(fmt::format("kinds: {} sends no stream: a live run takes the in-stream and content kinds only, whose "
                         "stream lasts as a served request does",
                         to_string(kind)));
  }
  if (s.agents > kMaxLiveAgents)
    refuse(fmt::format("agents = {} is out of range: a live run takes at most {}", s.agents, kMaxLiveAgents));
  if (total_tasks(s) > kMaxLiveTasks)
    refuse(fmt::format("{} agents × {} tasks = {} tasks: a live run takes at most {}", s.agents, s.tasks_per_agent,
                       total_tasks(s), kMaxLiveTasks));
  for (const double seconds : {s.request_seconds, s.long_seconds}) {
    if (seconds == s.long_seconds && s.long_agents == 0) continue;
    const std::int64_t d = chunk_delay_ms(seconds, c.time_scale, c.dialect);
    const int events = healthy_stream_events(c.dialect);
    if (d < 1 || d > kMaxChunkDelayMs)
      refuse(fmt::format("a {:g} s stream at time-scale {:g} lasts {:g} ms of wall time: it must be in [{}, {}] ms, "
                         "one whole ms or more per event",
                         seconds, c.time_scale, seconds * c.time_scale * 1000.0, events, kMaxChunkDelayMs * events));
  }
}

FleetLiveResult run_fleet_live(const fleet::Scenario& s, std::uint64_t seed, const FleetLiveConfig& c) {
  fleet::validate(s, true);
  validate_live(s, c);
  const std::int64_t delay_ms = chunk_delay_ms(s.request_seconds, c.time_scale, c.dialect);
  const std::int64_t long_delay_ms =
      s.long_agents > 0 ? chunk_delay_ms(s.long_seconds, c.time_scale, c.dialect) : delay_ms;

  ServerConfig config;
  config.threads = c.server_threads;
  config.max_connections = static_cast<std::size_t>(s.agents) + 64;
  config.provider = ProviderConfig{s.quota, s.capacity, c.time_scale, static_cast<std::size_t>(s.tenants)};
  Server server(config);
  load_scripts(server, s, seed, c, delay_ms, long_delay_ms);
  ClientConfig client = client_for(s, seed, c, server.port(), std::max(delay_ms, long_delay_ms));

  FleetLiveResult r;
  r.stream_seconds = stream_seconds(delay_ms, c.time_scale, c.dialect);
  r.long_stream_seconds = stream_seconds(long_delay_ms, c.time_scale, c.dialect);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<LiveTask> tasks = run_live(client, 0, total_tasks(s));
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  fleet::FleetResult& f = r.counts;
  f.replicates = 1;
  f.latency.assign(fleet::kLatencyBins, 0);
  f.pool_wait.assign(fleet::kLatencyBins, 0);
  f.pool_wait_short.assign(fleet::kLatencyBins, 0);
  f.billed = s.billing.has_value();
  std::optional<std::array<std::int64_t, kFaultKinds + 1>> nano;
  if (s.billing) nano = nano_costs(*s.billing);
  for (const LiveTask& t : tasks) count_task(t, s, c.time_scale, nano, r);
  r.log = read_log(server, client, tasks);
  server.stop();
  return r;
}

}  // namespace relsim
