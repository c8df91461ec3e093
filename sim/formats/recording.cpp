// The recording format (formats/recording.hpp).
#include "relsim/formats/recording.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/http_text.hpp"
#include "relsim/core/json.hpp"

namespace relsim {
namespace {

Json headers_json(const std::vector<std::pair<std::string, std::string>>& headers) {
  Json out = Json::array();
  for (const auto& [name, value] : headers) out.push_back(Json::array({name, value}));
  return out;
}

// Whether a text is valid UTF-8 (JSON keeps it byte for byte; otherwise
// the bytes that are not are replaced, and the line says so).
bool utf8(const std::string& text) {
  try {
    (void)Json(text).dump(-1, ' ', false, Json::error_handler_t::strict);
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

}  // namespace

void RecordedExchange::add_body(std::string_view bytes, double ms) {
  if (!events_mode_) {
    body_.append(bytes);
    return;
  }
  const std::size_t scan_from = pending_.size() >= 3 ? pending_.size() - 3 : 0;  // a blank line split across reads
  pending_.append(bytes);
  pending_ms_ = ms;
  std::size_t from = 0;
  for (std::size_t end = http_text::sse_event_end(pending_, scan_from); end != std::string::npos;
       end = http_text::sse_event_end(pending_, from)) {
    events_.emplace_back(ms, pending_.substr(from, end - from));
    from = end;
  }
  pending_.erase(0, from);
}

void RecordedExchange::finish(bool complete, double ms) {
  if (std::exchange(finished_, true)) return;
  if (!pending_.empty()) events_.emplace_back(pending_ms_, std::exchange(pending_, {}));  // an unended last event
  complete_ = complete;
  end_ms_ = ms;
}

std::string RecordedExchange::line() const {
  Json request{{"method", method}, {"path", path}, {"headers", headers_json(request_headers)}, {"body", request_body}};
  Json response{{"status", status ? Json(*status) : Json(nullptr)},
                {"headers", headers_json(response_headers)},
                {"headers_ms", headers_ms}};
  bool replaced = lossy || !utf8(request_body);
  if (events_mode_) {
    Json events = Json::array();
    for (const auto& [ms, text] : events_) {
      events.push_back(Json{{"ms", ms}, {"text", text}});
      replaced = replaced || !utf8(text);
    }
    response["events"] = std::move(events);
  } else {
    response["body"] = body_;
    replaced = replaced || !utf8(body_);
  }
  response["complete"] = complete_;
  response["end_ms"] = end_ms_;
  Json line{{"relsim_recording", kRecordingVersion}, {"dialect", std::string(dialect_name(dialect))},
            {"task", task},           {"index", index},
            {"entry", entry},         {"request", std::move(request)},
            {"response", std::move(response)}};
  if (!error.empty()) line["error"] = error;
  if (replaced) line["lossy"] = true;  // bytes that are not UTF-8 were replaced: not replayable byte for byte
  return http_text::json_text(line);
}

namespace {

// Whether an integer JSON value lies in [lo, hi] (lo >= 0 or not; an
// unsigned one past INT64_MAX never does).
bool in_range(const Json& v, std::int64_t lo, std::int64_t hi) {
  if (v.is_number_unsigned()) {
    const std::uint64_t u = v.get<std::uint64_t>();
    return u <= static_cast<std::uint64_t>(hi) && static_cast<std::int64_t>(u) >= lo;
  }
  return v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi;
}

// A line's fields, each checked for its type; a missing or mistyped one
// names its path in the error.
class Fields {
 public:
  Fields(const Json& j, std::string_view where, std::string path) : j_(j), where_(where), path_(std::move(path)) {}
  const Json& at(const char* key, bool (Json::*is)() const, const char* what) const {
    const auto it = j_.find(key);
    if (it == j_.end() || !((*it).*is)())
      throw InputError(fmt::format("{}: \"{}{}\" is {}: it must be {}", where_, path_, key,
                                   it == j_.end() ? "missing" : "of another type", what));
    return *it;
  }
  std::string text(const char* key) const { return at(key, &Json::is_string, "a string").get<std::string>(); }
  double number(const char* key) const { return at(key, &Json::is_number, "a number").get<double>(); }
  // A time in ms since the hop began, in [0, kMaxRecordedMs].
  double ms(const char* key) const {
    const double v = number(key);
    if (!(v >= 0.0 && v <= kMaxRecordedMs))
      throw InputError(fmt::format("{}: \"{}{}\" is {}: it must be in [0, {:g}] ms", where_, path_, key,
                                   at(key, &Json::is_number, "a number").dump(), kMaxRecordedMs));
    return v;
  }
  // An integer in [0, 2^63 - 1].
  std::int64_t integer(const char* key) const {
    const Json& v = at(key, &Json::is_number_integer, "an integer");
    if (!in_range(v, 0, INT64_MAX))
      throw InputError(fmt::format("{}: \"{}{}\" is {}: it must be in [0, 2^63 - 1]", where_, path_, key, v.dump()));
    return v.get<std::int64_t>();
  }
  bool has(const char* key) const { return j_.contains(key); }
  Fields object(const char* key) const { return {at(key, &Json::is_object, "an object"), where_, path_ + key + "."}; }
  std::vector<std::pair<std::string, std::string>> headers(const char* key) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Json& h : at(key, &Json::is_array, "an array of [name, value] pairs")) {
      if (!h.is_array() || h.size() != 2 || !h[0].is_string() || !h[1].is_string())
        throw InputError(fmt::format("{}: \"{}{}\" holds {}: each must be [name, value], two strings", where_, path_,
                                     key, h.dump().substr(0, 80)));
      // What a server would send again: a token for a name, no line break or NUL in a value.
      const std::string& name = h[0].get_ref<const std::string&>();
      const std::string& value = h[1].get_ref<const std::string&>();
      const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
      });
      if (!token || value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
        throw InputError(fmt::format("{}: \"{}{}\" holds {}: a header name must be a token and a value must hold no "
                                     "CR, LF or NUL",
                                     where_, path_, key, h.dump().substr(0, 80)));
      out.emplace_back(name, value);
    }
    return out;
  }

 private:
  const Json& j_;
  std::string_view where_;
  std::string path_;
};

}  // namespace

RecordedExchange RecordedExchange::from_line(std::string_view text, std::string_view where) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw InputError(fmt::format("{}: not a JSON object (a line cut short?)", where));
  const Fields f(j, where, "");
  const std::int64_t version = f.integer("relsim_recording");
  if (version != kRecordingVersion)
    throw InputError(fmt::format("{}: recording version {}: this relsim reads version {}", where, version,
                                 kRecordingVersion));
  RecordedExchange x;
  x.source = std::string(where);
  const std::string dialect = f.text("dialect");
  if (dialect != "anthropic" && dialect != "openai")
    throw InputError(fmt::format("{}: \"dialect\" is '{}': it must be anthropic or openai", where, dialect));
  x.dialect = dialect == "openai" ? Dialect::openai : Dialect::anthropic;
  x.task = f.integer("task");
  x.index = f.integer("index");
  x.entry = f.text("entry");
  const Fields req = f.object("request");
  x.method = req.text("method");
  x.path = req.text("path");
  x.request_headers = req.headers("headers");
  x.request_body = req.text("body");
  const Fields res = f.object("response");
  const Json& status = res.at("status", &Json::is_primitive, "an integer or null");
  if (!status.is_null() && !status.is_number_integer())
    throw InputError(fmt::format("{}: \"response.status\" is of another type: it must be an integer or null", where));
  if (status.is_number_integer()) {
    if (!in_range(status, 100, 999))
      throw InputError(fmt::format("{}: \"response.status\" is {}: it must be in [100, 999]", where, status.dump()));
    x.status = status.get<int>();
  }
  x.response_headers = res.headers("headers");
  x.headers_ms = res.ms("headers_ms");
  if (res.has("events") == res.has("body"))
    throw InputError(fmt::format("{}: \"response\" must hold \"events\" (an event stream) or \"body\", one of them",
                                 where));
  if (res.has("events")) {
    x.events_mode_ = true;
    for (const Json& e : res.at("events", &Json::is_array, "an array of {\"ms\", \"text\"}")) {
      if (!e.is_object() || !e.contains("ms") || !e["ms"].is_number() || !e.contains("text") || !e["text"].is_string())
        throw InputError(fmt::format("{}: \"response.events\" holds {}: each must be {{\"ms\": number, \"text\": "
                                     "string}}",
                                     where, e.dump().substr(0, 80)));
      const Fields event(e, where, "response.events[].");
      x.events_.emplace_back(event.ms("ms"), e["text"].get<std::string>());
    }
  } else {
    x.body_ = res.text("body");
  }
  x.complete_ = res.at("complete", &Json::is_boolean, "true or false").get<bool>();
  x.end_ms_ = res.ms("end_ms");
  x.finished_ = true;
  if (f.has("error")) x.error = f.text("error");
  if (f.has("lossy")) x.lossy = f.at("lossy", &Json::is_boolean, "true or false").get<bool>();
  return x;
}

std::vector<RecordedExchange> parse_recordings(std::string_view text, std::string_view name) {
  std::vector<RecordedExchange> out;
  std::size_t line = 0;
  for (std::size_t from = 0; from < text.size();) {
    const std::size_t end = std::min(text.find('\n', from), text.size());
    ++line;
    const std::string_view one = text.substr(from, end - from);
    if (!one.empty()) out.push_back(RecordedExchange::from_line(one, fmt::format("{}:{}", name, line)));
    from = end + 1;
  }
  return out;
}

std::vector<RecordedExchange> read_recordings(const std::string& dir, bool may_be_empty) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  if (may_be_empty && !fs::exists(dir, ec)) return {};
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".jsonl" && it->is_regular_file()) files.push_back(it->path());
  if (ec) throw InputError(fmt::format("the recording directory '{}' cannot be read: {}", dir, ec.message()));
  if (files.empty() && may_be_empty) return {};
  if (files.empty())
    throw InputError(
        fmt::format("the recording directory '{}' holds no recording (*.jsonl): record with relsim proxy --record", dir));
  std::sort(files.begin(), files.end());
  std::vector<RecordedExchange> out;
  for (const fs::path& file : files)
    for (RecordedExchange& x : parse_recordings(read_file(file.string(), "recording"), file.string()))
      out.push_back(std::move(x));
  if (out.empty() && !may_be_empty)
    throw InputError(fmt::format("the recording directory '{}' holds no recording: its *.jsonl files are empty", dir));
  return out;
}

}  // namespace relsim
