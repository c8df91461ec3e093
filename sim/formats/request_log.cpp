// Reading the request log strictly (request_log.hpp; its lines are specified in docs/wire.md).
#include "relsim/formats/request_log.hpp"

#include <variant>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"

namespace relsim {
namespace {

// "file:line" for messages, formatted only when there is an error to report
// (most lines have none, and a log has hundreds of thousands of lines).
struct At {
  const std::string& where;
  std::int64_t line;
};

}  // namespace
}  // namespace relsim

template <>
struct fmt::formatter<relsim::At> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(const relsim::At& at, Context& ctx) const {
    return fmt::format_to(ctx.out(), "{}:{}", at.where, at.line);
  }
};

namespace relsim {

std::string_view to_string(RequestEnd end) {
  switch (end) {
    case RequestEnd::complete: return "complete";
    case RequestEnd::closed: return "closed";
    case RequestEnd::reset: return "reset";
    case RequestEnd::client_gone: return "client_gone";
    case RequestEnd::stopped: return "stopped";
  }
  return "?";
}

Outcome parse_outcome_word(std::string_view word) {
  for (int o = 0; o < kOutcomes; ++o)
    if (word == to_string(static_cast<Outcome>(o))) return static_cast<Outcome>(o);
  throw InputError(fmt::format("outcome '{}' is not an outcome: use done, env_error, harness_error, crash, hang or "
                               "partial_done",
                               word));
}

namespace {

using ParsedLine = std::variant<std::monostate, RequestLine, OutcomeReport, std::string>;

const Json& field(const Json& j, const char* key, const At& at) {
  const auto it = j.find(key);
  if (it == j.end()) throw InputError(fmt::format("{}: missing \"{}\"", at, key));
  return *it;
}

std::int64_t count_field(const Json& j, const char* key, const At& at) {
  const Json& v = field(j, key, at);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX))
    return v.get<std::int64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::int64_t>();
  throw InputError(fmt::format("{}: \"{}\" = {} is not an integer >= 0", at, key, json_excerpt(v)));
}

double ms_field(const Json& j, const char* key, const At& at) {
  const Json& v = field(j, key, at);
  if (!v.is_number()) throw InputError(fmt::format("{}: \"{}\" = {} is not a number of ms", at, key, json_excerpt(v)));
  return v.get<double>();
}

RequestEnd parse_end(const Json& v, const At& at) {
  for (auto e : {RequestEnd::complete, RequestEnd::closed, RequestEnd::reset, RequestEnd::client_gone,
                 RequestEnd::stopped})
    if (v.is_string() && v.get_ref<const std::string&>() == to_string(e)) return e;
  throw InputError(fmt::format("{}: \"end\" = {} is not complete, closed, reset, client_gone or stopped", at,
                               json_excerpt(v)));
}

// The entry served: its name, or the object form {"kind": name, ...pacing};
// false for null (none served).
bool parse_entry(const Json& v, const At& at, PlannedRequest& entry) {
  if (v.is_null()) return false;
  const Json* name = &v;
  if (v.is_object()) {
    const auto it = v.find("kind");
    name = it == v.end() ? nullptr : &*it;
  }
  if (!name || !name->is_string())
    throw InputError(fmt::format("{}: \"entry\" = {} is not a script entry name or object", at, json_excerpt(v)));
  const auto& word = name->get_ref<const std::string&>();
  if (word == "ok") {
    entry = std::nullopt;
    return true;
  }
  try {
    entry = parse_fault_kind(word);
    return true;
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: \"entry\": {}", at, e.what()));
  }
}

// A proxied request's "upstream": {"status": S or null, ..., "error": TEXT}.
// What failed on the hop, in words: the error, or the upstream's own 4xx or
// 5xx; nullopt when the upstream answered.
std::optional<std::string> upstream_failure(const Json& up, const At& at) {
  const auto status = up.is_object() ? up.find("status") : up.end();
  if (status == up.end() || !(status->is_null() || status->is_number_integer()))
    throw InputError(fmt::format("{}: \"upstream\" = {} is not an object with a \"status\" (an HTTP status or null)",
                                 at, json_excerpt(up)));
  if (const auto error = up.find("error"); error != up.end()) {
    if (!error->is_string()) throw InputError(fmt::format("{}: \"upstream\".\"error\" must be a string", at));
    return error->get<std::string>();
  }
  if (status->is_number_integer() && status->get<std::int64_t>() >= 400)
    return fmt::format("the upstream answered {}", status->get<std::int64_t>());
  return std::nullopt;
}

RequestLine parse_request(const Json& j, const At& at) {
  RequestLine r;
  r.task = count_field(j, "task", at);
  r.index = field(j, "index", at).is_null() ? -1 : count_field(j, "index", at);
  r.served = parse_entry(field(j, "entry", at), at, r.entry);
  if (const auto it = j.find("exhausted"); it != j.end()) {
    if (!it->is_boolean()) throw InputError(fmt::format("{}: \"exhausted\" must be true or false", at));
    r.exhausted = it->get<bool>();
  }
  const Json& status = field(j, "status", at);
  if (!status.is_number_integer() || status.get<std::int64_t>() < 0 || status.get<std::int64_t>() > 999)
    throw InputError(fmt::format("{}: \"status\" = {} is not an HTTP status or 0", at, json_excerpt(status)));
  r.status = status.get<int>();
  r.end = parse_end(field(j, "end", at), at);
  r.received_ms = ms_field(j, "received_ms", at);
  r.finished_ms = ms_field(j, "finished_ms", at);
  const Json& rc = field(j, "retry_count", at);
  if (!rc.is_null() && !rc.is_string())
    throw InputError(fmt::format("{}: \"retry_count\" = {} is not a string or null", at, json_excerpt(rc)));
  if (rc.is_string()) r.retry_count = rc.get<std::string>();
  if (const auto d = j.find("dialect"); d != j.end()) {
    if (!d->is_string() || (*d != "openai" && *d != "anthropic"))
      throw InputError(fmt::format("{}: \"dialect\" = {} is not \"anthropic\" or \"openai\"", at, json_excerpt(*d)));
    r.dialect = parse_dialect(d->get_ref<const std::string&>());
  }
  if (const auto fb = j.find("fallback"); fb != j.end()) {
    if (!fb->is_boolean())
      throw InputError(fmt::format("{}: \"fallback\" = {} is not true or false", at, json_excerpt(*fb)));
    r.fallback = fb->get<bool>();
  }
  if (const auto up = j.find("upstream"); up != j.end()) r.upstream_failed = upstream_failure(*up, at);
  // An index is taken exactly when an entry is served or the script is found exhausted.
  if ((r.index >= 0) != (r.served || r.exhausted) || (r.served && r.exhausted))
    throw InputError(fmt::format("{}: \"index\", \"entry\" and \"exhausted\" disagree (an index goes with an entry "
                                 "or with \"exhausted\": true, never both)",
                                 at));
  return r;
}

OutcomeReport parse_outcome_line(const Json& j, const At& at) {
  OutcomeReport o;
  o.task = count_field(j, "task", at);
  const Json& word = field(j, "outcome", at);
  if (!word.is_string()) throw InputError(fmt::format("{}: \"outcome\" = {} is not a word", at, json_excerpt(word)));
  try {
    o.outcome = parse_outcome_word(word.get_ref<const std::string&>());
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", at, e.what()));
  }
  if (const auto it = j.find("detail"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) throw InputError(fmt::format("{}: \"detail\" is not a string", at));
    o.detail = it->get<std::string>();
  }
  ms_field(j, "received_ms", at);
  return o;
}

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

Json parse_object(std::string_view line, const At& at) {
  Json j;
  try {
    j = Json::parse(line.begin(), line.end());
  } catch (const Json::exception&) {  // parse_error, and out_of_range for a number such as 1e400
    throw InputError(fmt::format("{}: not a JSON object (truncated or not JSON)", at));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}: not a JSON object", at));
  return j;
}

ParsedLine parse_line(std::string_view line, std::int64_t number, const std::string& where) {
  if (blank(line)) return std::monostate{};
  const At at{where, number};
  try {
    const Json j = parse_object(line, at);
    if (j.contains("outcome")) {
      OutcomeReport o = parse_outcome_line(j, at);
      o.line = number;
      return o;
    }
    RequestLine r = parse_request(j, at);
    r.line = number;
    return r;
  } catch (const InputError& e) {
    return std::string(e.what());
  }
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

void check_header(const Json& h, const At& at) {
  const auto it = h.find("relsim_log");
  if (it == h.end() || *it != 1)
    throw InputError(fmt::format("{}: the first line must be a log header with \"relsim_log\": 1", at));
  const auto pt = h.find("plan_tasks");
  if (pt != h.end() && !pt->is_null() && !(pt->is_number_integer() && pt->get<std::int64_t>() >= 0))
    throw InputError(fmt::format("{}: header \"plan_tasks\" = {} is not an integer >= 0 or null", at,
                                 json_excerpt(*pt)));
}

}  // namespace

RequestLog parse_request_log(std::string_view text, const std::string& where) {
  RequestLog log;
  log.where = where;
  const std::vector<std::string_view> lines = split_lines(text);
  std::size_t first = 0;
  while (first < lines.size() && blank(lines[first])) ++first;
  if (first == lines.size()) throw InputError(fmt::format("{}: empty log, no header", where));
  const At at{where, static_cast<std::int64_t>(first) + 1};
  log.header = parse_object(lines[first], at);
  check_header(log.header, at);
  std::vector<ParsedLine> parsed(lines.size());
  FirstError error;
  const auto count = static_cast<std::int64_t>(lines.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = static_cast<std::int64_t>(first) + 1; i < count; ++i)
    error.run([&] { parsed[static_cast<std::size_t>(i)] = parse_line(lines[static_cast<std::size_t>(i)], i + 1, where); });
  error.rethrow();
  // In line order, so the error named is the first bad line's whatever the thread count.
  for (ParsedLine& p : parsed) {
    if (auto* message = std::get_if<std::string>(&p)) throw InputError(*message);
    if (auto* r = std::get_if<RequestLine>(&p)) log.requests.push_back(std::move(*r));
    if (auto* o = std::get_if<OutcomeReport>(&p)) log.outcomes.push_back(std::move(*o));
  }
  return log;
}

RequestLog read_request_log(const std::string& path) {
  return parse_request_log(read_file(path, "request log"), path);
}

}  // namespace relsim
