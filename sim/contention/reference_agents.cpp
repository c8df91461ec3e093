// relsim's two reference agents (contention.hpp): the naive and the careful
// way to do each scenario's task against the shared tools.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "relsim/contention/contention.hpp"
#include "relsim/contention/mcp_client.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"

namespace relsim::contention {
namespace {

using Clock = std::chrono::steady_clock;

// One agent's client, counters and deadline.
struct Agent {
  const ContentionConfig& config;
  int i, t;
  bool careful;
  McpClient client;
  AgentReport report;
  Clock::time_point deadline;

  Agent(const ContentionConfig& c, int port, int index)
      : config(c), i(index), t(index % c.tenants), careful(c.agent == AgentKind::careful),
        client(port, fmt::format("t{}", index % c.tenants), fmt::format("a{}", index)),
        deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.deadline_s))) {
    report.agent = i;
    report.tenant = t;
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

// Increments: read then write (naive), or compare-and-set until stored.
bool count_up(Agent& a) {
  const std::string key = a.name("counter");
  for (int k = 0; k < a.config.increments; ++k) {
    for (int attempt = 0;; ++attempt) {
      if (a.late()) return false;
      const ToolReply got = a.call("scratch_get", {{"key", key}});
      const std::string next = std::to_string(int_value(got) + 1);
      if (!a.careful) {
        a.call("scratch_put", {{"key", key}, {"value", next}});
        break;
      }
      const std::int64_t version = got.result.is_object() && got.result["version"].is_number_integer()
                                       ? got.result["version"].get<std::int64_t>()
                                       : 0;
      const ToolReply set = a.call("scratch_cas", {{"key", key}, {"version", version}, {"value", next}});
      if (set.result.is_object() && set.result.value("stored", false)) break;
      a.pause(attempt);
    }
  }
  return true;
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
bool burst(Agent& a) {
  for (int k = 0; k < a.config.burst_calls; ++k) {
    ToolReply r = a.call("add", {{"a", a.i}, {"b", k}});
    for (int retry = 0; r.status == 429 && !a.careful && retry < 3; ++retry) r = a.call("add", {{"a", a.i}, {"b", k}});
    if (r.status == 429) return false;
  }
  return true;
}

}  // namespace

AgentReport run_reference_agent(const ContentionConfig& config, int port, int i) {
  Agent a(config, port, i);
  bool done = false;
  switch (config.scenario) {
    case Scenario::interleaved: done = count_up(a) && two_locks(a); break;
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
