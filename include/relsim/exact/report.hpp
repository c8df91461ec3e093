#pragma once
// The exact engine's results as `relsim exact` prints them: one JSON object
// (--json) or a readable table.
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/exact/exact.hpp"

namespace relsim {

// The `relsim exact --json` object for one result.
Json exact_json(const Model& model, const Policy& policy, const ExactResult& result);

// The `relsim exact` table; at most `max_rows` rows of the distribution.
std::string exact_table(const Model& model, const Policy& policy, const ExactResult& result, int max_rows = 40);

}  // namespace relsim
