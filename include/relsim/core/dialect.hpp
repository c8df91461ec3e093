#pragma once
// The wire formats of a model API that relsim speaks
// (docs/wire.md): the Anthropic Messages API, and OpenAI's Chat
// Completions, which most OpenAI-compatible servers (vLLM, llama.cpp's
// server, Ollama, LiteLLM's proxy, gateways) copy.
#include <array>
#include <string_view>

#include "relsim/core/faults.hpp"

namespace relsim {

enum class Dialect { anthropic, openai };

// "anthropic" or "openai": the request log's "dialect".
constexpr std::string_view dialect_name(Dialect d) { return d == Dialect::openai ? "openai" : "anthropic"; }

// The dialect of that name ("anthropic" or "openai"); throws InputError
// naming the choices for any other (--dialect).
Dialect parse_dialect(std::string_view name);

// Where relsim's mock breaks a paced stream, in time (docs/wire.md, Each
// reply on the wire, and The OpenAI dialect): per in-stream kind, the share
// of a healthy stream's event delays that pass before the client can see
// the fault. Messages API (eight events): cut after 3 (message_start,
// content_block_start, the first delta), malformed at its bad event in the
// ping's place (3), overloaded's error event after message_start (2),
// no_stop's end after 7. OpenAI (five): cut after 2, malformed's bad chunk
// and overloaded's error after the role chunk (2), no_stop's [DONE] after 4.
// A stall holds its stream until the client gives up, and slow headers come
// at a timeout: 1 here (the fleet's served request lasts its whole
// request_seconds, as before). Other kinds: 0 (answered at once).
std::array<double, kFaultKinds> stream_break_share(Dialect dialect);

}  // namespace relsim
