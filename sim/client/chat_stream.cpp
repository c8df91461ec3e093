// The OpenAI dialect's events, folded into the answer (MessageStream in
// client.hpp; docs/wire.md "The OpenAI dialect"): data-only
// chat.completion.chunk events, the text from each choice's delta, done
// once a chunk gives a finish_reason; data: [DONE] ends the data.
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "relsim/client/client.hpp"

namespace relsim {

void MessageStream::on_chunk(const SseEvent& ev) {
  if (ev.data == "[DONE]") return;
  nlohmann::json data;
  try {
    data = nlohmann::json::parse(ev.data);
  } catch (const nlohmann::json::exception& e) {
    throw StreamError(FaultKind::malformed, fmt::format("a chunk's data is not JSON ({})", e.what()));
  }
  if (!data.is_object()) throw StreamError(FaultKind::malformed, "a chunk's data is not a JSON object");
  if (const auto error = data.find("error"); error != data.end()) {
    std::string code = "unknown";
    if (error->is_object())
      if (const auto c = error->find("code"); c != error->end() && c->is_string()) code = c->get<std::string>();
    throw StreamEventError(FaultKind::overloaded, fmt::format("the stream carried an error object: {}", code));
  }
  const auto choices = data.find("choices");
  if (choices == data.end() || !choices->is_array())
    throw StreamError(FaultKind::malformed, "a chunk without a choices array");
  if (choices->empty()) return;  // a usage chunk
  const nlohmann::json& choice = (*choices)[0];
  if (!choice.is_object()) throw StreamError(FaultKind::malformed, "a choice that is not an object");
  if (const auto delta = choice.find("delta"); delta != choice.end() && delta->is_object()) {
    if (const auto content = delta->find("content"); content != delta->end()) {
      if (content->is_string()) {
        note_content(ev.data, content->get_ref<const std::string&>());
        text_ += content->get<std::string>();
      } else if (!content->is_null()) throw StreamError(FaultKind::malformed, "a delta whose content is not a string");
    }
    if (const auto calls = delta->find("tool_calls"); calls != delta->end() && calls->is_array())
      for (const nlohmann::json& call : *calls) {
        if (!call.is_object()) continue;
        const auto at = call.find("index");
        const std::int64_t index = at != call.end() && at->is_number_integer() ? at->get<std::int64_t>() : 0;
        std::string& arguments = tools_[index];
        if (const auto f = call.find("function"); f != call.end() && f->is_object())
          if (const auto piece = f->find("arguments"); piece != f->end() && piece->is_string())
            arguments += piece->get<std::string>();
      }
  }
  if (const auto finish = choice.find("finish_reason"); finish != choice.end() && finish->is_string()) {
    stopped_ = true;
    if (*finish == "length") saw(FaultKind::max_tokens, "the answer stopped at its token limit (finish_reason length)");
    check_tool_arguments();
  }
}

}  // namespace relsim
