#pragma once
// Errors at the edges, assertions inside (STYLE.md rule 6).
//
// InputError is a value the user gave us that we refuse: its message is one
// line that names the value and the valid range, and `main` prints it and
// exits non-zero. RELSIM_ASSERT guards invariants of our own code; a failure
// is a bug in relsim, so it names the file and line.
#include <stdexcept>
#include <string>

namespace relsim {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line);

}  // namespace relsim

#define RELSIM_ASSERT(cond) \
  ((cond) ? static_cast<void>(0) : ::relsim::assertion_failed(#cond, __FILE__, __LINE__))
