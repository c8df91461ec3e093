#include "relsim/core/error.hpp"

#include <fmt/format.h>

namespace relsim {

void assertion_failed(const char* expr, const char* file, int line) {
  throw std::logic_error(fmt::format("assertion {} failed at {}:{}", expr, file, line));
}

}  // namespace relsim
