// OpenTelemetry traces as OTLP/JSON (records.hpp): one ExportTraceServiceRequest
// per line, as the Collector's file exporter writes, or one whole document.
// Under the GenAI semantic conventions a model call is a span with
// gen_ai.operation.name = "chat"; its HTTP client spans, when the
// instrumentation records them, are the requests actually sent (retries
// included), so they replace the call's own span. Without them, a call span
// that records its attempts (the official TypeScript SDK's own spans:
// http.request.method, and http.request.resend_count = k when the SDK
// retried inside the call) stands for k failed requests and then its own
// outcome. A call span whose scope records stop or finish reasons, and that
// has neither one nor an error nor status OK, is a stream the caller aborted
// (its own idle timeout): a fault. Spans arrive in any order (a child may
// come before its parent, lines are written by batch), so all are held, then
// grouped into tasks and sorted by start time.
#include <algorithm>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "fit/read_common.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim::fit {
namespace {

struct Span {
  std::string trace, id, parent;
  std::int64_t start = -1;  // startTimeUnixNano; -1 when absent
  bool error = false;       // status.code ERROR
  bool ok = false;          // status.code OK
  bool reason = false;      // a stop or finish reason: the stream reached its end
  bool says_reasons = false;  // the reason attribute is there, even empty: its scope records reasons
  std::string op, error_type, conversation, provider;
  bool provider_old = false;  // from gen_ai.system
  bool http = false;          // an HTTP client span
  bool method = false;        // http.request.method: a call span that records its own attempts
  int status = -1;            // http.response.status_code; -1 when absent
  std::int64_t resend = 0;    // http.request.resend_count
  bool has_resend = false;
  std::string scope;  // the instrumentation scope's name
  std::string at;     // "file:line: resourceSpans[i]...spans[k]" for messages
};

// Retries one call may carry: far past any SDK's maxRetries, and a bound on
// the records one span stands for.
constexpr std::int64_t kMaxResendCount = 1000;

[[noreturn]] void malformed(const std::string& at, std::string_view what) {
  throw InputError(fmt::format("{}: {}", at, what));
}

const Json* member(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

// An integer given as a JSON number or as a string of digits (OTLP/JSON writes 64-bit integers as strings).
std::optional<std::int64_t> integer_of(const Json& v) {
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return {};
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_string()) return parse_number<std::int64_t>(v.get_ref<const std::string&>());
  return {};
}

// An AnyValue as text: strings as they are, numbers and booleans printed; other kinds are not used here.
std::string any_text(const Json& value, const std::string& at) {
  if (!value.is_object()) malformed(at, fmt::format("attribute value {} is not an AnyValue object", json_excerpt(value, 80)));
  if (const Json* s = member(value, "stringValue"); s && s->is_string()) return s->get<std::string>();
  if (const Json* i = member(value, "intValue")) {
    if (const auto v = integer_of(*i)) return std::to_string(*v);
    malformed(at, fmt::format("intValue {} is not an integer", json_excerpt(*i, 80)));
  }
  if (const Json* b = member(value, "boolValue"); b && b->is_boolean()) return b->get<bool>() ? "true" : "false";
  if (const Json* d = member(value, "doubleValue"); d && d->is_number()) return d->dump();
  return "";
}

// Whether a reason attribute names one: a non-empty string, or an array
// with values (OpenTelemetry's OpenAI instrumentation writes an empty
// gen_ai.response.finish_reasons for a stream that ended without one; a
// Collector may then drop the empty list, leaving {"arrayValue": {}}).
bool names_a_reason(const Json* value) {
  if (!value || !value->is_object()) return false;
  if (const Json* s = member(*value, "stringValue")) return s->is_string() && !s->get_ref<const std::string&>().empty();
  if (const Json* a = member(*value, "arrayValue")) {
    const Json* values = a->is_object() ? member(*a, "values") : nullptr;
    return values && values->is_array() && !values->empty();
  }
  return true;  // another kind of value: it is there
}

// The HTTP status an error span's status message begins with, as the
// official SDKs' errors word it ("529 Overloaded", "429 Rate limit"), or -1.
int status_in_message(std::string_view message) {
  if (message.size() < 4 || message[3] != ' ') return -1;
  const auto v = parse_number<int>(message.substr(0, 3));
  return v && *v >= 100 && *v <= 599 ? *v : -1;
}

int http_status(const std::string& text, const std::string& at) {
  const auto v = parse_number<int>(text);
  if (!v || *v < 100 || *v > 599) malformed(at, fmt::format("http.response.status_code '{}' is not an HTTP status", text));
  return *v;
}

void read_attributes(const Json& list, Span& span) {
  if (!list.is_array()) malformed(span.at, "\"attributes\" is not a list of {\"key\", \"value\"}");
  for (const Json& a : list) {
    const Json* key = a.is_object() ? member(a, "key") : nullptr;
    if (!key || !key->is_string()) malformed(span.at, fmt::format("attribute {} has no \"key\"", json_excerpt(a, 80)));
    const std::string& k = key->get_ref<const std::string&>();
    const Json* value = member(a, "value");
    const auto text = [&] { return value ? any_text(*value, span.at) : std::string(); };
    if (k == "gen_ai.operation.name") span.op = text();
    else if (k == "gen_ai.provider.name") span.provider = text(), span.provider_old = false;
    else if (k == "gen_ai.system" && span.provider.empty()) span.provider = text(), span.provider_old = true;
    else if (k == "gen_ai.conversation.id") span.conversation = text();
    else if (k == "error.type") span.error_type = text();
    else if (k == "anthropic.message.stop_reason" || k == "gen_ai.response.finish_reasons")
      span.reason = span.reason || names_a_reason(value), span.says_reasons = true;
    else if (k == "http.request.method") span.http = true, span.method = true;
    else if (k == "http.response.status_code") span.http = true, span.status = http_status(text(), span.at);
    else if (k == "http.request.resend_count") {
      const auto v = parse_number<std::int64_t>(text());
      if (!v || *v < 0 || *v > kMaxResendCount)
        malformed(span.at, fmt::format("http.request.resend_count = {} is out of range: it must be an integer in "
                                       "[0, {}]",
                                       text(), kMaxResendCount));
      span.resend = *v, span.has_resend = true;
    }
  }
}

std::string id_of(const Json& s, const char* key, const std::string& at, bool required) {
  const Json* v = member(s, key);
  if (!v) {
    if (required) malformed(at, fmt::format("missing \"{}\"", key));
    return "";
  }
  if (!v->is_string()) malformed(at, fmt::format("\"{}\" = {} is not a string", key, json_excerpt(*v, 80)));
  return v->get<std::string>();
}

Span read_span(const Json& s, std::string at, const std::string& scope) {
  Span span;
  span.at = std::move(at);
  span.scope = scope;
  if (!s.is_object()) malformed(span.at, "a span is not a JSON object");
  span.trace = id_of(s, "traceId", span.at, true);
  span.id = id_of(s, "spanId", span.at, true);
  span.parent = id_of(s, "parentSpanId", span.at, false);
  if (const Json* t = member(s, "startTimeUnixNano")) {
    const auto v = integer_of(*t);
    if (!v || *v < 0) malformed(span.at, fmt::format("startTimeUnixNano = {} is not a time in ns", json_excerpt(*t, 80)));
    span.start = *v;
  }
  if (const Json* status = member(s, "status")) {
    if (!status->is_object()) malformed(span.at, "\"status\" is not an object");
    if (const Json* code = member(*status, "code")) {
      const bool known = *code == 0 || *code == 1 || *code == 2 || *code == "STATUS_CODE_UNSET" ||
                         *code == "STATUS_CODE_OK" || *code == "STATUS_CODE_ERROR";
      if (!known)
        malformed(span.at, fmt::format("status.code = {} is not 0, 1, 2 or STATUS_CODE_UNSET, _OK, _ERROR",
                                       json_excerpt(*code, 80)));
      span.error = *code == 2 || *code == "STATUS_CODE_ERROR";
      span.ok = *code == 1 || *code == "STATUS_CODE_OK";
    }
  }
  if (const Json* attributes = member(s, "attributes")) read_attributes(*attributes, span);
  // An error span with no status attribute: the status its message gives
  // (OpenTelemetry's OpenAI instrumentation records only the SDK's class,
  // InternalServerError for every 5xx, and its message "529 Overloaded").
  if (span.error && span.status < 0)
    if (const Json* status = member(s, "status"))
      if (const Json* message = member(*status, "message"); message && message->is_string())
        span.status = status_in_message(message->get_ref<const std::string&>());
  return span;
}

const Json& list_of(const Json& j, const char* key, const std::string& at) {
  static const Json empty = Json::array();
  const Json* v = member(j, key);
  if (!v) return empty;
  if (!v->is_array()) malformed(at, fmt::format("\"{}\" is not a list", key));
  return *v;
}

// The spans of one ExportTraceServiceRequest; `where` is "file:line" or "file".
void read_request(const Json& j, const std::string& where, std::vector<Span>& spans) {
  const Json& resources = list_of(j, "resourceSpans", where);
  for (std::size_t r = 0; r < resources.size(); ++r) {
    const std::string at_r = fmt::format("{}: resourceSpans[{}]", where, r);
    if (!resources[r].is_object()) malformed(at_r, "not a JSON object");
    const Json& scopes = list_of(resources[r], "scopeSpans", at_r);
    for (std::size_t s = 0; s < scopes.size(); ++s) {
      const std::string at_s = fmt::format("{}.scopeSpans[{}]", at_r, s);
      if (!scopes[s].is_object()) malformed(at_s, "not a JSON object");
      const Json* scope = member(scopes[s], "scope");
      const Json* name = scope && scope->is_object() ? member(*scope, "name") : nullptr;
      const std::string scope_name = name && name->is_string() ? name->get<std::string>() : std::string();
      const Json& list = list_of(scopes[s], "spans", at_s);
      for (std::size_t k = 0; k < list.size(); ++k)
        spans.push_back(read_span(list[k], fmt::format("{}.spans[{}]", at_s, k), scope_name));
    }
  }
}

std::vector<Span> read_spans(const std::string& text, const std::string& where) {
  std::vector<Span> spans;
  bool first = true;
  for_each_line(text, [&](std::string_view line, std::int64_t number) {
    Json j = Json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded() && first) {  // not one request per line: one whole document
      j = Json::parse(text, nullptr, false);
      if (j.is_discarded() || shape_of(j) != Shape::otlp)
        throw InputError(fmt::format("{}:{}: not JSON (truncated or not JSON), and the file is not one OTLP/JSON "
                                     "document",
                                     where, number));
      read_request(j, where, spans);
      return false;
    }
    first = false;
    if (j.is_discarded()) throw InputError(fmt::format("{}:{}: not JSON (truncated or not JSON)", where, number));
    const Shape shape = shape_of(j);
    if (shape != Shape::otlp) {
      if (shape != Shape::other) throw_mixed(where, number, shape, "OTLP/JSON");
      throw InputError(fmt::format("{}:{}: not an OTLP/JSON ExportTraceServiceRequest (no \"resourceSpans\")", where, number));
    }
    read_request(j, fmt::format("{}:{}", where, number), spans);
    return true;
  });
  return spans;
}

// The outcome a span records: bad on an error status, an error.type or an
// HTTP status other than 2xx, its kind from the one table (fault_kind_of).
void set_span_outcome(const Span& span, Record& r) {
  const bool status_bad = span.status >= 0 && span.status / 100 != 2;
  r.bad = status_bad || span.error || !span.error_type.empty();
  if (!r.bad) return;
  const std::optional<int> status = span.status >= 0 ? std::optional<int>(span.status) : std::nullopt;
  r.kind = !span.error_type.empty() ? fault_kind_of(span.error_type, status)
           : status_bad             ? fault_kind_of("", status)
                                    : "error";
}

// The kind of a request the caller aborted (docs/fit.md, Fault kinds): its
// idle timeout ended a stream that had stopped.
constexpr const char* kAbortedKind = "stall";
// The kind of an attempt that only http.request.resend_count tells of: the
// SDK retried it, so it failed before the stream, but no span says how.
constexpr const char* kHiddenRetryKind = "sdk_retry";

// The task a model call belongs to: its conversation, else its trace.
const std::string& task_of(const Span& chat) { return chat.conversation.empty() ? chat.trace : chat.conversation; }

// A request `span` made for the model call `chat` (the call's own span, or
// one of its HTTP attempts).
Record request_record(const Span& span, const Span& chat) {
  Record r;
  r.task = task_of(chat);
  r.order = span.start;
  r.timed = true;
  set_span_outcome(span, r);
  return r;
}

void require_start(const Span& span) {
  if (span.start < 0) malformed(span.at, "missing \"startTimeUnixNano\" (needed to order the requests)");
}

struct OtlpTally {
  std::int64_t chats = 0, with_attempts = 0, attempts = 0, resend_given = 0, by_conversation = 0, old_provider = 0;
  std::int64_t counting = 0, resent = 0, hidden = 0, aborted = 0;  // call spans that record their attempts
  std::map<std::string, std::int64_t> providers;
  std::set<std::string> blind_scopes;  // scopes with unset, reasonless call spans and no reasons at all
};

void add_notes(const OtlpTally& t, ReadStats& stats) {
  if (t.counting > 0)
    stats.notes.push_back(fmt::format("{} model-call spans record their own attempts (http.request.method): {} of them "
                                      "carry http.request.resend_count, whose {} earlier attempts (the SDK's own "
                                      "retries, failed before the stream) count as bad requests of kind {}",
                                      t.counting, t.resent, t.hidden, kHiddenRetryKind));
  if (t.aborted > 0)
    stats.notes.push_back(fmt::format("{} model-call spans end with status unset and no stop or finish reason: streams "
                                      "the caller aborted, counted as faults of kind {}",
                                      t.aborted, kAbortedKind));
  for (const std::string& scope : t.blind_scopes)
    stats.notes.push_back(fmt::format("the spans of scope '{}' record no stop or finish reason: a stream the caller "
                                      "aborted cannot be told from a good one there",
                                      scope));
  if (t.attempts == 0 && t.counting == 0) {
    stats.notes.push_back("per-call outcomes only: retries inside a model-call span are not seen");
  } else if (t.attempts > 0) {
    stats.notes.push_back(fmt::format("{} HTTP attempts within {} model-call spans are the requests (http.request."
                                      "resend_count on {})",
                                      t.attempts, t.with_attempts, t.resend_given));
    if (t.with_attempts < t.chats)
      stats.notes.push_back(fmt::format("{} of {} model-call spans have no HTTP child spans: for those, per-call "
                                        "outcomes only",
                                        t.chats - t.with_attempts, t.chats));
  }
  stats.notes.push_back(t.by_conversation == t.chats ? "tasks: gen_ai.conversation.id"
                        : t.by_conversation == 0     ? "tasks: traceId"
                                                     : fmt::format("tasks: gen_ai.conversation.id on {} model-call "
                                                                   "spans, traceId on the other {}",
                                                                   t.by_conversation, t.chats - t.by_conversation));
  std::string providers;
  for (const auto& [name, n] : t.providers) providers += fmt::format("{}{} ({})", providers.empty() ? "" : ", ", name, n);
  stats.notes.push_back(providers.empty() ? "provider: not given (no gen_ai.provider.name or gen_ai.system)"
                                          : fmt::format("providers: {}", providers));
  if (t.old_provider > 0)
    stats.notes.push_back(fmt::format("provider from the older gen_ai.system attribute on {} spans", t.old_provider));
}

}  // namespace

ReadStats read_otlp(const std::string& text, const std::string& where, const RecordSink& sink) {
  ReadStats stats;
  stats.format = "otlp";
  const std::vector<Span> spans = read_spans(text, where);
  std::unordered_map<std::string, std::size_t> chats;  // traceId/spanId -> index
  for (std::size_t i = 0; i < spans.size(); ++i)
    if (spans[i].op == "chat") chats.emplace(spans[i].trace + "/" + spans[i].id, i);
  std::vector<std::vector<std::size_t>> attempts(spans.size());
  OtlpTally tally;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    if (s.op == "chat") continue;
    const auto parent = s.parent.empty() ? chats.end() : chats.find(s.trace + "/" + s.parent);
    if (s.http && parent != chats.end()) {
      require_start(s);
      attempts[parent->second].push_back(i);
    } else if (s.http) {
      add_skip(stats, "HTTP spans outside a model-call span");
    } else if (!s.op.empty()) {
      add_skip(stats, "gen_ai spans of another operation than chat");
    } else {
      add_skip(stats, "spans that are not model calls (no gen_ai.operation.name = chat)");
    }
  }
  // The scopes whose call spans record how a stream ended: there, one that
  // says nothing of it was aborted.
  std::set<std::string> with_reasons;
  for (const Span& s : spans)
    if (s.op == "chat" && s.says_reasons) with_reasons.insert(s.scope);
  std::vector<Record> records;
  for (std::size_t i = 0; i < spans.size(); ++i) {  // in file order, so ties sort the same every run
    const Span& chat = spans[i];
    if (chat.op != "chat") continue;
    require_start(chat);
    ++tally.chats;
    tally.by_conversation += !chat.conversation.empty();
    if (!chat.provider.empty()) ++tally.providers[chat.provider], tally.old_provider += chat.provider_old;
    auto& mine = attempts[i];
    if (mine.empty()) {
      // The SDK's retries inside the call, each failed before the stream,
      // then the call's own last attempt (stable sort: in this order).
      if (chat.method) ++tally.counting, tally.resent += chat.resend > 0;
      // Only the first attempt's start is known (the span's); the later
      // ones are kept out of the fit in seconds.
      for (std::int64_t k = 0; chat.method && k < chat.resend; ++k, ++tally.hidden)
        records.push_back(Record{task_of(chat), chat.start, true, kHiddenRetryKind, k == 0});
      Record own = request_record(chat, chat);
      own.timed = !(chat.method && chat.resend > 0);
      // Good by its attributes, yet neither OK nor with a stop or finish reason.
      if (!own.bad && !chat.ok && !chat.reason) {
        if (with_reasons.count(chat.scope) > 0) {
          own.bad = true, own.kind = kAbortedKind;
          ++tally.aborted;
        } else {
          tally.blind_scopes.insert(chat.scope);
        }
      }
      records.push_back(own);
      continue;
    }
    ++tally.with_attempts;
    add_skip(stats, "model-call spans replaced by their HTTP attempts");
    std::stable_sort(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) { return spans[a].resend < spans[b].resend; });
    for (std::size_t a : mine) {
      records.push_back(request_record(spans[a], chat));
      tally.attempts += 1;
      tally.resend_given += spans[a].has_resend;
    }
  }
  if (tally.chats > 0) add_notes(tally, stats);
  deliver_sorted(records, stats, sink);
  require_records(stats, where);
  return stats;
}

}  // namespace relsim::fit
