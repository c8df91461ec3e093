#pragma once
// The wire formats of a model API that relsim speaks
// (docs/wire.md): the Anthropic Messages API, and OpenAI's Chat
// Completions, which most OpenAI-compatible servers (vLLM, llama.cpp's
// server, Ollama, LiteLLM's proxy, gateways) copy.
#include <string_view>

namespace relsim {

enum class Dialect { anthropic, openai };

// "anthropic" or "openai": the request log's "dialect".
constexpr std::string_view dialect_name(Dialect d) { return d == Dialect::openai ? "openai" : "anthropic"; }

// The dialect of that name ("anthropic" or "openai"); throws InputError
// naming the choices for any other (--dialect).
Dialect parse_dialect(std::string_view name);

}  // namespace relsim
