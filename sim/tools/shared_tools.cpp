// The shared tools (shared_tools.hpp): one table of parameters gives both
// the schemas tools/list shows and the checks a call's arguments meet; each
// family of tools then runs over its store.
#include "relsim/tools/shared_tools.hpp"

#include <array>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace relsim::tools {
namespace {

constexpr std::size_t kMaxListed = 1000;
constexpr std::int64_t kMaxVersion = std::int64_t{1} << 53;

// A parameter: a string of [lo, hi] bytes, or an integer in [lo, hi].
struct Param {
  std::string_view name;
  bool integer;
  std::int64_t lo, hi;
};

struct SharedTool {
  std::string_view name, description;
  std::vector<Param> params;
};

constexpr std::int64_t kKey = static_cast<std::int64_t>(kMaxStateKey);
constexpr std::int64_t kValue = static_cast<std::int64_t>(kMaxStateValue);

const std::array<SharedTool, 10>& shared_tools() {
  static const std::array<SharedTool, 10> tools{{
      {"scratch_get", "Read a scratchpad key: its value and version (found false if absent).",
       {{"key", false, 1, kKey}}},
      {"scratch_put", "Write a scratchpad key (any previous value is replaced); returns the new version.",
       {{"key", false, 1, kKey}, {"value", false, 0, kValue}}},
      {"scratch_cas", "Write a scratchpad key only if its version is `version` (0: the key must be absent).",
       {{"key", false, 1, kKey}, {"version", true, 0, kMaxVersion}, {"value", false, 0, kValue}}},
      {"scratch_list", "List the scratchpad keys that start with prefix (at most 1000, in order).",
       {{"prefix", false, 0, kKey}}},
      {"cache_put", "Store an answer in the semantic cache under scope, for the query that produced it.",
       {{"scope", false, 0, kKey}, {"query", false, 1, kValue}, {"answer", false, 0, kValue}}},
      {"cache_get", "Look up the answer to a similar query stored under scope (hit false if none is close enough).",
       {{"scope", false, 0, kKey}, {"query", false, 1, kValue}}},
      {"lock_acquire", "Take a named lock without waiting; ttl_ms > 0 lets it expire (0: never).",
       {{"name", false, 1, kKey}, {"ttl_ms", true, 0, kMaxLockTtlMs}}},
      {"lock_release", "Release a lock with the token lock_acquire returned.",
       {{"name", false, 1, kKey}, {"token", false, 1, kKey + 24}}},
      {"job_submit", "Submit work to a named queue; its result comes back through job_next.",
       {{"queue", false, 1, kKey}, {"input", false, 0, kValue}}},
      {"job_next", "Take a finished result from a named queue (ticket null if none is pending).",
       {{"queue", false, 1, kKey}}},
  }};
  return tools;
}

const SharedTool* find_tool(std::string_view name) {
  for (const SharedTool& t : shared_tools())
    if (t.name == name) return &t;
  return nullptr;
}

// The arguments against the tool's parameters: empty, or the reason.
std::string check_arguments(const SharedTool& tool, const Json& args) {
  std::vector<std::string_view> names;
  for (const Param& p : tool.params) names.push_back(p.name);
  if (auto why = unexpected_keys(args, names); !why.empty()) return why;
  for (const Param& p : tool.params) {
    const Json& v = args[std::string(p.name)];
    if (p.integer) {
      const bool fits = v.is_number_integer() && (v.is_number_unsigned() ? v.get<std::uint64_t>() <= std::uint64_t(p.hi)
                                                                          : v.get<std::int64_t>() >= p.lo &&
                                                                                v.get<std::int64_t>() <= p.hi);
      if (!fits)
        return fmt::format("parameter '{}' must be an integer in [{}, {}], got {}", p.name, p.lo, p.hi,
                           v.is_number_integer() ? v.dump() : type_of(v));
    } else {
      if (!v.is_string()) return fmt::format("parameter '{}' must be a string, got {}", p.name, type_of(v));
      const std::size_t n = v.get_ref<const std::string&>().size();
      if (n < std::size_t(p.lo) || n > std::size_t(p.hi))
        return fmt::format("parameter '{}' has {} bytes: it must have {} to {}", p.name, n, p.lo, p.hi);
    }
  }
  return {};
}

const std::string& text_of(const Json& args, const char* key) { return args[key].get_ref<const std::string&>(); }

std::string compact(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

SharedRun done(std::string key, std::string outcome, const Json& answer, Json facts = Json::object()) {
  return {{ToolStage::done, compact(answer), {}}, std::move(key), std::move(outcome), std::move(facts)};
}

// What the log says of an entry another caller wrote.
Json writer_facts(const std::string& tenant, const std::string& agent, const Caller& caller) {
  return {{"owner", tenant + "/" + agent}, {"other_tenant", !tenant.empty() && tenant != caller.tenant}};
}

}  // namespace

SharedTools::SharedTools(SharedConfig config)
    : cache_(config.cache_threshold), queues_(config.queue_order, config.seed) {}

bool SharedTools::has(std::string_view name) { return find_tool(name) != nullptr; }

Json SharedTools::list() {
  Json out = Json::array();
  for (const SharedTool& t : shared_tools()) {
    Json properties = Json::object(), required = Json::array();
    for (const Param& p : t.params) {
      properties[std::string(p.name)] =
          p.integer ? Json{{"type", "integer"}, {"minimum", p.lo}, {"maximum", p.hi}}
                    : Json{{"type", "string"}, {"minLength", p.lo}, {"maxLength", p.hi}};
      required.push_back(p.name);
    }
    out.push_back({{"name", t.name}, {"description", t.description},
                   {"inputSchema", object_schema(std::move(properties), std::move(required))}});
  }
  return out;
}

SharedRun SharedTools::run(std::string_view name, const Json& arguments, const Caller& caller, std::int64_t now_ms,
                           bool half_write) {
  const SharedTool* tool = find_tool(name);
  if (!tool) return {refused(fmt::format("'{}' is not a shared tool", name)), {}, "refused", Json::object()};
  if (auto why = check_arguments(*tool, arguments); !why.empty())
    return {refused(fmt::format("{}: {}", name, why)), {}, "refused", Json::object()};
  const bool writes = name == "scratch_put" || name == "scratch_cas" || name == "cache_put";
  if (half_write && !writes)
    return {{ToolStage::exec, "Internal error", fmt::format("{}: partial_write: failed", name)}, {}, "failed",
            Json::object()};
  if (name.starts_with("scratch_")) return scratch(name, arguments, caller, half_write);
  if (name.starts_with("cache_")) return cache(name, arguments, caller, half_write);
  if (name.starts_with("lock_")) return lock(name, arguments, caller, now_ms);
  return job(name, arguments, caller);
}

SharedRun SharedTools::scratch(std::string_view name, const Json& args, const Caller& caller, bool half_write) {
  if (name == "scratch_list") {
    bool more = false;
    const std::string& prefix = text_of(args, "prefix");
    const auto keys = scratch_.list(prefix, kMaxListed, more);
    return done(prefix, "listed", {{"keys", keys}, {"more", more}}, {{"count", keys.size()}});
  }
  const std::string& key = text_of(args, "key");
  if (name == "scratch_get") {
    const ScratchEntry e = scratch_.get(key);
    if (e.version == 0) return done(key, "absent", {{"found", false}, {"value", nullptr}, {"version", 0}});
    Json facts = writer_facts(e.tenant, e.agent, caller);
    facts["version"] = e.version;
    facts["partial"] = e.partial;
    return done(key, "found", {{"found", true}, {"value", e.value}, {"version", e.version}}, std::move(facts));
  }
  const std::string& value = text_of(args, "value");
  ScratchEntry entry{half_write ? value.substr(0, value.size() / 2) : value, 0, caller.tenant, caller.agent,
                     half_write};
  ScratchEntry previous;
  const ScratchWrite w = name == "scratch_put"
                             ? scratch_.put(key, std::move(entry), previous)
                             : scratch_.cas(key, args["version"].get<std::uint64_t>(), std::move(entry), previous);
  Json facts = previous.version ? writer_facts(previous.tenant, previous.agent, caller) : Json::object();
  if (w == ScratchWrite::full)
    return {{ToolStage::exec, "Store full", fmt::format("{}: the store holds {} keys", name, kMaxScratchKeys)}, key,
            "full", std::move(facts)};
  if (w == ScratchWrite::conflict) {
    facts["version"] = previous.version;
    return done(key, "conflict", {{"stored", false}, {"version", previous.version}}, std::move(facts));
  }
  facts["version"] = previous.version + 1;
  if (half_write)
    return {{ToolStage::exec, "Write failed",
             fmt::format("{}: partial_write: stored {} of {} bytes under '{}', then failed", name, value.size() / 2,
                         value.size(), key)},
            key, "half_written", std::move(facts)};
  if (name == "scratch_put") return done(key, "stored", {{"version", previous.version + 1}}, std::move(facts));
  return done(key, "stored", {{"stored", true}, {"version", previous.version + 1}}, std::move(facts));
}

SharedRun SharedTools::cache(std::string_view name, const Json& args, const Caller& caller, bool half_write) {
  const std::string& scope = text_of(args, "scope");
  const std::string& query = text_of(args, "query");
  if (name == "cache_get") {
    const CacheLookup found = cache_.get(scope, query);
    const double similarity = std::round(found.similarity * 1e6) / 1e6;
    Json facts{{"similarity", similarity}};
    if (!found.hit) return done(scope, "miss", {{"hit", false}, {"answer", nullptr}, {"similarity", similarity}}, facts);
    facts.update(writer_facts(found.entry->tenant, found.entry->agent, caller));
    return done(scope, "hit", {{"hit", true}, {"answer", found.entry->answer}, {"similarity", similarity}},
                std::move(facts));
  }
  const std::string& answer = text_of(args, "answer");
  if (!cache_.put(scope, {query, half_write ? answer.substr(0, answer.size() / 2) : answer, caller.tenant,
                          caller.agent}))
    return {{ToolStage::exec, "Cache full", fmt::format("cache_put: the cache holds {} entries", kMaxCacheEntries)},
            scope, "full", Json::object()};
  if (half_write)
    return {{ToolStage::exec, "Write failed",
             fmt::format("cache_put: partial_write: stored {} of {} bytes of the answer, then failed",
                         answer.size() / 2, answer.size())},
            scope, "half_written", {{"partial", true}}};
  return done(scope, "stored", {{"stored", true}});
}

SharedRun SharedTools::lock(std::string_view name, const Json& args, const Caller& caller, std::int64_t now_ms) {
  const std::string& lock_name = text_of(args, "name");
  if (name == "lock_release") {
    const LockRelease r = locks_.release(lock_name, text_of(args, "token"), now_ms);
    if (r == LockRelease::released) return done(lock_name, "released", {{"released", true}, {"reason", nullptr}});
    const char* why = r == LockRelease::expired ? "expired" : "not_held";
    return done(lock_name, why, {{"released", r == LockRelease::expired}, {"reason", why}});
  }
  LockHolder holder, previous;
  const auto ttl = args["ttl_ms"].get<std::int64_t>();
  const LockAcquire a = locks_.acquire(lock_name, caller.tenant, caller.agent, ttl, now_ms, holder, previous);
  const Json expires = holder.ttl_ms > 0 ? Json(holder.taken_ms + holder.ttl_ms - now_ms) : Json(nullptr);
  if (a == LockAcquire::full)
    return {{ToolStage::exec, "Too many locks", fmt::format("lock_acquire: {} locks are held", kMaxLocks)}, lock_name,
            "full", Json::object()};
  if (a == LockAcquire::busy)
    return done(lock_name, "busy", {{"acquired", false}, {"token", nullptr}, {"expires_in_ms", expires}},
                writer_facts(holder.tenant, holder.agent, caller));
  Json facts = Json::object();
  if (a == LockAcquire::took_expired) {
    facts = writer_facts(previous.tenant, previous.agent, caller);
    facts["expired_ms"] = now_ms - previous.taken_ms - previous.ttl_ms;
  }
  return done(lock_name, a == LockAcquire::acquired ? "acquired" : "took_expired",
              {{"acquired", true}, {"token", holder.token}, {"expires_in_ms", expires}}, std::move(facts));
}

SharedRun SharedTools::job(std::string_view name, const Json& args, const Caller& caller) {
  const std::string& queue = text_of(args, "queue");
  if (name == "job_submit") {
    const std::uint64_t ticket = queues_.submit(queue, text_of(args, "input"), caller.tenant, caller.agent);
    if (ticket == 0)
      return {{ToolStage::exec, "Queue full", fmt::format("job_submit: {} results are pending", kMaxQueued)}, queue,
              "full", Json::object()};
    return done(queue, "submitted", {{"ticket", ticket}}, {{"ticket", ticket}});
  }
  std::uint64_t newest = 0;
  const QueuedResult r = queues_.take(queue, newest);
  if (r.ticket == 0) return done(queue, "empty", {{"ticket", nullptr}, {"input", nullptr}, {"result", nullptr}});
  Json facts = writer_facts(r.tenant, r.agent, caller);
  facts["ticket"] = r.ticket;
  facts["stale"] = r.ticket < newest;
  return done(queue, "delivered", {{"ticket", r.ticket}, {"input", r.input}, {"result", r.result}}, std::move(facts));
}

}  // namespace relsim::tools
