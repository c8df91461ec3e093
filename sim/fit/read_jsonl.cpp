// The generic log as JSON Lines (records.hpp, the csv format's other form):
// one object per line with "task" (a string or an integer), "request" (order
// within the task) or "time" (seconds, or an RFC 3339 string), "outcome" (a
// word or an HTTP status) and optionally "call". Streamed like the CSV; the
// first row decides whether "request" or "time" orders the rows.
#include <fmt/format.h>

#include "fit/read_common.hpp"
#include "relsim/core/error.hpp"

namespace relsim::fit {
namespace {

[[noreturn]] void bad_key(const std::string& where, std::int64_t number, std::string_view key, const Json& value,
                          std::string_view valid) {
  throw InputError(fmt::format("{}:{}: \"{}\" = {} is not valid: {}", where, number, key, json_excerpt(value, 100), valid));
}

const Json& key(const Json& j, const char* name, const std::string& where, std::int64_t number) {
  const auto it = j.find(name);
  if (it == j.end()) throw InputError(fmt::format("{}:{}: missing \"{}\"", where, number, name));
  return *it;
}

std::int64_t order_of(const Json& j, bool by_request, const std::string& where, std::int64_t number) {
  if (by_request) {
    const Json& v = key(j, "request", where, number);
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX) || v.get<std::int64_t>() < 0)
      bad_key(where, number, "request", v, "an integer >= 0 (the request's order within its task)");
    return v.get<std::int64_t>();
  }
  const Json& v = key(j, "time", where, number);
  std::optional<std::int64_t> ns;
  if (v.is_string()) ns = parse_time_ns(v.get_ref<const std::string&>());
  if (v.is_number()) ns = seconds_to_ns(v.get<double>());
  if (!ns) bad_key(where, number, "time", v, "seconds (1714567890.25) or RFC 3339 (\"2024-05-01T12:00:00.25Z\")");
  return *ns;
}

void read_row(const Json& j, bool by_request, const std::string& where, std::int64_t number, Record& r) {
  const Json& task = key(j, "task", where, number);
  if (task.is_string() && !task.get_ref<const std::string&>().empty())
    r.task = task.get_ref<const std::string&>();
  else if (task.is_number_integer())
    r.task = task.dump();
  else
    bad_key(where, number, "task", task, "a non-empty string or an integer");
  r.order = order_of(j, by_request, where, number);
  r.timed = !by_request;
  const Json& outcome = key(j, "outcome", where, number);
  const bool ok = outcome.is_string()           ? set_outcome(outcome.get_ref<const std::string&>(), r)
                  : outcome.is_number_integer() ? set_outcome(outcome.dump(), r)
                                                : false;
  if (!ok) bad_key(where, number, "outcome", outcome, kOutcomeChoices);
  if (const auto call = j.find("call"); call != j.end() && !call->is_null()) {
    if (!call->is_number_unsigned() && !(call->is_number_integer() && call->get<std::int64_t>() >= 0))
      bad_key(where, number, "call", *call, "an integer >= 0, or null");
  }
}

}  // namespace

ReadStats read_jsonl(const std::string& path, const RecordSink& sink) {
  ReadStats stats;
  stats.format = "jsonl";
  LineReader lines(path);
  std::string_view line;
  Record record;
  int by_request = -1;  // decided by the first row
  while (lines.next(line)) {
    if (blank(line)) continue;
    const Json j = parse_json_line(line, path, lines.number());
    const Shape shape = shape_of(j);
    if (shape != Shape::table && shape != Shape::other) throw_mixed(path, lines.number(), shape, "task/outcome JSON Lines");
    if (!j.is_object()) throw InputError(fmt::format("{}:{}: not a JSON object", path, lines.number()));
    if (by_request < 0) {
      by_request = j.contains("request") ? 1 : 0;
      stats.notes.push_back(by_request ? "order within a task: \"request\"" : "order within a task: \"time\"");
    }
    read_row(j, by_request == 1, path, lines.number(), record);
    sink(record);
    ++stats.records;
  }
  require_records(stats, path);
  return stats;
}

}  // namespace relsim::fit
