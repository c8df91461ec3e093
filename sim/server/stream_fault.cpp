// Breaking a real event stream as an in-stream fault says (stream_fault.hpp).
#include "server/stream_fault.hpp"

#include <algorithm>
#include <utility>

#include "relsim/core/json.hpp"
#include "relsim/formats/answer_faults.hpp"
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
    case FaultKind::max_tokens:
    case FaultKind::bad_tool_args:
    case FaultKind::duplicate_event:
    case FaultKind::stall_first:
      on_content_event(std::move(event), content, index, out);
      break;
    default:
      out.push_back({std::move(event)});
      break;
  }
  return out;
}

// The content faults and stall_first (formats/answer_faults.hpp): a whole stream
// whose answer is wrong, or nothing after the headers until released.
void StreamFault::on_content_event(std::string event, bool content, std::size_t index, std::vector<Step>& out) {
  const bool openai = dialect_ == Dialect::openai;
  // Where the stop reason is: message_delta, the chunk with a finish_reason.
  const bool reason = openai ? chunk_of(event) == Chunk::finish : sse_event_name(event) == "message_delta";
  switch (*kind_) {
    case FaultKind::max_tokens:  // the first content, then no more, and the token limit's stop
      if (content) {
        if (!std::exchange(acted_, true)) out.push_back({std::move(event)});
        return;
      }
      out.push_back({reason ? answer_faults::with_stop(event, dialect_, "max_tokens", "length") : std::move(event)});
      return;
    case FaultKind::bad_tool_args:  // a tool call whose arguments are not JSON, before the stop
      if (const std::optional<std::size_t> next = answer_faults::index_after(event, dialect_))
        next_block_ = std::max(next_block_, *next);
      if (reason && !std::exchange(acted_, true)) {
        for (std::string& e : answer_faults::bad_tool_call(dialect_, next_block_, event)) out.push_back({std::move(e)});
        out.push_back({answer_faults::with_stop(event, dialect_, "tool_use", "tool_calls")});
        return;
      }
      out.push_back({std::move(event)});
      return;
    case FaultKind::duplicate_event:  // the first content event twice
      if (content && !std::exchange(acted_, true)) out.push_back({event});
      out.push_back({std::move(event)});
      return;
    default:  // stall_first: a hold before the first event
      if (index == 0 && !std::exchange(acted_, true)) out.push_back({"", Then::hold});
      out.push_back({std::move(event)});
      return;
  }
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
