#pragma once
// Known values for regression checks: a CSV with a header naming at least the
// columns p, q, r, n, b, g, chain, expected, tolerance (any order; further
// columns such as `source` are kept as text). Lines starting with '#' and
// blank lines are skipped. A file's check against the exact engine is
// check_known_values (relsim check; printed by known_values_report.hpp).
#include <functional>
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

// One known value against the exact engine.
struct KnownValueCheck {
  KnownValue known;
  double computed = 0.0;  // P(success)
  double abs_diff = 0.0;  // |computed - expected|
  bool ok = false;        // abs_diff <= tolerance
};

// A file of known values against the exact engine (relsim check).
struct KnownValuesCheck {
  std::string file;
  std::string method;  // matrix or enumerate
  std::vector<KnownValueCheck> rows;  // in the file's order
  int misses = 0;                     // rows not ok
};

// Reads `file` (read_known_values) and computes each row by `method`,
// matrix (exact_matrix) or enumerate (exact_enumerate), calling `checked`
// with each row as soon as it is computed (a miss can be shown before a
// later row fails or takes long). Throws InputError for another method and
// as read_known_values and the engines do.
KnownValuesCheck check_known_values(const std::string& file, const std::string& method,
                                    const std::function<void(const KnownValueCheck&)>& checked = {});

}  // namespace relsim
