// LiteLLM's standard logging payload as JSON Lines (records.hpp): one object
// per completed call, with "trace_id" (the task), "startTime" (seconds, or an
// RFC 3339 string), "status" ("success" or "failure") and, on failure,
// "error_information": {"error_class", "error_code"}. Lines are written when
// calls end, not when they start, so records are held and sorted by start.
#include <map>
#include <string>

#include <fmt/format.h>

#include "fit/read_common.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim::fit {
namespace {

[[noreturn]] void bad(const std::string& where, std::int64_t number, std::string_view key, const Json& value,
                      std::string_view valid) {
  throw InputError(fmt::format("{}:{}: \"{}\" = {} is not valid: {}", where, number, key, json_excerpt(value, 100), valid));
}

// The failure's kind by the one table (fault_kind_of): an HTTP status other
// than 2xx in error_code wins, then the error class, else "error". LiteLLM
// gives some classes a status no server sent (litellm/exceptions.py):
// APIConnectionError 500, Timeout 408, and MidStreamFallbackError (a stream
// that broke after it began) its cause's status or 503; for those the class
// is read, the last as it is: an in-stream break of no kind relsim names.
std::string failure_kind(const Json& j, const std::string& where, std::int64_t number) {
  const auto info = j.find("error_information");
  if (info == j.end() || info->is_null()) return "error";
  if (!info->is_object()) bad(where, number, "error_information", *info, "an object or null");
  const auto c = info->find("error_class");
  const bool has_class = c != info->end() && c->is_string() && !c->get_ref<const std::string&>().empty();
  if (has_class) {  // "litellm.Timeout": the class's own name
    const std::string_view text = c->get_ref<const std::string&>();
    const std::size_t dot = text.rfind('.');
    const std::string_view name = dot == std::string_view::npos ? text : text.substr(dot + 1);
    if (name == "APIConnectionError") return "reset";
    if (name == "Timeout") return "slow_headers";
    if (name == "MidStreamFallbackError") return "MidStreamFallbackError";
  }
  if (const auto code = info->find("error_code"); code != info->end()) {
    const std::string text = code->is_string() ? code->get<std::string>() : code->is_number_integer() ? code->dump() : "";
    if (const auto v = parse_number<int>(text); v && *v >= 100 && *v <= 599 && *v / 100 != 2) return fmt::format("http_{}", *v);
  }
  if (!has_class) return "error";
  Record probe;
  if (!set_outcome(c->get_ref<const std::string&>(), probe) || !probe.bad)
    bad(where, number, "error_information.error_class", *c, "an error class name");
  return probe.kind;
}

// The provider a payload names: custom_llm_provider, else the error's
// llm_provider ("openai", "anthropic", ...), else "".
std::string provider_of(const Json& j) {
  if (const auto p = j.find("custom_llm_provider"); p != j.end() && p->is_string()) return p->get<std::string>();
  if (const auto info = j.find("error_information"); info != j.end() && info->is_object())
    if (const auto p = info->find("llm_provider"); p != info->end() && p->is_string()) return p->get<std::string>();
  return "";
}

// One payload line; false (and a skip) when it is well-formed but unusable.
bool read_line(const Json& j, const std::string& where, std::int64_t number, Record& r, ReadStats& stats,
               std::map<std::string, std::int64_t>& providers) {
  const Json& trace = j.at("trace_id");
  if (trace.is_null() || (trace.is_string() && trace.get_ref<const std::string&>().empty())) {
    add_skip(stats, "payloads without a trace_id");
    return false;
  }
  if (!trace.is_string()) bad(where, number, "trace_id", trace, "a string");
  r.task = trace.get<std::string>();
  if (std::string provider = provider_of(j); !provider.empty()) ++providers[provider];
  const Json& start = j.at("startTime");
  std::optional<std::int64_t> ns;
  if (start.is_number()) ns = seconds_to_ns(start.get<double>());
  if (start.is_string()) ns = parse_time_ns(start.get_ref<const std::string&>());
  if (!ns) bad(where, number, "startTime", start, "seconds (1714567890.25) or RFC 3339 (\"2024-05-01T12:00:00.25Z\")");
  r.order = *ns;
  r.timed = true;
  const Json& status = j.at("status");
  if (status == "success") {
    r.bad = false;
    r.kind.clear();
  } else if (status == "failure") {
    r.bad = true;
    r.kind = failure_kind(j, where, number);
  } else {
    bad(where, number, "status", status, "\"success\" or \"failure\"");
  }
  return true;
}

}  // namespace

ReadStats read_litellm(const std::string& text, const std::string& where, const RecordSink& sink) {
  ReadStats stats;
  stats.format = "litellm";
  std::vector<Record> records;
  std::map<std::string, std::int64_t> providers;
  for_each_line(text, [&](std::string_view line, std::int64_t number) {
    const Json j = parse_json_line(line, where, number);
    const Shape shape = shape_of(j);
    if (shape != Shape::litellm) {
      if (shape != Shape::other) throw_mixed(where, number, shape, "LiteLLM");
      throw InputError(fmt::format("{}:{}: not a LiteLLM standard logging payload (it needs \"trace_id\", "
                                   "\"startTime\" and \"status\")",
                                   where, number));
    }
    Record r;
    if (read_line(j, where, number, r, stats, providers)) records.push_back(std::move(r));
    return true;
  });
  stats.notes.push_back("one record per LiteLLM call: retries inside a call are not seen unless logged as calls");
  std::string named;
  for (const auto& [name, n] : providers) named += fmt::format("{}{} ({})", named.empty() ? "" : ", ", name, n);
  stats.notes.push_back(named.empty() ? "provider: not given (no custom_llm_provider or error_information.llm_provider)"
                                      : fmt::format("providers: {}", named));
  deliver_sorted(records, stats, sink);
  require_records(stats, where);
  return stats;
}

}  // namespace relsim::fit
