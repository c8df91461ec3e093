#include "relsim/core/error.hpp"

#include <cstdlib>

#include <fmt/format.h>

namespace relsim {

void assertion_failed(const char* expr, const char* file, int line) {
  throw std::logic_error(fmt::format("assertion {} failed at {}:{}", expr, file, line));
}

namespace {
std::atomic<bool> abort_on_internal = false;
}

void abort_on_internal_errors() { abort_on_internal = true; }

void internal_error_caught() {
  if (abort_on_internal) std::abort();
}

}  // namespace relsim
