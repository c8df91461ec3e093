#pragma once
// Machine-readable and readable output of results. JSON numbers are printed
// with 17 significant digits (enough to round-trip any double); non-finite
// values, such as log10 of a zero probability, become null.
#include <string>

#include <nlohmann/json.hpp>

#include "relsim/exact.hpp"

namespace relsim {

using Json = nlohmann::ordered_json;

// Serialises with 17 significant digits for every floating-point number.
std::string dump_json(const Json& value);

// The model's and policy's fields every JSON result starts with:
// p, q, r, n, b, g, chain.
Json model_json(const Model& model, const Policy& policy);

// The `relsim exact --json` object for one result.
Json exact_json(const Model& model, const Policy& policy, const ExactResult& result);

// The `relsim exact` table; at most `max_rows` rows of the distribution.
std::string exact_table(const Model& model, const Policy& policy, const ExactResult& result, int max_rows = 40);

}  // namespace relsim
