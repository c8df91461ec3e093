#pragma once
// What relsim check prints of a known-values file against the exact engine
// (known_values.hpp): one JSON object (--json), or a MISS line per row that
// missed and a summary.
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/sweep/known_values.hpp"

namespace relsim {

// {"file", "method", "cases", "misses", "results": [{"line", "case",
// "expected", "computed", "abs_diff", "tolerance", "ok", "source"}]}.
Json known_values_json(const KnownValuesCheck& check);

// The row's "MISS FILE:LINE: ..." line, or "" when it passed.
std::string known_value_miss_text(const std::string& file, const KnownValueCheck& row);

// "FILE: N cases, K passed, M missed (METHOD)".
std::string known_values_summary_text(const KnownValuesCheck& check);

}  // namespace relsim
