// relsim proxy's recordings (records.hpp; the format: formats/recording.hpp,
// docs/replay.md): each exchange is a request of its task, in index order,
// good or bad by the upstream's own answer before any fault of the plan. A
// status other than 2xx is http_<status>; no status (the upstream failed
// before its headers) is slow_headers when it timed out, else reset; an event
// stream with an error event (an error object in OpenAI's chunks) is the
// kind its error type stands for (overloaded_error: overloaded), one whose
// data is not JSON is malformed, one that broke off is cut, one that ended
// without its stop (message_stop; a finish_reason) is no_stop. A whole,
// clean answer can still carry a content fault (docs/model.md): stopped at
// its token limit (max_tokens), a tool call whose arguments are not JSON
// (bad_tool_args), read as relsim's client reads them (MessageStream::wrong);
// a content event twice running is not taken for duplicate_event, as a real
// answer may repeat a token. An exchange
// a fault of the plan broke on its way to the client is skipped (the proxy
// stopped reading the upstream's answer there), and so is one the proxy
// stopped reading because its client went away (not read whole, no error).
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "fit/read_common.hpp"
#include "relsim/client/client.hpp"
#include "relsim/client/sse.hpp"
#include "relsim/core/error.hpp"
#include "relsim/formats/recording.hpp"

namespace relsim::fit {
namespace {

// The error type of an API error object ({"type": "error", "error": {"type": T}}
// or OpenAI's {"error": {"type": T, "code": C}}, where the code "overloaded"
// says what the Messages API's overloaded_error says), "error" when it names none.
std::string error_type(const Json& j) {
  const Json& e = j["error"];
  if (!e.is_object()) return "error";
  if (e.contains("code") && e["code"] == "overloaded") return "overloaded_error";
  return e.contains("type") && e["type"].is_string() ? e["type"].get<std::string>() : "error";
}

// What the upstream's event stream says of itself: nullopt when it is whole and good.
std::optional<std::string> stream_fault(const RecordedExchange& x) {
  std::string bytes;
  for (const auto& [ms, text] : x.events()) bytes += text;
  std::vector<SseEvent> events;
  try {
    events = parse_sse(bytes);
  } catch (const std::length_error&) {
    return "malformed";
  }
  bool stopped = false;
  for (const SseEvent& e : events) {
    if (x.dialect == Dialect::openai && e.data == "[DONE]") continue;
    const Json data = Json::parse(e.data, nullptr, false);
    if (data.is_discarded()) return "malformed";
    if (e.event == "error" || (x.dialect == Dialect::openai && data.is_object() && data.contains("error")))
      return fault_kind_of(data.is_object() && data.contains("error") ? error_type(data) : "error", 200);
    if (x.dialect == Dialect::anthropic) stopped = stopped || e.event == "message_stop";
    else if (data.is_object() && data.contains("choices") && data["choices"].is_array())
      for (const Json& c : data["choices"])
        stopped = stopped || (c.is_object() && c.contains("finish_reason") && c["finish_reason"].is_string());
  }
  if (!x.complete()) return "cut";  // broke off (read_recordings_of skips one the proxy stopped reading)
  if (!stopped) return "no_stop";
  MessageStream answer(x.dialect, AnswerChecks::none);
  try {
    for (const SseEvent& e : events) answer.on_event(e);
  } catch (const ClientError&) {
    return std::nullopt;  // nothing relsim's client would read past; the stream itself was whole
  }
  // A repeated event is not read as a fault here: a real answer may repeat a token.
  const std::optional<FaultKind> wrong = answer.wrong();
  if (wrong && *wrong != FaultKind::duplicate_event) return std::string(to_string(*wrong));
  return std::nullopt;
}

// A whole JSON answer's content fault: its stop at the token limit, or a
// tool call whose arguments are not JSON (OpenAI: a string that does not
// parse; the Messages API: an input that is not an object).
std::optional<std::string> whole_fault(const Json& j, Dialect dialect) {
  if (!j.is_object()) return std::nullopt;
  if (dialect == Dialect::anthropic) {
    if (j.contains("stop_reason") && j["stop_reason"] == "max_tokens") return "max_tokens";
    if (j.contains("content") && j["content"].is_array())
      for (const Json& block : j["content"])
        if (block.is_object() && block.contains("type") && block["type"] == "tool_use" &&
            !(block.contains("input") && block["input"].is_object()))
          return "bad_tool_args";
    return std::nullopt;
  }
  if (!j.contains("choices") || !j["choices"].is_array()) return std::nullopt;
  for (const Json& c : j["choices"]) {
    if (!c.is_object()) continue;
    if (c.contains("finish_reason") && c["finish_reason"] == "length") return "max_tokens";
    if (!c.contains("message") || !c["message"].is_object() || !c["message"].contains("tool_calls") ||
        !c["message"]["tool_calls"].is_array())
      continue;
    for (const Json& call : c["message"]["tool_calls"])
      if (call.is_object() && call.contains("function") && call["function"].is_object() &&
          call["function"].contains("arguments") && call["function"]["arguments"].is_string() &&
          !Json::accept(call["function"]["arguments"].get<std::string>()))
        return "bad_tool_args";
  }
  return std::nullopt;
}

std::optional<std::string> upstream_fault(const RecordedExchange& x) {
  if (!x.status)
    return x.error.find("timed out") != std::string::npos || x.error.find("timeout") != std::string::npos
               ? "slow_headers"
               : "reset";
  if (*x.status / 100 != 2) return fault_kind_of("", *x.status);
  if (x.event_stream()) return stream_fault(x);
  if (!x.complete()) return "cut";
  const Json body = Json::parse(x.body(), nullptr, false);
  if (body.is_discarded()) return "malformed";
  if (nested_deeper(body, 64)) return std::nullopt;
  return whole_fault(body, x.dialect);
}

}  // namespace

ReadStats read_recordings_of(const std::vector<RecordedExchange>& exchanges, const std::string& where,
                             const RecordSink& sink) {
  ReadStats stats;
  stats.format = "recording";
  stats.notes.push_back("relsim proxy's recordings: the upstream's own answers, before the plan's faults");
  std::vector<Record> records;
  for (const RecordedExchange& x : exchanges) {
    if (x.entry != "ok") {
      add_skip(stats, "exchanges a fault of the plan broke on their way to the client (entry not ok)");
      continue;
    }
    // Not read to its end, and the upstream did not break off: the client went away first.
    if (x.stopped_early()) {
      add_skip(stats, "exchanges the proxy stopped reading when its client went away");
      continue;
    }
    Record r;
    r.task = std::to_string(x.task);
    r.order = x.index;
    const std::optional<std::string> kind = upstream_fault(x);
    r.bad = kind.has_value();
    r.kind = !kind ? "" : kind->empty() ? "error" : *kind;  // an error type given as "" still names a fault
    records.push_back(std::move(r));
  }
  deliver_sorted(records, stats, sink);
  require_records(stats, where);
  return stats;
}

}  // namespace relsim::fit
