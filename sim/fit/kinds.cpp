// Fault kinds in logs: the one table from what a log says of a failed
// request to relsim's kinds (records.hpp), and the kind mix of a log
// (estimate.hpp): relsim's own kinds become a --kinds string the other
// commands take; the rest (HTTP statuses relsim does not inject, error types
// no kind stands for) are listed apart.
#include <array>
#include <utility>

#include <fmt/format.h>

#include "relsim/core/faults.hpp"
#include "relsim/fit/estimate.hpp"
#include "relsim/fit/records.hpp"

namespace relsim::fit {
namespace {

// Before the stream: the Messages API's error types (docs.anthropic.com,
// Errors), OpenAI's error types and codes (its error object's "type" and
// "code"), the official SDKs' error classes (TypeScript and Python, the same
// names in Anthropic's and OpenAI's) and the TypeScript SDK's span
// error.type, LiteLLM's exception classes (litellm/exceptions.py), Node's
// socket errors. OpenAI's insufficient_quota (a 429 no retry mends: the
// account is out of credit) is not a rate limit and stays apart. Inside the
// stream (a 2xx status), an overloaded_error event (OpenAI's error chunk:
// code "overloaded") names a kind of its own, and so does an answer stopped
// at its token limit (max_tokens).
constexpr std::array<std::pair<std::string_view, std::string_view>, 29> kBeforeTheStream{{
    {"overloaded_error", "http_529"},
    {"OverloadedError", "http_529"},
    {"rate_limit_error", "http_429"},
    {"rate_limit_exceeded", "http_429"},
    {"RateLimitError", "http_429"},
    {"api_error", "http_500"},
    {"server_error", "http_500"},
    {"InternalServerError", "http_500"},
    {"ServiceUnavailableError", "http_503"},
    {"invalid_request_error", "http_400"},
    {"BadRequestError", "http_400"},
    {"ContextWindowExceededError", "http_400"},
    {"ContentPolicyViolationError", "http_400"},
    {"AuthenticationError", "http_401"},
    {"PermissionDeniedError", "http_403"},
    {"NotFoundError", "http_404"},
    {"ConflictError", "http_409"},
    {"UnprocessableEntityError", "http_422"},
    {"connection_error", "reset"},
    {"APIConnectionError", "reset"},
    {"ECONNRESET", "reset"},
    {"ECONNREFUSED", "reset"},
    {"EPIPE", "reset"},
    {"client_timeout_error", "slow_headers"},
    {"APIConnectionTimeoutError", "slow_headers"},
    {"APITimeoutError", "slow_headers"},
    {"Timeout", "slow_headers"},
    {"ETIMEDOUT", "slow_headers"},
    {"timeout", "slow_headers"},
}};

bool is_status(std::string_view word) {
  return word.size() == 3 && word[0] >= '1' && word[0] <= '5' && word[1] >= '0' && word[1] <= '9' && word[2] >= '0' &&
         word[2] <= '9';
}

}  // namespace

std::string fault_kind_of(std::string_view word, std::optional<int> status) {
  if (status && *status / 100 != 2) return fmt::format("http_{}", *status);
  if (is_status(word)) return fmt::format("http_{}", word);
  // "anthropic.RateLimitError", "anthropic._exceptions.OverloadedError": the class's own name.
  const auto dot = word.rfind('.');
  const std::string_view name = dot == std::string_view::npos ? word : word.substr(dot + 1);
  if (status) {
    if (name == "overloaded_error" || name == "OverloadedError") return "overloaded";
    // An answer stopped at its token limit: the stop reason, the finish
    // reason, the openai SDK's error for it (LengthFinishReasonError).
    if (name == "max_tokens" || name == "length" || name == "LengthFinishReasonError") return "max_tokens";
    return std::string(word);
  }
  for (const auto& [said, kind] : kBeforeTheStream)
    if (name == said) return std::string(kind);
  return std::string(word);
}

KindMix kind_mix(const ChainCounts& counts) {
  KindMix mix;
  mix.counts = counts.kinds;
  double total = 0.0;
  for (const auto& [kind, n] : counts.kinds) total += double(n);
  for (const auto& [kind, n] : counts.kinds) mix.shares[kind] = total > 0.0 ? double(n) / total : 0.0;
  for (int k = 0; k < kFaultKinds; ++k) {  // enum order, as --kinds prints elsewhere
    const std::string name(to_string(static_cast<FaultKind>(k)));
    const auto it = counts.kinds.find(name);
    if (it == counts.kinds.end()) continue;
    mix.kinds_option += fmt::format("{}{}={}", mix.kinds_option.empty() ? "" : ",", name, it->second);
  }
  for (const auto& [kind, n] : counts.kinds) {
    bool relsim_kind = false;
    for (int k = 0; k < kFaultKinds; ++k) relsim_kind |= kind == to_string(static_cast<FaultKind>(k));
    if (!relsim_kind) mix.other.push_back(kind);
  }
  return mix;
}

}  // namespace relsim::fit
