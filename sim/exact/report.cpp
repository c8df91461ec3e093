#include "relsim/exact/report.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace relsim {

Json exact_json(const Model& model, const Policy& policy, const ExactResult& result) {
  Json j = model_json(model, policy);
  j["p0"] = model.p < 1.0 ? Json(model.p0()) : Json(nullptr);
  j["independent"] = independent_success(model.p, policy);
  j["success"] = result.success;
  j["log10_success"] = result.log10_success;
  j["env_error"] = result.env_error;
  j["mean_requests"] = result.mean_requests;
  j["max_requests"] = result.max_requests;
  j["policy"] = std::string(to_string(policy.kind));
  if (policy.kind != PolicyKind::simple) j["s"] = policy.s;
  if (policy.kind == PolicyKind::budgeted) j["B"] = policy.B;
  Json outcomes = Json::object();
  for (int o = 0; o < kOutcomeClasses; ++o)
    if (result.outcomes[static_cast<std::size_t>(o)] > 0.0 || o == 0)
      outcomes[outcome_class(o).name()] = result.outcomes[static_cast<std::size_t>(o)];
  j["outcomes"] = std::move(outcomes);
  j["wrong"] = result.wrong;
  j["method"] = result.method;
  j["distribution_complete"] = result.distribution_complete;
  j["pruned_mass"] = result.pruned_mass;
  Json bins = Json::array();
  for (const auto& bin : result.requests)
    bins.push_back(Json{{"requests", bin.requests}, {"outcome", std::string(to_string(bin.outcome))},
                        {"probability", bin.probability}});
  j["requests"] = std::move(bins);
  return j;
}

std::string exact_table(const Model& model, const Policy& policy, const ExactResult& result, int max_rows) {
  std::string s;
  const auto row = [&](std::string_view name, const std::string& value) {
    s += fmt::format("  {:<22} {}\n", name, value);
  };
  s += fmt::format("relsim exact ({})\n", result.method);
  row("model", model.independent() ? fmt::format("independent, p = {}", model.p)
                                   : fmt::format("bursty, p = {}, q = {}, p0 = {:.6g}", model.p, model.q, model.p0()));
  row("silent steps", fmt::format("b = {}, g = {}", model.b, model.g));
  row("chain scope", std::string(to_string(model.chain)));
  row("policy", describe(policy));
  row("P(success)", fmt::format("{:.12g}", result.success));
  row("log10 P(success)", fmt::format("{:.12g}", result.log10_success));
  row("P(env_error)", fmt::format("{:.12g}", result.env_error));
  row("independent formula", fmt::format("{:.12g}  (1 - p^(r+1))^n", independent_success(model.p, policy)));
  row("P(wrong)", fmt::format("{:.12g}  (crash, hang, partial_done)", result.wrong));
  for (int o = 1; o < kOutcomeClasses; ++o)
    if (result.outcomes[static_cast<std::size_t>(o)] > 0.0)
      row("  " + outcome_class(o).name(), fmt::format("{:.12g}", result.outcomes[static_cast<std::size_t>(o)]));
  row("mean requests", fmt::format("{:.12g}", result.mean_requests));
  row("max requests", fmt::format("{}", result.max_requests));
  if (!result.distribution_complete) {
    s += "  requests per task: not computed (too large for an exact distribution here)\n";
    return s;
  }
  s += "  requests  outcome        probability\n";
  int shown = 0;
  for (const auto& bin : result.requests) {
    if (shown++ == max_rows) {
      s += fmt::format("  ... {} more bins (use --json for all)\n", result.requests.size() - static_cast<std::size_t>(max_rows));
      break;
    }
    s += fmt::format("  {:>8}  {:<13}  {:.12g}\n", bin.requests, to_string(bin.outcome), bin.probability);
  }
  return s;
}

}  // namespace relsim
