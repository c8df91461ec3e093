#pragma once
// Internal to the server: the bytes of the OpenAI dialect (POST
// /v1/chat/completions), beside server_wire.hpp's Anthropic ones, in the
// same shapes: a stream script per entry, an error body, the status of an
// http_* fault kind. docs/wire.md ("The OpenAI dialect") specifies them side
// by side with the Anthropic ones.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "relsim/core/http_text.hpp"
#include "server/server_wire.hpp"
#include "server/whole_fault.hpp"

namespace relsim::wire::openai {

// A chunk of a chat.completion stream: `data: JSON\n\n` (no event name).
using http_text::data_event;
inline constexpr std::string_view kDone = "data: [DONE]\n\n";

// The stream of an ok entry or an in-stream fault kind: a first chunk with
// the assistant's role, two content chunks, a last one with finish_reason
// "stop", then data: [DONE]; the faults break it as docs/wire.md says. With
// `usage` (the request's stream_options.include_usage) every chunk carries
// "usage": null and a chunk with no choices and the usage of a request of
// `body_bytes` comes before [DONE], as OpenAI sends them.
StreamScript stream_script(const ScriptEntry& entry, std::int64_t task, std::int64_t index, bool usage = false,
                           std::size_t body_bytes = 0);

// The reply to a request that does not stream ("stream" absent or false):
// one chat.completion object, application/json, broken as whole_fault.hpp
// says.
WholeReply whole_reply(const ScriptEntry& entry, std::int64_t task, std::int64_t index, std::size_t body_bytes);

// The chunk of a `malformed` fault: data that is not JSON, its id `id`.
std::string malformed_chunk(std::string_view id);
// The chunk of an `overloaded` fault: an error object as a stream's data.
std::string overloaded_chunk();

// OpenAI's error body, {"error":{"message","type","param":null,"code"}},
// for an error the server names by its Anthropic type (rate_limit_error,
// overloaded_error, ...): the type and code OpenAI gives such an error.
std::string error_body(std::string_view anthropic_type, std::string_view message);

// A duration as OpenAI's rate-limit headers write it: "20ms", "1s", "1.5s",
// "6m0s", "1h2m3s".
std::string duration(double seconds);

std::string completion_id(std::int64_t task, std::int64_t index);  // chatcmpl-relsim_{task}_{k}

}  // namespace relsim::wire::openai
