// The shared locks (lock_table.hpp): grants, expiry and release by token.
#include "relsim/tools/lock_table.hpp"

#include <fmt/format.h>

namespace relsim::tools {

LockAcquire LockTable::acquire(std::string_view name, const std::string& tenant, const std::string& agent,
                               std::int64_t ttl_ms, std::int64_t now_ms, LockHolder& holder, LockHolder& previous) {
  auto it = locks_.find(name);
  previous = {};
  if (it != locks_.end() && !it->second.expired_at(now_ms)) {
    holder = it->second;
    return LockAcquire::busy;
  }
  const bool expired = it != locks_.end();
  if (expired) previous = it->second;
  if (!expired && locks_.size() >= kMaxLocks)  // expired locks make room first
    std::erase_if(locks_, [&](const auto& entry) { return entry.second.expired_at(now_ms); });
  if (!expired && locks_.size() >= kMaxLocks) return LockAcquire::full;
  holder = {fmt::format("{}#{}", name, ++grants_), tenant, agent, now_ms, ttl_ms};
  if (expired)
    it->second = holder;
  else
    locks_.emplace(std::string(name), holder);
  return expired ? LockAcquire::took_expired : LockAcquire::acquired;
}

LockRelease LockTable::release(std::string_view name, std::string_view token, std::int64_t now_ms) {
  const auto it = locks_.find(name);
  if (it == locks_.end() || it->second.token != token) return LockRelease::not_held;
  const bool expired = it->second.expired_at(now_ms);
  locks_.erase(it);
  return expired ? LockRelease::expired : LockRelease::released;
}

bool LockTable::held_by(std::string_view agent, std::int64_t now_ms) const {
  for (const auto& [name, holder] : locks_)
    if (holder.agent == agent && !holder.expired_at(now_ms)) return true;
  return false;
}

std::vector<std::pair<std::string, LockHolder>> LockTable::held(std::int64_t now_ms) const {
  std::vector<std::pair<std::string, LockHolder>> out;
  for (const auto& [name, holder] : locks_)
    if (!holder.expired_at(now_ms)) out.emplace_back(name, holder);
  return out;
}

}  // namespace relsim::tools
