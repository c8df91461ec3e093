// Script entries, request logs and the server's config: the value types of
// server.hpp, parsed strictly at the edge (check at the edges, assert inside).
#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/server/server.hpp"
#include "server/openai_wire.hpp"
#include "server/server_wire.hpp"

namespace relsim {
namespace {

std::string all_entry_names() {
  std::string s = "ok";
  for (int i = 0; i < kFaultKinds; ++i) s += ", " + std::string(to_string(static_cast<FaultKind>(i)));
  return s + ", empty, garbage";
}

ScriptEntry entry_named(std::string_view name) {
  if (name == "ok") return ScriptEntry::ok();
  ScriptEntry e;
  if (name == "empty" || name == "garbage") {
    e.reply = name == "empty" ? Reply::empty : Reply::garbage;
    return e;
  }
  for (int i = 0; i < kFaultKinds; ++i)
    if (to_string(static_cast<FaultKind>(i)) == name) return ScriptEntry::of(static_cast<FaultKind>(i));
  throw InputError(fmt::format("script entry '{}' is not a reply: use one of {}", name, all_entry_names()));
}

std::int64_t integer_field(const Json& obj, const char* key, std::int64_t lo, std::int64_t hi) {
  const Json& v = obj.at(key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
    throw InputError(fmt::format("script entry field {} = {} is out of range: it must be an integer in [{}, {}]", key,
                                 json_excerpt(v), lo, hi));
  return v.get<std::int64_t>();
}

}  // namespace

ScriptEntry ScriptEntry::of(FaultKind kind) {
  ScriptEntry e;
  e.reply = Reply::fault;
  e.fault = kind;
  return e;
}

std::string entry_name(const ScriptEntry& entry) {
  switch (entry.reply) {
    case Reply::ok: return "ok";
    case Reply::fault: return std::string(to_string(entry.fault));
    case Reply::empty: return "empty";
    case Reply::garbage: return "garbage";
  }
  return "ok";
}

ScriptEntry parse_script_entry(const Json& value) {
  if (value.is_string()) return entry_named(value.get<std::string>());
  if (!value.is_object())
    throw InputError(fmt::format("script entry {} is neither a name ({}) nor an object with a \"kind\"",
                                 json_excerpt(value), all_entry_names()));
  if (!value.contains("kind") || !value.at("kind").is_string())
    throw InputError("script entry object has no \"kind\" string: give {\"kind\": \"ok\", ...}");
  ScriptEntry e = entry_named(value.at("kind").get<std::string>());
  for (const auto& [key, v] : value.items()) {
    if (key == "kind") continue;
    if (key == "chunk_delay_ms") {
      e.chunk_delay_ms = integer_field(value, "chunk_delay_ms", 0, kMaxChunkDelayMs);
    } else if (key == "slice_bytes") {
      e.slice_bytes = integer_field(value, "slice_bytes", 0, std::int64_t{1} << 20);
    } else if (key == "bytes_per_second") {
      const double r = v.is_number() ? v.get<double>() : -1.0;
      if (!(r == 0.0 || (r >= 1.0 && r <= 1e9)))
        throw InputError(fmt::format(
            "script entry field bytes_per_second = {} is out of range: it must be 0 (unlimited) or in [1, 1e9]",
            json_excerpt(v)));
      e.bytes_per_second = r;
    } else if (key == "gate") {
      if (!v.is_string() || !wire::valid_gate_name(v.get<std::string>()))
        throw InputError(fmt::format("script entry field gate = {} is not a gate name: use 1 to 64 of A-Z a-z 0-9 _ . -",
                                     json_excerpt(v)));
      e.gate = v.get<std::string>();
    } else {
      throw InputError(fmt::format("script entry field '{}' is unknown: use kind, chunk_delay_ms, bytes_per_second, "
                                   "slice_bytes, gate",
                                   key));
    }
  }
  return e;
}

std::vector<ScriptEntry> parse_script(const Json& responses) {
  if (!responses.is_array()) throw InputError("script \"responses\" is not an array of entries");
  if (responses.size() > kMaxScriptEntries)
    throw InputError(fmt::format("script has {} entries: at most {} per task", responses.size(), kMaxScriptEntries));
  std::vector<ScriptEntry> out;
  out.reserve(responses.size());
  for (std::size_t i = 0; i < responses.size(); ++i) {
    try {
      out.push_back(parse_script_entry(responses[i]));
    } catch (const InputError& e) {
      throw InputError(fmt::format("responses[{}]: {}", i, e.what()));
    }
  }
  return out;
}

std::vector<ScriptEntry> script_of(std::initializer_list<std::string_view> names) {
  std::vector<ScriptEntry> out;
  for (const auto name : names) out.push_back(entry_named(name));
  return out;
}

int healthy_stream_events(Dialect dialect) {
  const ScriptEntry ok = ScriptEntry::ok();
  const wire::StreamScript s =
      dialect == Dialect::openai ? wire::openai::stream_script(ok, 0, 0) : wire::stream_script(ok, 0, 0, 0);
  return static_cast<int>(s.events.size());
}

Json to_json(const ScriptEntry& entry) {
  if (!entry.shaped()) return entry_name(entry);
  Json j{{"kind", entry_name(entry)}};
  if (entry.chunk_delay_ms > 0) j["chunk_delay_ms"] = entry.chunk_delay_ms;
  if (entry.bytes_per_second > 0.0) j["bytes_per_second"] = entry.bytes_per_second;
  if (entry.slice_bytes > 0) j["slice_bytes"] = entry.slice_bytes;
  if (!entry.gate.empty()) j["gate"] = entry.gate;
  return j;
}

std::optional<std::string> LoggedRequest::header(std::string_view name) const {
  const std::string lower = wire::lower_case(std::string(name));
  for (const auto& [k, v] : headers)
    if (k == lower) return v;
  return std::nullopt;
}

Json to_json(const LoggedRequest& r) {
  Json headers = Json::object();
  for (const auto& [k, v] : r.headers) {
    if (headers.contains(k)) headers[k] = headers[k].get<std::string>() + ", " + v;
    else headers[k] = v;
  }
  Json j{{"method", r.method},
         {"target", r.target},
         {"headers", std::move(headers)},
         {"body", r.body},
         {"body_bytes", r.body_bytes},
         {"entry", r.entry ? to_json(*r.entry) : Json(nullptr)},
         {"index", r.index >= 0 ? Json(r.index) : Json(nullptr)},
         {"status", r.status},
         {"end", r.end.empty() ? Json(nullptr) : Json(r.end)},
         {"received_ms", r.received_ms},
         {"finished_ms", r.finished_ms ? Json(*r.finished_ms) : Json(nullptr)}};
  if (r.tenant >= 0) j["tenant"] = r.tenant;
  if (r.fallback) j["fallback"] = true;
  return j;
}

Json to_json(const TaskLog& log) {
  Json requests = Json::array();
  for (const auto& r : log.requests) requests.push_back(to_json(r));
  return Json{{"task", log.task}, {"requests", std::move(requests)}, {"dropped", log.dropped}};
}

namespace {

// A header value the SDKs parse as a number: a non-negative decimal, digits
// with at most one inner dot, at most 32 bytes.
void check_decimal(const std::string& text, const char* name, const char* unit, const char* example) {
  const auto dot = text.find('.');
  const bool ok = !text.empty() && text.size() <= 32 && text.front() != '.' && text.back() != '.' &&
                  text.find('.', dot == std::string::npos ? text.size() : dot + 1) == std::string::npos &&
                  std::all_of(text.begin(), text.end(),
                              [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) || ch == '.'; });
  if (!ok)
    throw InputError(fmt::format("{} = '{}' is not a number of {}: give a non-negative decimal such as {}", name, text,
                                 unit, example));
}

}  // namespace

void validate(const ServerConfig& c) {
  if (c.port < 0 || c.port > 65535)
    throw InputError(fmt::format("port = {} is out of range: it must be in [0, 65535] (0: pick a free one)", c.port));
  if (c.threads < 1 || c.threads > 64)
    throw InputError(fmt::format("threads = {} is out of range: it must be in [1, 64]", c.threads));
  check_decimal(c.retry_after, "retry-after", "seconds", "0 or 1.5");
  if (!c.upstream_ca.empty() && !(c.upstream && c.upstream->tls))
    throw InputError(fmt::format("--upstream-ca '{}' applies to an https:// upstream only, and --upstream is '{}'",
                                 c.upstream_ca, c.upstream ? c.upstream->url : std::string("not given")));
  if (!c.retry_after_ms.empty()) check_decimal(c.retry_after_ms, "retry-after-ms", "milliseconds", "0 or 2500");
  auto positive = [](std::chrono::milliseconds t, const char* name) {
    if (t.count() < 1 || t.count() > 3'600'000)
      throw InputError(fmt::format("{} = {} ms is out of range: it must be in [1, 3600000] ms", name, t.count()));
  };
  positive(c.read_timeout, "read timeout");
  positive(c.keep_alive_timeout, "keep-alive timeout");
  positive(c.linger_timeout, "linger timeout");
  if (c.max_connections < 1 || c.max_connections > 1'000'000)
    throw InputError(fmt::format("max connections = {} is out of range: it must be in [1, 1000000]", c.max_connections));
  if (c.max_tasks < 1 || c.max_tasks > 1'000'000)
    throw InputError(fmt::format("max tasks = {} is out of range: it must be in [1, 1000000]", c.max_tasks));
  if (c.max_log_entries > 10'000)
    throw InputError(fmt::format("max log entries = {} is out of range: it must be in [0, 10000]", c.max_log_entries));
  if (c.outage) validate(*c.outage);
  if (c.chain) RequestChain check(*c.chain);
  if (c.outage && c.chain)
    throw InputError("outage mode (seconds) and chain mode (requests) are two ways to draw faults: give one");
  if (c.provider) validate(*c.provider);
  if (!(c.replay_pace >= 0.0 && c.replay_pace <= 1000.0))
    throw InputError(fmt::format("pace = {:g} is out of range: it must be in [0, 1000] (1: as recorded, 0: at once)",
                                 c.replay_pace));
  if (c.replay_dir.empty() && (c.replay_pace != 1.0 || !c.replay_match.empty()))
    throw InputError("--pace and --match apply to a replay: give --replay DIR too");
  if (!c.record_dir.empty() && !c.replay_dir.empty() && c.record_dir != c.replay_dir)
    throw InputError(fmt::format("a replay records its misses into its own directory '{}', not '{}'", c.replay_dir,
                                 c.record_dir));
  if (!c.record_dir.empty() && !c.upstream)
    throw InputError(fmt::format("--record '{}' records the exchanges of relsim proxy with its upstream: give --upstream",
                                 c.record_dir));
}

namespace wire {

bool valid_gate_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

}  // namespace wire

}  // namespace relsim
