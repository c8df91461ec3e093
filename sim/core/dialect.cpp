// The wire dialects' names (dialect.hpp).
#include "relsim/core/dialect.hpp"

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

Dialect parse_dialect(std::string_view name) {
  if (name == "anthropic") return Dialect::anthropic;
  if (name == "openai") return Dialect::openai;
  throw InputError(fmt::format("--dialect '{}' is not a dialect: use anthropic or openai", name.substr(0, 100)));
}

}  // namespace relsim
