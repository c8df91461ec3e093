// libFuzzer target: the known-values CSV reader (known_values.hpp,
// parse_known_values) on arbitrary text. InputError is its answer to bad
// input; anything else escaping, a crash or a sanitizer report is a bug. A
// row it accepts must be a valid model and policy with its numbers in range.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "relsim/core/error.hpp"
#include "relsim/sweep/known_values.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const relsim::KnownValue& kv : relsim::parse_known_values(text, "fuzz.csv")) {
      relsim::validate(kv.model);
      relsim::validate(kv.policy);
      if (!(kv.expected >= 0.0 && kv.expected <= 1.0 && kv.tolerance >= 0.0 && kv.tolerance < 1.0)) std::abort();
      if (kv.line < 1) std::abort();
    }
  } catch (const relsim::InputError&) {
  }
  return 0;
}
