#pragma once
// The semantic cache of the MCP tools server's shared tools
// (docs/contention.md, "Shared tools"): answers stored under a scope and the
// query that produced them, found again by a query that is close enough in
// meaning, as the caches in front of model APIs do. "Meaning" here is a
// deterministic embedding, so that a test can say in advance what hits:
// the query lowercased, every run of characters other than letters and
// digits made one space, padded with a space at each end; each of its
// character trigrams hashed (FNV-1a, 32 bits) into one of kEmbedDims
// counts; the counts scaled to unit length. Two queries' similarity is the
// cosine of their embeddings, in [0, 1].
//
// A lookup searches its scope only and returns the most similar entry if
// that is at least the threshold. The scope is what the agent writes: a
// cache is tenant-aware only if the agent puts the tenant in the scope, and
// an entry remembers the tenant that stored it, so a hit on another
// tenant's answer is seen (the wrong-tenant hit the contention suite
// counts).
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace relsim::tools {

inline constexpr std::size_t kEmbedDims = 256;
inline constexpr std::size_t kMaxCacheEntries = 20'000;  // over all scopes

using Embedding = std::array<float, kEmbedDims>;
Embedding embed(std::string_view text);
double similarity(const Embedding& a, const Embedding& b);

struct CacheEntry {
  std::string query, answer;
  std::string tenant, agent;  // who stored it
  Embedding embedding{};
};

struct CacheLookup {
  const CacheEntry* entry = nullptr;  // the most similar entry of the scope, if any
  double similarity = 0.0;            // its similarity
  bool hit = false;                   // similarity >= the threshold
};

class SemanticCache {
 public:
  // threshold in (0, 1]; the caller checks it.
  explicit SemanticCache(double threshold) : threshold_(threshold) {}
  double threshold() const { return threshold_; }

  // Stores an entry (false: the cache holds kMaxCacheEntries already).
  bool put(std::string_view scope, CacheEntry entry);
  CacheLookup get(std::string_view scope, std::string_view query) const;
  std::size_t size() const { return size_; }

 private:
  double threshold_;
  std::unordered_map<std::string, std::vector<CacheEntry>> scopes_;
  std::size_t size_ = 0;
};

}  // namespace relsim::tools
