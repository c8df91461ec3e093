// The shared scratchpad (scratchpad.hpp): versions, compare-and-set, and
// an ordered listing by prefix.
#include "relsim/tools/scratchpad.hpp"

namespace relsim::tools {

ScratchEntry Scratchpad::get(std::string_view key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? ScratchEntry{} : it->second;
}

ScratchWrite Scratchpad::put(std::string_view key, ScratchEntry entry, ScratchEntry& previous) {
  return cas(key, get(key).version, std::move(entry), previous);
}

ScratchWrite Scratchpad::cas(std::string_view key, std::uint64_t expected, ScratchEntry entry, ScratchEntry& previous) {
  auto it = entries_.find(key);
  previous = it == entries_.end() ? ScratchEntry{} : it->second;
  if (previous.version != expected) return ScratchWrite::conflict;
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxScratchKeys) return ScratchWrite::full;
    it = entries_.emplace(std::string(key), ScratchEntry{}).first;
  }
  entry.version = previous.version + 1;
  it->second = std::move(entry);
  return ScratchWrite::stored;
}

std::vector<std::string> Scratchpad::list(std::string_view prefix, std::size_t limit, bool& more) const {
  std::vector<std::string> keys;
  more = false;
  for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.starts_with(prefix); ++it) {
    if (keys.size() == limit) {
      more = true;
      break;
    }
    keys.push_back(it->first);
  }
  return keys;
}

}  // namespace relsim::tools
