// The OpenAI dialect's bytes (openai_wire.hpp).
#include "server/openai_wire.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "relsim/core/json.hpp"

namespace relsim::wire::openai {
namespace {

// One chat.completion.chunk, as Json{...}.dump() would write it (the
// fields in this order; nothing in it needs escaping). `created` is 0: the
// mock's bytes carry no clock.
std::string chunk_event(std::string_view id, std::string_view delta, std::string_view finish_reason) {
  return data_event(fmt::format(R"({{"id":"{}","object":"chat.completion.chunk","created":0,"model":"{}",)"
                                R"("choices":[{{"index":0,"delta":{},"logprobs":null,"finish_reason":{}}}]}})",
                                id, kModel, delta, finish_reason));
}

struct OpenAiError {
  std::string_view type;
  std::string_view code;  // "": null
};

OpenAiError openai_error(std::string_view anthropic_type) {
  if (anthropic_type == "rate_limit_error") return {"requests", "rate_limit_exceeded"};
  if (anthropic_type == "overloaded_error") return {"server_error", "overloaded"};
  if (anthropic_type == "api_error") return {"server_error", ""};
  if (anthropic_type == "not_found_error") return {"invalid_request_error", "not_found"};
  if (anthropic_type == "authentication_error") return {"invalid_request_error", "invalid_api_key"};
  return {"invalid_request_error", ""};  // invalid_request_error, request_too_large
}

}  // namespace

std::string data_event(std::string_view data) { return fmt::format("data: {}\n\n", data); }

std::string malformed_chunk(std::string_view id) {
  return data_event(fmt::format(R"({{"id":"{}","object":"chat.completion.chunk","choices":[{{)", id));
}

std::string overloaded_chunk() { return data_event(error_body("overloaded_error", "Overloaded")); }

std::string completion_id(std::int64_t task, std::int64_t index) {
  return fmt::format("chatcmpl-relsim_{}_{}", task, index);
}

std::string error_body(std::string_view anthropic_type, std::string_view message) {
  const OpenAiError e = openai_error(anthropic_type);
  return json_text(Json{{"error",
                         {{"message", message},
                          {"type", e.type},
                          {"param", nullptr},
                          {"code", e.code.empty() ? Json(nullptr) : Json(e.code)}}}});
}

StreamScript stream_script(const ScriptEntry& entry, std::int64_t task, std::int64_t index) {
  const std::string id = completion_id(task, index);
  const std::string role = chunk_event(id, R"({"role":"assistant","content":""})", "null");
  const std::string text1 = chunk_event(id, R"({"content":"Hello from "})", "null");
  const std::string text2 = chunk_event(id, fmt::format(R"({{"content":"task {}."}})", task), "null");
  const std::string finish = chunk_event(id, "{}", R"("stop")");
  const std::string done(kDone);

  StreamScript s;
  s.gate_at = 1;  // before the first content chunk
  if (entry.reply == Reply::ok) {
    s.events = {role, text1, text2, finish, done};
    return s;
  }
  switch (entry.fault) {
    case FaultKind::cut:  // no [DONE]: the connection ends after the first content
      s.events = {role, text1};
      s.clean_end = false;
      break;
    case FaultKind::no_stop:  // the chunk with finish_reason is missing
      s.events = {role, text1, text2, done};
      break;
    case FaultKind::malformed:
      s.events = {role, malformed_chunk(id), text1, text2, finish, done};
      break;
    case FaultKind::overloaded:  // an error object as a chunk, then the end, without [DONE]
      s.events = {role, overloaded_chunk()};
      break;
    case FaultKind::stall:
      s.events = {role, text1, text2, finish, done};
      s.hold_at = 1;
      break;
    default:
      s.events = {role, text1, text2, finish, done};
      break;
  }
  s.gate_at = std::min(s.gate_at, s.events.size());
  return s;
}

namespace {

// The chat.completion of task `task`'s request `index`: its text, and
// finish_reason as given (JSON: "\"stop\"" or "null").
std::string completion(std::int64_t task, std::int64_t index, std::size_t body_bytes, std::string_view finish) {
  const auto prompt = static_cast<std::int64_t>(std::max<std::size_t>(1, body_bytes / 4));
  return fmt::format(R"({{"id":"{}","object":"chat.completion","created":0,"model":"{}","choices":[{{"index":0,)"
                     R"("message":{{"role":"assistant","content":"Hello from task {}."}},"logprobs":null,)"
                     R"("finish_reason":{}}}],"usage":{{"prompt_tokens":{},"completion_tokens":{},"total_tokens":{}}}}})",
                     completion_id(task, index), kModel, task, finish, prompt, kOutputTokens, prompt + kOutputTokens);
}

}  // namespace

WholeReply whole_reply(const ScriptEntry& entry, std::int64_t task, std::int64_t index, std::size_t body_bytes) {
  const std::string full = completion(task, index, body_bytes, R"("stop")");
  WholeReply w{full, full.size(), false, true};
  if (entry.reply == Reply::ok) return w;
  switch (entry.fault) {
    case FaultKind::cut:  // half the body its length announced, then the connection ends
      w.body = full.substr(0, full.size() / 2);
      w.clean_end = false;
      break;
    case FaultKind::no_stop:
      w.body = completion(task, index, body_bytes, "null");
      break;
    case FaultKind::malformed:  // a body of its announced length that is not JSON
      w.body = full.substr(0, full.size() / 2);
      break;
    case FaultKind::overloaded:  // the error the stream would have carried, as the whole 200 body
      w.body = error_body("overloaded_error", "Overloaded");
      break;
    case FaultKind::stall:
      w.hold_before_body = true;
      break;
    default:
      break;
  }
  if (w.clean_end) w.content_length = w.body.size();
  return w;
}

std::string duration(double seconds) {
  const auto ms = static_cast<std::int64_t>(std::llround(std::max(0.0, seconds) * 1000.0));
  if (ms < 1000) return fmt::format("{}ms", ms);
  const std::int64_t h = ms / 3'600'000, m = ms / 60'000 % 60;
  const double s = static_cast<double>(ms % 60'000) / 1000.0;
  std::string out;
  if (h > 0) out += fmt::format("{}h", h);
  if (h > 0 || m > 0) out += fmt::format("{}m", m);
  return out + fmt::format("{}s", s);
}

}  // namespace relsim::wire::openai
