// Breaking an answer that is not a stream (whole_fault.hpp).
#include "server/whole_fault.hpp"

#include <optional>
#include <utility>

#include "relsim/core/json.hpp"
#include "relsim/formats/answer_faults.hpp"
#include "server/server_wire.hpp"

namespace relsim::wire {
namespace {

// The answer without its stop: finish_reason null in every choice that has
// one (OpenAI), stop_reason null (the Messages API); nullopt when there is
// none to drop.
std::optional<std::string> without_stop(const std::string& body, Dialect dialect) {
  Json j = Json::parse(body, nullptr, false);
  if (!j.is_object() || nested_deeper(j, kMaxWholeNesting)) return std::nullopt;
  bool dropped = false;
  if (dialect == Dialect::openai) {
    const auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array()) return std::nullopt;
    for (Json& c : *choices)
      if (c.is_object() && c.contains("finish_reason")) c["finish_reason"] = nullptr, dropped = true;
  } else if (j.contains("stop_reason")) {
    j["stop_reason"] = nullptr, dropped = true;
  }
  if (!dropped) return std::nullopt;
  return json_text(j);
}

}  // namespace

WholeReply break_whole(std::optional<FaultKind> kind, Dialect dialect, std::string body) {
  WholeReply w;
  w.body = std::move(body);
  w.content_length = w.body.size();
  if (!kind) return w;
  switch (*kind) {
    case FaultKind::cut:  // half the body its length announced, then the connection ends
      w.body.resize(w.body.size() / 2);
      w.clean_end = false;
      break;
    case FaultKind::no_stop:
      if (std::optional<std::string> cut_short = without_stop(w.body, dialect)) w.body = std::move(*cut_short);
      else w.broken = false;
      break;
    case FaultKind::malformed:  // a body of its announced length that is not JSON
      w.body.resize(w.body.size() / 2);
      break;
    case FaultKind::overloaded:  // the error a stream would have carried, as the whole 200 body
      w.body = error_body(dialect, "overloaded_error", "Overloaded");
      break;
    case FaultKind::stall:
    case FaultKind::stall_first:
      w.hold_before_body = true;
      break;
    case FaultKind::max_tokens:
    case FaultKind::bad_tool_args:
    case FaultKind::duplicate_event:
      if (std::optional<std::string> wrong = answer_faults::with_content_fault(w.body, dialect, *kind, kMaxWholeNesting))
        w.body = std::move(*wrong);
      else w.broken = false;
      break;
    default:
      break;
  }
  if (w.clean_end) w.content_length = w.body.size();
  return w;
}

}  // namespace relsim::wire
