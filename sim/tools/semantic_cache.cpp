// The shared semantic cache (semantic_cache.hpp): hashed character trigrams
// and a linear search of the scope.
#include "relsim/tools/semantic_cache.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>

#include "relsim/core/fnv.hpp"

namespace relsim::tools {
namespace {

// The text the trigrams are taken from: lowercase letters and digits, every
// other run made one space, a space at each end.
std::string normalized(std::string_view text) {
  std::string out = " ";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80)
      out += static_cast<char>(std::tolower(u));
    else if (out.back() != ' ')
      out += ' ';
  }
  if (out.back() != ' ') out += ' ';
  return out;
}

}  // namespace

Embedding embed(std::string_view text) {
  const std::string t = normalized(text);
  Embedding e{};
  for (std::size_t i = 0; i + 3 <= t.size(); ++i) e[fnv1a32(std::string_view(t).substr(i, 3)) % kEmbedDims] += 1.0f;
  double norm = 0.0;
  for (const float x : e) norm += double(x) * x;
  if (norm > 0.0)
    for (float& x : e) x = static_cast<float>(x / std::sqrt(norm));
  return e;
}

double similarity(const Embedding& a, const Embedding& b) {
  double dot = 0.0;
  for (std::size_t i = 0; i < kEmbedDims; ++i) dot += double(a[i]) * b[i];
  return std::min(1.0, std::max(0.0, dot));
}

bool SemanticCache::put(std::string_view scope, CacheEntry entry) {
  if (size_ >= kMaxCacheEntries) return false;
  entry.embedding = embed(entry.query);
  scopes_[std::string(scope)].push_back(std::move(entry));
  ++size_;
  return true;
}

CacheLookup SemanticCache::get(std::string_view scope, std::string_view query) const {
  CacheLookup best;
  const auto it = scopes_.find(std::string(scope));
  if (it == scopes_.end()) return best;
  const Embedding q = embed(query);
  // The most similar; of equals, the one stored first.
  for (const CacheEntry& entry : it->second) {
    const double s = similarity(q, entry.embedding);
    if (!best.entry || s > best.similarity) best = {&entry, s, false};
  }
  best.hit = best.entry && best.similarity >= threshold_;
  return best;
}

}  // namespace relsim::tools
