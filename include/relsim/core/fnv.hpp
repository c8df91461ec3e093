#pragma once
// Header only: a hash this small is inlined where it is used.
// FNV-1a (Fowler, Noll, Vo) over bytes, in 32 and 64 bits: folds a text
// (a schedule's, a queue's name, a trigram) into a number, the same on
// every machine.
#include <cstdint>
#include <string_view>

namespace relsim {

constexpr std::uint32_t fnv1a32(std::string_view bytes) {
  std::uint32_t h = 0x811c9dc5u;
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 0x01000193u;
  return h;
}

constexpr std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

}  // namespace relsim
