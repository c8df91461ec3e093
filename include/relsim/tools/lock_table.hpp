#pragma once
// The locks of the MCP tools server's shared tools (docs/contention.md,
// "Shared tools"): named, held by one agent at a time, with a time to live.
// Taking a lock never waits: a busy lock says who holds it and for how
// long, and the agent decides whether to try again. A lock taken with a TTL
// expires that many milliseconds after it was taken, and the next agent to
// ask gets it (an expired takeover); a lock taken with TTL 0 never expires,
// so an agent that dies holding it blocks every other agent for good. A
// release names the token its acquire returned; a release after the TTL
// finds the lock expired (the holder ran past its TTL, and another agent
// may have been inside the same section meanwhile).
//
// Times are the caller's milliseconds (the server's clock since start), so
// a test can drive them.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace relsim::tools {

inline constexpr std::int64_t kMaxLockTtlMs = 3'600'000;
inline constexpr std::size_t kMaxLocks = 100'000;

struct LockHolder {
  std::string token;          // "NAME#k", k counting every grant of any lock from 1
  std::string tenant, agent;
  std::int64_t taken_ms = 0;
  std::int64_t ttl_ms = 0;    // 0: no expiry
  bool expired_at(std::int64_t now_ms) const { return ttl_ms > 0 && now_ms >= taken_ms + ttl_ms; }
};

enum class LockAcquire { acquired, took_expired, busy, full };
enum class LockRelease { released, expired, not_held };

class LockTable {
 public:
  // `holder` is the new holder (acquired, took_expired: the expired one is
  // in `previous`) or the one that keeps it (busy).
  LockAcquire acquire(std::string_view name, const std::string& tenant, const std::string& agent, std::int64_t ttl_ms,
                      std::int64_t now_ms, LockHolder& holder, LockHolder& previous);
  // Releases when `token` holds the lock: released, or expired if its TTL
  // had passed (the lock is freed either way); not_held otherwise.
  LockRelease release(std::string_view name, std::string_view token, std::int64_t now_ms);
  // The locks held now (not expired): name and holder, for the run's report.
  std::vector<std::pair<std::string, LockHolder>> held(std::int64_t now_ms) const;
  // Whether `agent` holds a lock now (not expired).
  bool held_by(std::string_view agent, std::int64_t now_ms) const;

 private:
  std::map<std::string, LockHolder, std::less<>> locks_;
  std::uint64_t grants_ = 0;
};

}  // namespace relsim::tools
