#pragma once
// The one strict number parser. Every number that reaches relsim as text (a
// command-line value, a CSV field, a plan file, an HTTP header) goes through
// parse_number: the whole text must be one number in C locale syntax, with
// nothing before or after it, and a floating-point value must be finite.
// The throwing forms name the value and what it should have been, for a
// one-line error at the edge.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace relsim {

template <class T>
std::optional<T> parse_number(std::string_view text) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  T value{};
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), last, value);
  if (text.empty() || ec != std::errc() || ptr != last) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) return std::nullopt;
  }
  return value;
}

// Throw InputError "WHAT = 'TEXT' is not ..." naming the valid range.
double parse_double(std::string_view text, std::string_view what);
long long parse_integer(std::string_view text, std::string_view what);
std::uint64_t parse_unsigned(std::string_view text, std::string_view what);

}  // namespace relsim
