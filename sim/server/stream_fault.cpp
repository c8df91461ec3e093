// Breaking a real event stream as an in-stream fault says (stream_fault.hpp).
#include "server/stream_fault.hpp"

#include <algorithm>
#include <utility>

#include "server/server_wire.hpp"

namespace relsim::mock {
namespace {

// The end of the first complete event in `text` (past its blank line), or npos.
std::size_t event_end(std::string_view text) {
  const std::size_t lf = text.find("\n\n");
  const std::size_t crlf = text.find("\r\n\r\n");
  if (lf == std::string_view::npos && crlf == std::string_view::npos) return std::string_view::npos;
  if (crlf == std::string_view::npos || (lf != std::string_view::npos && lf < crlf)) return lf + 2;
  return crlf + 4;
}

// The mock's own malformed event (docs/wire.md): its JSON breaks off.
const std::string& malformed_event() {
  static const std::string e =
      wire::sse_event("content_block_delta", R"({"type": "content_block_delta", "index": 0, "delta": {)");
  return e;
}

}  // namespace

std::string_view sse_event_name(std::string_view event) {
  std::size_t at = 0;
  while (at < event.size()) {
    const std::size_t nl = std::min(event.find('\n', at), event.size());
    std::string_view line = event.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("event:", 0) == 0) {
      line.remove_prefix(6);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      return line;
    }
    at = nl + 1;
  }
  return {};
}

std::vector<StreamFault::Step> StreamFault::feed(std::string_view bytes) {
  std::vector<Step> out;
  if (done_) return out;
  if (!kind_) {
    out.push_back({std::string(bytes)});
    return out;
  }
  pending_.append(bytes);
  for (std::size_t end = event_end(pending_); end != std::string::npos && !done_; end = event_end(pending_)) {
    std::string event = pending_.substr(0, end);
    pending_.erase(0, end);
    for (Step& s : on_event(std::move(event))) out.push_back(std::move(s));
  }
  return out;
}

std::vector<StreamFault::Step> StreamFault::on_event(std::string event) {
  const std::string_view name = sse_event_name(event);
  const std::size_t index = events_++;
  std::vector<Step> out;
  switch (*kind_) {
    case FaultKind::cut:
      out.push_back({std::move(event)});
      if (name == "content_block_delta") out.back().then = Then::cut, done_ = true;
      break;
    case FaultKind::no_stop:
      if (name != "message_stop") out.push_back({std::move(event)});
      break;
    case FaultKind::malformed:
      if (!acted_ && name == "content_block_delta") out.push_back({malformed_event()}), acted_ = true;
      out.push_back({std::move(event)});
      break;
    case FaultKind::overloaded:
      out.push_back({std::move(event)});
      out.push_back({wire::sse_event("error", wire::error_body("overloaded_error", "Overloaded")), Then::end});
      done_ = true;
      break;
    case FaultKind::stall:
      if (index == 2 && !acted_) out.push_back({"", Then::hold}), acted_ = true;
      out.push_back({std::move(event)});
      break;
    default:
      out.push_back({std::move(event)});
      break;
  }
  return out;
}

std::vector<StreamFault::Step> StreamFault::finish() {
  std::vector<Step> out;
  if (done_) return out;
  if (!pending_.empty()) out.push_back({std::exchange(pending_, {})});
  // A cut that found no delta still breaks the stream at its end.
  if (kind_ == FaultKind::cut) out.push_back({"", Then::cut});
  done_ = true;
  return out;
}

}  // namespace relsim::mock
