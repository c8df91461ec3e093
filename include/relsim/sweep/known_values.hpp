#pragma once
// Known values for regression checks: a CSV with a header naming at least the
// columns p, q, r, n, b, g, chain, expected, tolerance (any order; further
// columns such as `source` are kept as text). Lines starting with '#' and
// blank lines are skipped.
#include <string>
#include <vector>

#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"

namespace relsim {

struct KnownValue {
  int line = 0;  // 1-based line in the file
  Model model;
  Policy policy;
  double expected = 0.0;   // expected P(success)
  double tolerance = 0.0;  // allowed |computed - expected|
  std::string source;      // where the value comes from
};

// Strict: an unknown chain word, a malformed or out-of-range number, a missing
// column or a row with the wrong number of fields throws InputError naming
// the file, the line and the value.
std::vector<KnownValue> read_known_values(const std::string& path);
// The same on the file's text; `where` stands for the file in messages.
std::vector<KnownValue> parse_known_values(const std::string& text, const std::string& where);

}  // namespace relsim
