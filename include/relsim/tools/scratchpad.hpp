#pragma once
// The scratchpad store of the MCP tools server's shared tools
// (docs/contention.md, "Shared tools"): keys and values as agents write
// them, shared by every agent and tenant of the server. A key is stored
// exactly as written, so two tenants whose agents leave the tenant out of a
// key (`agent:notes` instead of `acme:agent:notes`) write the same entry:
// the store remembers which tenant and agent wrote each version, and says
// when a read or a write meets another tenant's entry (a collision).
//
// Every entry carries a version, 1 for the first write and one more for
// each later one; compare-and-set writes only when the caller names the
// current version (0: the key must be absent). A value written by a
// partial_write fault is kept with the first half of its text and marked
// partial; a read gives it back unmarked, as a real store would, and only
// the log says it was half written.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace relsim::tools {

inline constexpr std::size_t kMaxStateKey = 256;        // bytes of a key, a scope or a lock's name
inline constexpr std::size_t kMaxStateValue = 16384;    // bytes of a value, a query or an answer
inline constexpr std::size_t kMaxScratchKeys = 100'000;  // entries in the store

struct ScratchEntry {
  std::string value;
  std::uint64_t version = 0;  // 0: absent
  std::string tenant, agent;  // who wrote this version
  bool partial = false;       // written by a partial_write fault
};

// What a write did.
enum class ScratchWrite { stored, conflict, full };

class Scratchpad {
 public:
  // The entry (version 0 if absent).
  ScratchEntry get(std::string_view key) const;
  // Writes unconditionally (stored, or full when a new key would pass
  // kMaxScratchKeys). `previous` is the entry that was replaced.
  ScratchWrite put(std::string_view key, ScratchEntry entry, ScratchEntry& previous);
  // Writes only when the key's version is `expected` (0: absent): stored,
  // conflict (`previous` then holds the current entry) or full.
  ScratchWrite cas(std::string_view key, std::uint64_t expected, ScratchEntry entry, ScratchEntry& previous);
  // The keys that start with `prefix`, in order, at most `limit` of them;
  // `more` is set when there were more.
  std::vector<std::string> list(std::string_view prefix, std::size_t limit, bool& more) const;
  std::size_t size() const { return entries_.size(); }

 private:
  std::map<std::string, ScratchEntry, std::less<>> entries_;
};

}  // namespace relsim::tools
