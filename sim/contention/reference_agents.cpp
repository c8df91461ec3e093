// relsim's two reference agents (contention.hpp): the naive and the careful
// way to do each scenario's task against the shared tools.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "relsim/contention/contention.hpp"
#include "relsim/contention/mcp_client.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/fnv.hpp"
#include "relsim/core/rng.hpp"

namespace relsim::contention {
namespace {

using Clock = std::chrono::steady_clock;

// Draw indices of the jitter stream for the rounds' read moments, past
// those of the pauses between tries (one per try).
constexpr std::uint64_t kRoundDraws = 1u << 20;

// One agent's client, counters and deadline.
struct Agent {
  const ContentionConfig& config;
  int i, t;
  bool careful;
  McpClient client;
  AgentReport report;
  Clock::time_point deadline;
  Clock::time_point start;  // the moment paced calls and rounds count from, the same for every agent

  // The deadline counts from the end of the rounds (think_s) or of the
  // paced calls (call_rate).
  Agent(const ContentionConfig& c, const AgentSlot& slot)
      : config(c), i(slot.index), t(slot.index % c.tenants), careful(c.agent == AgentKind::careful),
        client(slot.port, fmt::format("t{}", t), fmt::format("a{}", i)),
        deadline(at(std::max(Clock::now(), slot.start), c.deadline_s + paced_seconds(c))),
        start(slot.start) {
    report.agent = i;
    report.tenant = t;
  }

  static Clock::time_point at(Clock::time_point from, double seconds) {
    return from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }

  // The careful agent's names carry its tenant; the naive agent's do not.
  std::string name(std::string_view base) const { return careful ? fmt::format("t{}:{}", t, base) : std::string(base); }
  bool late() const { return Clock::now() >= deadline; }

  ToolReply call(const std::string& tool, const Json& args) {
    ++report.tool_calls;
    ToolReply r = client.call(tool, args);
    report.http_429 += r.status == 429;
    return r;
  }
  // A short pause between tries, different per agent and try (the seed's
  // jitter stream), so that retries do not march in step.
  void pause(int attempt) {
    const double u = rng::uniform(config.seed, rng::Stream::jitter, static_cast<std::uint64_t>(i), attempt);
    std::this_thread::sleep_for(std::chrono::microseconds(500 + static_cast<int>(u * 1500)));
  }
};

std::int64_t int_value(const ToolReply& r) {
  if (!r.result.is_object() || !r.result["value"].is_string()) return 0;
  try {
    return std::stoll(r.result["value"].get<std::string>());
  } catch (...) {
    return 0;
  }
}

// One increment of `key`: read then write (naive), or compare-and-set
// until stored, reading again on a conflict; `think` seconds between the
// read and the write.
bool count_once(Agent& a, const std::string& key, double think) {
  for (int attempt = 0;; ++attempt) {
    if (a.late()) return false;
    const ToolReply got = a.call("scratch_get", {{"key", key}});
    const std::string next = std::to_string(int_value(got) + 1);
    if (think > 0) std::this_thread::sleep_for(std::chrono::duration<double>(think));
    if (!a.careful) {
      a.call("scratch_put", {{"key", key}, {"value", next}});
      return true;
    }
    const std::int64_t version = got.result.is_object() && got.result["version"].is_number_integer()
                                     ? got.result["version"].get<std::int64_t>()
                                     : 0;
    const ToolReply set = a.call("scratch_cas", {{"key", key}, {"version", version}, {"value", next}});
    if (set.result.is_object() && set.result.value("stored", false)) return true;
    if (think <= 0) a.pause(attempt);
  }
}

// The increments: as fast as the agent can, on one counter; or with
// think_s one a round on the round's counter, each agent's read at a
// seeded moment uniform over the round's spread (docs/contention.md).
bool count_up(Agent& a) {
  const ContentionConfig& c = a.config;
  const int tenant = a.careful ? a.t : -1;
  if (c.think_s <= 0) {
    for (int k = 0; k < c.increments; ++k)
      if (!count_once(a, counter_key(tenant, -1), 0.0)) return false;
    return true;
  }
  for (int k = 0; k < c.increments; ++k) {
    const double u = rng::uniform(c.seed, rng::Stream::jitter, static_cast<std::uint64_t>(a.i), kRoundDraws + k);
    std::this_thread::sleep_until(Agent::at(a.start, k * round_seconds(c) + u * c.spread_s));
    if (!count_once(a, counter_key(tenant, k), c.think_s)) return false;
  }
  return true;
}

// A memo of the agent's task under a key from its text's 64-bit hash:
// the naive agent keeps the first key_bits bits and no tenant, the
// careful one all 64 bits after its tenant.
void store_memo(Agent& a) {
  const std::string text = fmt::format("t{} a{} ticket {}", a.t, a.i, a.config.seed);
  std::uint64_t h = fnv1a64(text);
  h = rng::splitmix64(h);
  const std::string key = a.careful ? fmt::format("t{}:memo:{:016x}", a.t, h)
                                    : fmt::format("memo:{:x}", a.config.key_bits == 64 ? h : h >> (64 - a.config.key_bits));
  a.call("scratch_put", {{"key", key}, {"value", text}});
}

// Takes `lock` (TTL ms), trying until the deadline; its token or "".
std::string take(Agent& a, const std::string& lock, int ttl_ms) {
  for (int attempt = 0; !a.late(); ++attempt) {
    const ToolReply r = a.call("lock_acquire", {{"name", lock}, {"ttl_ms", ttl_ms}});
    if (r.result.is_object() && r.result.value("acquired", false)) return r.result["token"].get<std::string>();
    a.pause(attempt);
  }
  return {};
}

// Two locks: the naive agent in its task's order (odd agents the other
// way round), no TTL, holding the first while it waits for the second; the
// careful one in name order, with a TTL, letting go of the first when the
// second is busy.
bool two_locks(Agent& a) {
  std::vector<std::string> locks{a.name("inventory"), a.name("ledger")};
  if (!a.careful) {
    if (a.i % 2) std::swap(locks[0], locks[1]);
    const std::string first = take(a, locks[0], 0);
    if (first.empty()) return false;
    const std::string second = take(a, locks[1], 0);
    if (second.empty()) return false;
    a.call("lock_release", {{"name", locks[1]}, {"token", second}});
    a.call("lock_release", {{"name", locks[0]}, {"token", first}});
    return true;
  }
  for (int attempt = 0; !a.late(); ++attempt) {
    const std::string first = take(a, locks[0], 1000);
    if (first.empty()) return false;
    const ToolReply r = a.call("lock_acquire", {{"name", locks[1]}, {"ttl_ms", 1000}});
    if (r.result.is_object() && r.result.value("acquired", false)) {
      a.call("lock_release", {{"name", locks[1]}, {"token", r.result["token"]}});
      a.call("lock_release", {{"name", locks[0]}, {"token", first}});
      return true;
    }
    a.call("lock_release", {{"name", locks[0]}, {"token", first}});
    a.pause(attempt);
  }
  return false;
}

constexpr std::string_view kWordings[] = {"What is the account limit for my account?",
                                          "what's the account limit for my account",
                                          "Tell me the account limit for my account.", "account limit for my account?"};

// The tenant's truth, which only it may be told.
std::string truth(int t) { return fmt::format("t{}: the limit is {} USD", t, 1000 * (t + 1)); }

// One lookup in the cache (storing the tenant's own answer on a miss);
// false if the answer was not the tenant's.
bool ask(Agent& a, const std::string& scope, const std::string& query) {
  const ToolReply r = a.call("cache_get", {{"scope", scope}, {"query", query}});
  ++a.report.lookups;
  if (r.result.is_object() && r.result.value("hit", false)) {
    const std::string answer = r.result["answer"].get<std::string>();
    a.report.wrong_tenant_hits += !answer.starts_with(fmt::format("t{}:", a.t));
    return answer == truth(a.t);
  }
  a.call("cache_put", {{"scope", scope}, {"query", query}, {"answer", truth(a.t)}});
  return true;
}

// A probe pair: the tenant's question in the agent's wording, then again
// in the next wording, as a user rephrasing it would.
bool probe(Agent& a) {
  const std::string scope = a.name("faq");
  const bool first = ask(a, scope, std::string(kWordings[a.i % 4]));
  const bool second = ask(a, scope, std::string(kWordings[(a.i + 1) % 4]));
  return first && second;
}

// Reads the record: a naive one is two keys, which a writer that died
// between them leaves from two different writers (half written).
void read_record(Agent& a) {
  if (a.careful) return;  // one value, written whole
  const ToolReply name = a.call("scratch_get", {{"key", "profile:name"}});
  const ToolReply email = a.call("scratch_get", {{"key", "profile:email"}});
  const auto who = [](const ToolReply& r) {
    return r.result.is_object() && r.result["value"].is_string() ? r.result["value"].get<std::string>() : "";
  };
  const std::string n = who(name), e = who(email);
  a.report.half_written_seen += !n.empty() && e.rfind(n + "@", 0) != 0;
}

bool write_record(Agent& a) {
  read_record(a);
  const bool dies = a.i % 5 == 4;
  const std::string lock = a.name("profile");
  const std::string token = take(a, lock, a.careful ? 300 : 0);
  if (token.empty()) return false;
  const std::string me = fmt::format("a{}", a.i), email = fmt::format("a{}@t{}.example", a.i, a.t);
  // A dying agent stops holding the lock: the careful one before its one
  // write, the naive one between its two (the record half written).
  if (!a.careful) a.call("scratch_put", {{"key", "profile:name"}, {"value", me}});
  if (dies) {
    a.report.crashed = true;
    return false;
  }
  if (a.careful)
    a.call("scratch_put", {{"key", a.name("profile")}, {"value", Json{{"name", me}, {"email", email}}.dump()}});
  else
    a.call("scratch_put", {{"key", "profile:email"}, {"value", email}});
  a.call("lock_release", {{"name", lock}, {"token", token}});
  read_record(a);
  return true;
}

// Two versions of a job; the answer must be the second's.
bool two_versions(Agent& a) {
  const std::string queue = a.careful ? fmt::format("t{}:a{}:jobs", a.t, a.i) : "jobs";
  const std::string v1 = fmt::format("t{}/a{}/v1", a.t, a.i), v2 = fmt::format("t{}/a{}/v2", a.t, a.i);
  a.call("job_submit", {{"queue", queue}, {"input", v1}});
  a.call("job_submit", {{"queue", queue}, {"input", v2}});
  for (int attempt = 0; !a.late(); ++attempt) {
    const ToolReply r = a.call("job_next", {{"queue", queue}});
    if (!r.result.is_object() || r.result["ticket"].is_null()) {
      a.pause(attempt);
      continue;
    }
    const std::string input = r.result["input"].get<std::string>();
    if (a.careful && input != v2) continue;  // an older version: not the answer
    a.report.stale_accepted = input != v2;
    return input == v2;
  }
  return false;
}

// Tool calls at once against the tenant's quota: the naive agent retries
// a 429 at once, three times; the careful one stops at the first 429 and
// leaves the rest for after retry-after.
// With call_rate, call k goes at start + k / call_rate, every agent on the
// same clock.
bool burst(Agent& a) {
  for (int k = 0; k < a.config.burst_calls; ++k) {
    if (a.config.call_rate > 0) std::this_thread::sleep_until(Agent::at(a.start, k / a.config.call_rate));
    if (a.late()) return false;
    ToolReply r = a.call("add", {{"a", a.i}, {"b", k}});
    for (int retry = 0; r.status == 429 && !a.careful && retry < 3; ++retry) r = a.call("add", {{"a", a.i}, {"b", k}});
    if (r.status == 429) return false;
  }
  return true;
}

}  // namespace

std::string counter_key(int tenant, int round) {
  std::string key = tenant < 0 ? std::string("counter") : fmt::format("t{}:counter", tenant);
  return round < 0 ? key : fmt::format("{}:{}", key, round);
}

int rounds(const ContentionConfig& c) { return c.think_s > 0 ? c.increments : 0; }

double paced_seconds(const ContentionConfig& c) {
  if (c.scenario == Scenario::interleaved) return rounds(c) * round_seconds(c);
  if (c.scenario == Scenario::burst && c.call_rate > 0) return (c.burst_calls - 1) / c.call_rate;
  return 0.0;
}

double round_seconds(const ContentionConfig& c) { return c.think_s > 0 ? c.spread_s + 2 * c.think_s : 0.0; }

AgentReport run_reference_agent(const ContentionConfig& config, const AgentSlot& slot) {
  Agent a(config, slot);
  bool done = false;
  switch (config.scenario) {
    case Scenario::interleaved:
      if (config.key_bits > 0) store_memo(a);
      done = count_up(a) && two_locks(a);
      break;
    case Scenario::probe_pairs: done = probe(a); break;
    case Scenario::crash_mid_write: done = write_record(a); break;
    case Scenario::out_of_order: done = two_versions(a); break;
    case Scenario::burst: done = burst(a); break;
    case Scenario::long_short:  // the fleet's agents play it (long_short.cpp)
    case Scenario::mixed: RELSIM_ASSERT(false); break;  // run_contention runs each scenario in turn
  }
  a.report.done = done;
  a.report.stuck = !done && !a.report.crashed && a.late() && config.scenario != Scenario::burst;
  return a.report;
}

}  // namespace relsim::contention
