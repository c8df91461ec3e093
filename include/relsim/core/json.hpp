#pragma once
// JSON as relsim writes it. Numbers are printed with 17 significant digits
// (enough to round-trip any double); non-finite values, such as log10 of a
// zero probability, become null. Every JSON result starts with the model's
// and policy's fields (model_json).
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace relsim {

struct Model;
struct Policy;

using Json = nlohmann::ordered_json;

// Serialises with 17 significant digits for every floating-point number.
std::string dump_json(const Json& value);

// A value someone sent us, for a one-line error message: compact, invalid
// UTF-8 replaced, cut to about `max_chars`. Serialising recurses once per
// level of nesting, so a value nested deeper than kMaxExcerptDepth (a
// megabyte of '[' would overflow the stack) is named by its type and size.
inline constexpr std::size_t kMaxExcerptDepth = 32;
std::string json_excerpt(const Json& value, std::size_t max_chars = 200);

// Whether `value` nests objects and arrays more than `limit` deep (the
// value itself is level 1), checked without recursing: before anything
// that serialises it.
bool nested_deeper(const Json& value, std::size_t limit);
// The same for JSON with sorted keys (nlohmann::json: a canonical form, as a
// replay compares request bodies).
bool nested_deeper(const nlohmann::json& value, std::size_t limit);

// The model's and policy's fields every JSON result starts with:
// p, q, r, n, b, g, chain.
Json model_json(const Model& model, const Policy& policy);

}  // namespace relsim
