#include "relsim/core/json.hpp"

#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace relsim {
namespace {

void dump(const Json& v, std::string& out) {
  switch (v.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ", ";
        first = false;
        out += Json(it.key()).dump();
        out += ": ";
        dump(it.value(), out);
      }
      out += '}';
      break;
    }
    case Json::value_t::array: {
      out += '[';
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        dump(v[i], out);
      }
      out += ']';
      break;
    }
    case Json::value_t::number_float: {
      const double x = v.get<double>();
      out += std::isfinite(x) ? fmt::format("{:.17g}", x) : std::string("null");
      break;
    }
    default:
      out += v.dump();
  }
}

}  // namespace

std::string dump_json(const Json& value) {
  std::string out;
  dump(value, out);
  return out;
}

namespace {

template <class AnyJson>
bool deeper(const AnyJson& value, std::size_t limit) {
  // Depth first with an explicit stack: the check itself must not recurse.
  std::vector<std::pair<const AnyJson*, std::size_t>> todo{{&value, 0}};
  while (!todo.empty()) {
    const auto [v, depth] = todo.back();
    todo.pop_back();
    if (!v->is_structured()) continue;
    if (depth >= limit) return true;
    for (const auto& child : *v) todo.emplace_back(&child, depth + 1);
  }
  return false;
}

}  // namespace

bool nested_deeper(const Json& value, std::size_t limit) { return deeper(value, limit); }
bool nested_deeper(const nlohmann::json& value, std::size_t limit) { return deeper(value, limit); }

std::string json_excerpt(const Json& value, std::size_t max_chars) {
  if (nested_deeper(value, kMaxExcerptDepth))
    return fmt::format("({} nested more than {} deep)", value.is_array() ? "an array" : "an object",
                       kMaxExcerptDepth);
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > max_chars) text = text.substr(0, max_chars) + "...";
  return text;
}

Json model_json(const Model& model, const Policy& policy) {
  Json j;
  j["p"] = model.p;
  j["q"] = model.q;
  j["r"] = policy.r;
  j["n"] = policy.n;
  j["b"] = model.b;
  j["g"] = model.g;
  j["chain"] = std::string(to_string(model.chain));
  return j;
}

}  // namespace relsim
