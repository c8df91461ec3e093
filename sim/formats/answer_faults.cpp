// The content faults' bytes (answer_faults.hpp).
#include "relsim/formats/answer_faults.hpp"

#include <algorithm>

#include "relsim/core/http_text.hpp"
#include "relsim/core/json.hpp"

namespace relsim::answer_faults {
namespace {

using http_text::json_text;

constexpr std::size_t kMaxEventNesting = 64;

// The event's data as a JSON object; nullopt when it is not one.
std::optional<Json> object_of(std::string_view event) {
  Json j = Json::parse(http_text::sse_data(event), nullptr, false);
  if (!j.is_object() || nested_deeper(j, kMaxEventNesting)) return std::nullopt;
  return j;
}

}  // namespace

std::string with_stop(std::string_view event, Dialect dialect, std::string_view anthropic, std::string_view openai) {
  std::optional<Json> j = object_of(event);
  if (!j) return std::string(event);
  if (dialect == Dialect::openai) {
    const auto choices = j->find("choices");
    if (choices == j->end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object())
      return std::string(event);
    (*choices)[0]["finish_reason"] = openai;
    return http_text::data_event(json_text(*j));
  }
  const auto delta = j->find("delta");
  if (delta == j->end() || !delta->is_object()) return std::string(event);
  (*delta)["stop_reason"] = anthropic;
  return http_text::sse_event(http_text::sse_event_name(event), json_text(*j));
}

std::optional<std::size_t> index_after(std::string_view event, Dialect dialect) {
  const auto past = [](const Json& at) -> std::optional<std::size_t> {
    if (!at.is_number_unsigned() || at.get<std::size_t>() > (std::size_t{1} << 20)) return std::nullopt;
    return at.get<std::size_t>() + 1;
  };
  if (dialect == Dialect::anthropic) {
    if (http_text::sse_event_name(event) != "content_block_start") return std::nullopt;
    const std::optional<Json> j = object_of(event);
    if (!j || !j->contains("index")) return std::nullopt;
    return past((*j)["index"]);
  }
  const std::optional<Json> j = object_of(event);
  if (!j) return std::nullopt;
  const auto choices = j->find("choices");
  if (choices == j->end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) return std::nullopt;
  const Json& choice = (*choices)[0];
  if (!choice.contains("delta") || !choice["delta"].is_object() || !choice["delta"].contains("tool_calls") ||
      !choice["delta"]["tool_calls"].is_array())
    return std::nullopt;
  std::optional<std::size_t> out;
  for (const Json& call : choice["delta"]["tool_calls"])
    if (call.is_object() && call.contains("index"))
      if (const std::optional<std::size_t> next = past(call["index"])) out = std::max(out.value_or(0), *next);
  return out;
}

std::vector<std::string> bad_tool_call(Dialect dialect, std::size_t index, std::string_view finish_chunk) {
  if (dialect == Dialect::anthropic) {
    const auto delta = [index](std::string_view piece) {
      return http_text::sse_event("content_block_delta",
                                  json_text(Json{{"type", "content_block_delta"},
                                                 {"index", index},
                                                 {"delta", {{"type", "input_json_delta"}, {"partial_json", piece}}}}));
    };
    return {http_text::sse_event("content_block_start",
                                 json_text(Json{{"type", "content_block_start"},
                                                {"index", index},
                                                {"content_block",
                                                 {{"type", "tool_use"},
                                                  {"id", "toolu_relsim"},
                                                  {"name", kToolName},
                                                  {"input", Json::object()}}}})),
            delta(kArgsHead), delta(kArgsTail),
            http_text::sse_event("content_block_stop",
                                 json_text(Json{{"type", "content_block_stop"}, {"index", index}}))};
  }
  Json chunk = object_of(finish_chunk).value_or(Json{{"object", "chat.completion.chunk"}});
  const auto tool_chunk = [&chunk](Json call) {
    Json c = chunk;
    c["choices"] = Json::array({Json{{"index", 0}, {"delta", {{"tool_calls", Json::array({std::move(call)})}}},
                                     {"finish_reason", nullptr}}});
    return http_text::data_event(json_text(c));
  };
  return {tool_chunk(Json{{"index", index},
                          {"id", "call_relsim"},
                          {"type", "function"},
                          {"function", {{"name", kToolName}, {"arguments", kArgsHead}}}}),
          tool_chunk(Json{{"index", index}, {"function", {{"arguments", kArgsTail}}}})};
}

namespace {

// The bad tool call's arguments whole, as a whole answer carries them.
std::string bad_arguments() { return std::string(kArgsHead) + std::string(kArgsTail); }

// The first half of `text`, cut at a UTF-8 character's start.
std::string first_half(const std::string& text) {
  std::size_t n = text.size() / 2;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

// A message (the Messages API's) as a content fault says; false when it is not one.
bool rewrite_message(Json& j, FaultKind kind) {
  const auto content = j.find("content");
  if (content == j.end() || !content->is_array() || !j.contains("stop_reason")) return false;
  switch (kind) {
    case FaultKind::max_tokens:
      j["stop_reason"] = "max_tokens";
      for (Json& block : *content)
        if (block.is_object() && block.contains("type") && block["type"] == "text" && block.contains("text") &&
            block["text"].is_string())
          return block["text"] = first_half(block["text"].get<std::string>()), true;
      return true;
    case FaultKind::bad_tool_args:
      j["stop_reason"] = "tool_use";
      content->push_back(Json{{"type", "tool_use"},
                              {"id", "toolu_relsim"},
                              {"name", kToolName},
                              {"input", bad_arguments()}});
      return true;
    default:  // duplicate_event
      if (content->empty()) return false;
      content->insert(content->begin() + 1, Json((*content)[0]));
      return true;
  }
}

// A chat.completion as a content fault says, in its first choice; false when it is not one.
bool rewrite_completion(Json& j, FaultKind kind) {
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) return false;
  Json& choice = (*choices)[0];
  const auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) return false;
  Json& text = (*message)["content"];
  switch (kind) {
    case FaultKind::max_tokens:
      choice["finish_reason"] = "length";
      if (text.is_string()) text = first_half(text.get<std::string>());
      return true;
    case FaultKind::bad_tool_args:
      choice["finish_reason"] = "tool_calls";
      (*message)["tool_calls"] = Json::array({Json{
          {"id", "call_relsim"},
          {"type", "function"},
          {"function",
           {{"name", kToolName},
            {"arguments", bad_arguments()}}}}});
      return true;
    default:  // duplicate_event
      if (!text.is_string()) return false;
      text = text.get<std::string>() + text.get<std::string>();
      return true;
  }
}

}  // namespace

std::optional<std::string> with_content_fault(const std::string& body, Dialect dialect, FaultKind kind,
                                              std::size_t max_nesting) {
  Json j = Json::parse(body, nullptr, false);
  if (!j.is_object() || nested_deeper(j, max_nesting)) return std::nullopt;
  if (!(dialect == Dialect::openai ? rewrite_completion(j, kind) : rewrite_message(j, kind))) return std::nullopt;
  return json_text(j);
}

}  // namespace relsim::answer_faults
