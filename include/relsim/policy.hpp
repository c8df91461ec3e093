#pragma once
// The task and its retry policy (SPEC section 2). The simple policy: a task
// is n calls in sequence; each call makes up to r + 1 attempts and succeeds
// at its first good request; a call whose r + 1 requests are all bad ends the
// task with env_error.
#include <cstdint>
#include <string_view>

namespace relsim {

inline constexpr std::int64_t kMaxCalls = 100'000'000;
inline constexpr int kMaxRetries = 1000;

struct Policy {
  std::int64_t n = 1;  // model calls per task
  int r = 0;           // retries per call (r + 1 attempts)

  // Requests a task can send at most: n (r + 1).
  std::int64_t max_requests() const { return n * (static_cast<std::int64_t>(r) + 1); }
};

// Throws InputError naming the bad value and its valid range.
void validate(const Policy& policy);

enum class Outcome { done, env_error };
std::string_view to_string(Outcome outcome);

}  // namespace relsim
