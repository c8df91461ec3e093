#pragma once
// relsim contention run (docs/contention.md): many agents at once against
// the MCP tools server's shared tools, one scenario at a time, each agent
// relsim's naive or careful reference agent, and the run scored from what
// the agents saw and what the server logged.
//
//   interleaved      every agent increments a counter (read, then write) and
//                    takes two locks; half of the naive ones take them in the
//                    opposite order
//   probe-pairs      every agent asks the semantic cache its tenant's
//                    question in one of four wordings, then in the next
//                    one, and stores its own answer on a miss
//   crash-mid-write  every agent writes a two-field record under a lock;
//                    every fifth one dies after the first field, holding it
//   out-of-order     every agent submits two versions of a job and takes a
//                    result from a queue that delivers in a seeded order
//   burst            every agent fires its tool calls at once against a
//                    per-tenant quota
//   long-short       the model API's side: long streams beside short tasks
//                    through each tenant's connection pool (the fleet's live
//                    run, long_short.cpp); no tools server
//   mixed            all six in turn, with the same agents and seed; each
//                    score comes from the scenarios that measure it
//
// Agent i belongs to tenant i mod M and is called "a{i}"; tenant t is "t{t}".
// The naive agent leaves the tenant out of its keys, scopes, locks and
// queues, writes without compare-and-set, takes locks without a TTL in
// whatever order its task gives, takes the first result delivered and
// retries a 429 at once; the careful one does the opposite of each.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/json.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/fleet/scenario.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "relsim/tools/tool_quota.hpp"

namespace relsim::contention {

enum class Scenario { interleaved, probe_pairs, crash_mid_write, out_of_order, burst, long_short, mixed };
std::string_view to_string(Scenario s);
Scenario parse_scenario(std::string_view word);  // throws InputError naming the valid words
enum class AgentKind { naive, careful };
std::string_view to_string(AgentKind a);
AgentKind parse_agent_kind(std::string_view word);  // throws InputError

inline constexpr int kMaxAgents = 2000;

struct ContentionConfig {
  Scenario scenario = Scenario::interleaved;
  AgentKind agent = AgentKind::naive;
  int agents = 20;          // in [1, kMaxAgents]
  int tenants = 4;          // in [1, agents]
  int concurrency = 0;      // agents running at once, in [1, agents]; 0: all of them
  std::uint64_t seed = rng::kReferenceSeed;
  double deadline_s = 3.0;  // an agent not done by then made no progress: deadlocked
  int increments = 10;      // interleaved: counter increments per agent
  int burst_calls = 20;     // burst: tool calls per agent
  tools::QuotaSpec quota{50, 60'000};  // burst: per tenant
  int pool = 2;             // long-short: connections per tenant, in [1, 100]; agents >= tenants x (pool + 1)
  // The timing and keys that the closed forms of docs/contention.md
  // ("Numbers that can be checked before running") are stated for; the
  // reference agents only.
  double call_rate = 0.0;   // burst: calls a second per agent, in [0.001, 10000], on a common clock; 0: at once
  int key_bits = 0;         // interleaved: a memo first, under a key hashed to this many bits, in [1, 64]; 0: none
  double think_s = 0.0;     // interleaved: seconds from an increment's read to its write, in [0, 10]; 0: no rounds
  double spread_s = 0.2;    // interleaved with think_s: each round's reads, uniform over this many seconds
  bool external = false;    // the agents are the user's programs (--agent-cmd): scored from the server's log
};
// Throws InputError naming the value and its range.
void validate(const ContentionConfig& config);

// What one agent saw and did.
struct AgentReport {
  int agent = 0, tenant = 0;
  bool crashed = false;     // killed by the scenario (crash-mid-write)
  bool done = false;        // finished its task correctly
  bool stuck = false;       // still waiting at the deadline
  std::int64_t tool_calls = 0, http_429 = 0;
  std::int64_t lookups = 0, wrong_tenant_hits = 0;  // probe-pairs
  bool stale_accepted = false;                       // out-of-order
  std::int64_t half_written_seen = 0;                // crash-mid-write
};

// A rate with its Wilson interval (95%).
struct Rate {
  std::int64_t k = 0, n = 0;
  double value() const { return n ? double(k) / double(n) : 0.0; }
  Interval interval() const;
};

// A closed form beside what was measured (docs/contention.md, "Numbers
// that can be checked before running").
struct Prediction {
  std::string what;    // which score, and under what assumption
  double value = 0.0;  // the closed form's value
  double measured = 0.0;
  std::optional<Interval> interval;  // the measured rate's, when it is one
  bool agrees = true;                // the value inside the interval (or equal, for a count)
};

struct ContentionScores {
  ContentionConfig config;
  Rate success;            // done agents of those not killed
  Rate tool_429;           // 429s of tool calls
  Rate wrong_tenant_hits;  // of cache lookups
  std::int64_t lost_updates = 0;   // counter increments missing from the final values
  std::int64_t collisions = 0;     // scratchpad calls that met another tenant's entry (the server's log)
  std::int64_t deadlocks = 0;      // agents stuck at the deadline
  Rate stale_accepted;             // of agents that took a result
  std::int64_t locks_past_ttl = 0; // locks held after every agent stopped that will never expire (TTL 0)
  std::int64_t half_written_seen = 0;
  std::int64_t key_collisions = 0; // memo writes (--key-bits) that met another agent's entry, any tenant
  Rate rounds_lost;                // rounds (--think) whose counters lost an update
  std::optional<double> pool_wait_p99;  // long-short: model seconds a request waited for a connection
  std::optional<std::int64_t> model_requests;  // --agent-cmd with {model_url}: requests the mock provider served
  std::vector<Prediction> predictions;  // the reference agents' closed forms; none with --agent-cmd
  std::vector<ContentionScores> by_scenario;  // mixed: each scenario's own scores
  double seconds = 0.0;
  std::vector<AgentReport> agents;
};

// What an agent runner is given: the server's port, the agent's index,
// whether the agent (by its name, "a{i}") holds a shared lock now, and the
// moment every agent's paced calls and rounds count from.
struct AgentSlot {
  int port = 0;
  int index = 0;
  std::function<bool(const std::string& agent)> holds_lock;
  std::chrono::steady_clock::time_point start{};
};
// Runs one agent's task (by default relsim's reference agents,
// run_reference_agent); relsim contention run --agent-cmd gives one that
// starts the user's program instead (docs/contention.md).
using AgentRunner = std::function<AgentReport(const ContentionConfig&, const AgentSlot&)>;

// Runs the scenario against a tools server this call starts on 127.0.0.1
// and stops, its call log kept at `log` if given (else in a temporary
// folder, removed). `progress(done, total)` is called from the agents'
// threads, one at a time, as agents finish. With an external `runner`
// (config.external), what the agents did is read from the server's log.
ContentionScores run_contention(const ContentionConfig& config, const std::optional<std::string>& log = std::nullopt,
                                const std::function<void(int, int)>& progress = {}, const AgentRunner& runner = {});

// long-short (long_short.cpp): the fleet scenario it plays, and the run:
// the fleet's live run beside its simulation, whose replicates predict the
// success and the pool wait.
fleet::Scenario long_short_scenario(const ContentionConfig& config);
ContentionScores run_long_short(const ContentionConfig& config, const std::function<void(int, int)>& progress);

// Adds `one` scenario's scores to `all` (mixed): the rates' counts and the
// counts summed, the pool wait and the predictions (named by scenario)
// taken, `one` kept in all.by_scenario.
void merge_into(ContentionScores& all, ContentionScores one);

// The agents' part of one scenario (reference_agents.cpp): agent
// slot.index's task against the tools server at slot.port.
AgentReport run_reference_agent(const ContentionConfig& config, const AgentSlot& slot);
// The scratchpad key of interleaved's counter: "counter" (tenant -1, the
// naive agents') or "t{t}:counter" (the careful agents' of tenant t), and
// with think_s one a round, ":{round}" after it (round -1: none).
std::string counter_key(int tenant, int round);
// The rounds interleaved's counting takes with think_s (0 without), and
// how long each lasts: the reads' spread and twice the think time.
int rounds(const ContentionConfig& config);
double round_seconds(const ContentionConfig& config);
// How long the scenario's paced part lasts (the rounds, or the burst's
// paced calls): the agents' deadline counts from its end.
double paced_seconds(const ContentionConfig& config);
// How long after the tools server starts the agents' common clock starts
// (contention.cpp): long enough for every agent's thread to be running
// when the run is timed, 0 when it is not.
double start_delay_seconds(const ContentionConfig& config);

// Scores from the agents' reports, the server's log lines and the counters'
// final values (contention_scores.cpp): one sum, or one a round with
// think_s.
ContentionScores score(const ContentionConfig& config, std::vector<AgentReport> agents, const std::vector<Json>& log,
                       const std::vector<std::int64_t>& counted, std::int64_t locks_held_at_end);
// The closed forms that apply to a reference agents' run
// (contention_predictions.cpp), added to s.predictions; the log gives the
// quota's exhaustion time.
void add_predictions(ContentionScores& s, const std::vector<Json>& log);

Json scores_json(const ContentionScores& s);
std::string scores_table(const ContentionScores& s);

}  // namespace relsim::contention
