#include "relsim/core/parse.hpp"

#include <limits>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

double parse_double(std::string_view text, std::string_view what) {
  if (const auto value = parse_number<double>(text)) return *value;
  throw InputError(fmt::format("{} = '{}' is not a finite number", what, text));
}

long long parse_integer(std::string_view text, std::string_view what) {
  if (const auto value = parse_number<long long>(text)) return *value;
  throw InputError(fmt::format("{} = '{}' is not an integer in [{}, {}]", what, text,
                               std::numeric_limits<long long>::min(), std::numeric_limits<long long>::max()));
}

std::uint64_t parse_unsigned(std::string_view text, std::string_view what) {
  if (const auto value = parse_number<std::uint64_t>(text)) return *value;
  throw InputError(fmt::format("{} = '{}' is not an integer in [0, {}]", what, text,
                               std::numeric_limits<std::uint64_t>::max()));
}

}  // namespace relsim
