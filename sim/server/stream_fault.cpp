// Breaking a real event stream as an in-stream fault says (stream_fault.hpp).
#include "server/stream_fault.hpp"

#include <algorithm>
#include <utility>

#include "relsim/core/json.hpp"
#include "server/openai_wire.hpp"
#include "server/server_wire.hpp"

namespace relsim::mock {
namespace {

// The mock's own malformed event (docs/wire.md): its JSON breaks off.
const std::string& malformed_event() {
  static const std::string e =
      wire::sse_event("content_block_delta", R"({"type": "content_block_delta", "index": 0, "delta": {)");
  return e;
}

// The values of an event's `NAME:` lines, in order (one leading space
// dropped, as SSE says).
std::vector<std::string_view> field_values(std::string_view event, std::string_view name) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; at < event.size();) {
    const std::size_t nl = std::min(event.find('\n', at), event.size());
    std::string_view line = event.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > name.size() && line.substr(0, name.size()) == name && line[name.size()] == ':') {
      line.remove_prefix(name.size() + 1);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      out.push_back(line);
    }
    at = nl + 1;
  }
  return out;
}

// What an OpenAI chunk is to the faults: [DONE], one with a finish_reason,
// one with content, or another (the role's, a usage chunk, an error).
enum class Chunk { done, finish, content, other };

Chunk chunk_of(std::string_view event) {
  const std::string data = sse_data(event);
  if (data == "[DONE]") return Chunk::done;
  const Json j = Json::parse(data, nullptr, false);
  if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return Chunk::other;
  const Json& choice = j["choices"][0];
  if (!choice.is_object()) return Chunk::other;
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) return Chunk::finish;
  const Json* content = choice.contains("delta") && choice["delta"].is_object() && choice["delta"].contains("content")
                            ? &choice["delta"]["content"]
                            : nullptr;
  return content && content->is_string() && !content->get_ref<const std::string&>().empty() ? Chunk::content
                                                                                             : Chunk::other;
}

}  // namespace

std::string sse_data(std::string_view event) {
  std::string out;
  bool first = true;
  for (const std::string_view v : field_values(event, "data")) {
    if (!std::exchange(first, false)) out += '\n';
    out += v;
  }
  return out;
}

std::string_view sse_event_name(std::string_view event) {
  const std::vector<std::string_view> names = field_values(event, "event");
  return names.empty() ? std::string_view() : names.front();
}

std::vector<StreamFault::Step> StreamFault::feed(std::string_view bytes) {
  std::vector<Step> out;
  if (done_) return out;
  if (!kind_) {
    out.push_back({std::string(bytes)});
    return out;
  }
  pending_.append(bytes);
  for (std::size_t end = http_text::sse_event_end(pending_); end != std::string::npos && !done_;
       end = http_text::sse_event_end(pending_)) {
    std::string event = pending_.substr(0, end);
    pending_.erase(0, end);
    for (Step& s : on_event(std::move(event))) out.push_back(std::move(s));
  }
  return out;
}

// One event, whichever the dialect: what marks the first content (a
// content_block_delta, a chunk with content), the stop the no_stop fault
// drops (message_stop, a chunk with a finish_reason), where a stall holds
// (before event 2, after message_start and content_block_start; before
// event 1, after the role's chunk) and the bytes a fault puts in.
std::vector<StreamFault::Step> StreamFault::on_event(std::string event) {
  const bool openai = dialect_ == Dialect::openai;
  const Chunk chunk = openai ? chunk_of(event) : Chunk::other;
  const std::string_view name = openai ? std::string_view() : sse_event_name(event);
  const bool content = openai ? chunk == Chunk::content : name == "content_block_delta";
  const bool stop = openai ? chunk == Chunk::finish : name == "message_stop";
  const std::size_t index = events_++;
  std::vector<Step> out;
  switch (*kind_) {
    case FaultKind::cut:
      out.push_back({std::move(event)});
      if (content) out.back().then = Then::cut, done_ = true;
      break;
    case FaultKind::no_stop:
      if (!stop) out.push_back({std::move(event)});
      break;
    case FaultKind::malformed:
      if (!acted_ && content)
        out.push_back({openai ? wire::openai::malformed_chunk("chatcmpl-relsim") : malformed_event()}), acted_ = true;
      out.push_back({std::move(event)});
      break;
    case FaultKind::overloaded:
      out.push_back({std::move(event)});
      out.push_back({openai ? wire::openai::overloaded_chunk()
                            : wire::sse_event("error", wire::error_body("overloaded_error", "Overloaded")),
                     Then::end});
      done_ = true;
      break;
    case FaultKind::stall:
      if (index == (openai ? 1u : 2u) && !acted_) out.push_back({"", Then::hold}), acted_ = true;
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
