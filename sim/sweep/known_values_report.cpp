// What relsim check prints (known_values_report.hpp).
#include "relsim/sweep/known_values_report.hpp"

#include <fmt/format.h>

namespace relsim {
namespace {

// The row's model and policy, as the output names the case.
std::string known_value_case(const KnownValue& kv) {
  return fmt::format("p={} q={} r={} n={} b={} g={} chain={}", kv.model.p, kv.model.q, kv.policy.r, kv.policy.n,
                     kv.model.b, kv.model.g, to_string(kv.model.chain));
}

}  // namespace

Json known_values_json(const KnownValuesCheck& check) {
  Json results = Json::array();
  for (const KnownValueCheck& row : check.rows) {
    const KnownValue& kv = row.known;
    results.push_back(Json{{"line", kv.line}, {"case", known_value_case(kv)}, {"expected", kv.expected},
                           {"computed", row.computed}, {"abs_diff", row.abs_diff}, {"tolerance", kv.tolerance},
                           {"ok", row.ok}, {"source", kv.source}});
  }
  return Json{{"file", check.file}, {"method", check.method}, {"cases", check.rows.size()},
              {"misses", check.misses}, {"results", results}};
}

std::string known_value_miss_text(const std::string& file, const KnownValueCheck& row) {
  if (row.ok) return "";
  const KnownValue& kv = row.known;
  return fmt::format("MISS {}:{}: {}: computed {:.17g}, expected {:.17g}, |diff| {:.3g} > tolerance {:.3g}\n", file,
                     kv.line, known_value_case(kv), row.computed, kv.expected, row.abs_diff, kv.tolerance);
}

std::string known_values_summary_text(const KnownValuesCheck& check) {
  return fmt::format("{}: {} cases, {} passed, {} missed ({})\n", check.file, check.rows.size(),
                     static_cast<int>(check.rows.size()) - check.misses, check.misses, check.method);
}

}  // namespace relsim
