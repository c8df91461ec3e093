// The OpenAI dialect's bytes (openai_wire.hpp).
#include "server/openai_wire.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/json.hpp"

namespace relsim::wire::openai {
namespace {

// One chat.completion.chunk, as Json{...}.dump() would write it (the
// fields in this order; nothing in it needs escaping). `created` is 0: the
// mock's bytes carry no clock. `usage`: "" (not asked for), "null", or the
// usage object.
std::string chunk_event(std::string_view id, std::string_view choices, std::string_view usage) {
  return data_event(fmt::format(R"({{"id":"{}","object":"chat.completion.chunk","created":0,"model":"{}",)"
                                R"("choices":{}{}{}}})",
                                id, kModel, choices, usage.empty() ? "" : R"(,"usage":)", usage));
}

std::string choice(std::string_view delta, std::string_view finish_reason) {
  return fmt::format(R"([{{"index":0,"delta":{},"logprobs":null,"finish_reason":{}}}])", delta, finish_reason);
}

// The usage object of a reply to a request of `body_bytes`: a token per four
// bytes of the prompt, kOutputTokens of answer.
std::string usage_object(std::size_t body_bytes) {
  const auto prompt = static_cast<std::int64_t>(std::max<std::size_t>(1, body_bytes / 4));
  return fmt::format(R"({{"prompt_tokens":{},"completion_tokens":{},"total_tokens":{}}})", prompt, kOutputTokens,
                     prompt + kOutputTokens);
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

StreamScript stream_script(const ScriptEntry& entry, std::int64_t task, std::int64_t index, bool usage,
                           std::size_t body_bytes) {
  const std::string id = completion_id(task, index);
  const std::string_view no_usage = usage ? "null" : "";
  const std::string role = chunk_event(id, choice(R"({"role":"assistant","content":""})", "null"), no_usage);
  const std::string text1 = chunk_event(id, choice(R"({"content":"Hello from "})", "null"), no_usage);
  const std::string text2 = chunk_event(id, choice(fmt::format(R"({{"content":"task {}."}})", task), "null"), no_usage);
  const std::string finish = chunk_event(id, choice("{}", R"("stop")"), no_usage);
  // The chunks after the content: the finish, the usage if asked for, [DONE].
  std::vector<std::string> end{finish};
  if (usage) end.push_back(chunk_event(id, "[]", usage_object(body_bytes)));
  end.emplace_back(kDone);
  const auto with_end = [&](std::vector<std::string> events) {
    events.insert(events.end(), end.begin(), end.end());
    return events;
  };

  StreamScript s;
  s.gate_at = 1;  // before the first content chunk
  if (entry.reply == Reply::ok) {
    s.events = with_end({role, text1, text2});
    return s;
  }
  if (made_by_stream_fault(entry.fault))
    return faulted_script(with_end({role, text1, text2}), entry.fault, Dialect::openai, s.gate_at);
  switch (entry.fault) {
    case FaultKind::cut:  // no [DONE]: the connection ends after the first content
      s.events = {role, text1};
      s.clean_end = false;
      break;
    case FaultKind::no_stop:  // the chunk with finish_reason is missing
      s.events = with_end({role, text1, text2});
      s.events.erase(s.events.begin() + 3);  // the finish
      break;
    case FaultKind::malformed:
      s.events = with_end({role, malformed_chunk(id), text1, text2});
      break;
    case FaultKind::overloaded:  // an error object as a chunk, then the end, without [DONE]
      s.events = {role, overloaded_chunk()};
      break;
    case FaultKind::stall:
      s.events = with_end({role, text1, text2});
      s.hold_at = 1;
      break;
    default:
      s.events = with_end({role, text1, text2});
      break;
  }
  s.gate_at = std::min(s.gate_at, s.events.size());
  return s;
}

namespace {

// The chat.completion of task `task`'s request `index`: its text, and
// finish_reason as given (JSON: "\"stop\"" or "null").
std::string completion(std::int64_t task, std::int64_t index, std::size_t body_bytes, std::string_view finish) {
  return fmt::format(R"({{"id":"{}","object":"chat.completion","created":0,"model":"{}","choices":[{{"index":0,)"
                     R"("message":{{"role":"assistant","content":"Hello from task {}."}},"logprobs":null,)"
                     R"("finish_reason":{}}}],"usage":{}}})",
                     completion_id(task, index), kModel, task, finish, usage_object(body_bytes));
}

}  // namespace

WholeReply whole_reply(const ScriptEntry& entry, std::int64_t task, std::int64_t index, std::size_t body_bytes) {
  const bool broken = entry.reply == Reply::fault && streams(entry);
  return break_whole(broken ? std::optional<FaultKind>(entry.fault) : std::nullopt, Dialect::openai,
                     completion(task, index, body_bytes, R"("stop")"));
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
