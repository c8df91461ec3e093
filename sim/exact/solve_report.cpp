#include "relsim/exact/solve_report.hpp"

#include <optional>

#include <fmt/format.h>

namespace relsim {

namespace {

Json point_json(const std::optional<SolvePoint>& p) {
  if (!p) return nullptr;
  return Json{{"value", p->value}, {"success", p->success}, {"mean_requests", p->mean_requests}};
}

}  // namespace

Json solve_json(const SolveResult& result) {
  Json j = Json::object();
  j["solve"] = std::string(to_string(result.param));
  j["target"] = result.target;
  j["found"] = result.found.has_value();
  j["value"] = result.found ? Json(result.found->value) : Json(nullptr);
  j["success"] = result.found ? Json(result.found->success) : Json(nullptr);
  j["mean_requests"] = result.found ? Json(result.found->mean_requests) : Json(nullptr);
  j["below"] = point_json(result.best_below);
  j["low"] = result.low;
  j["limit"] = result.limit;
  j["evaluations"] = result.evaluations;
  j["note"] = result.note;
  return j;
}

std::string solve_words(const SolveResult& result) {
  const std::string_view name = to_string(result.param);
  std::string s;
  if (result.found) {
    s += fmt::format("  smallest {} with P(success) >= {}: {} = {} (P(success) {:.6g}, mean requests {:.6g})\n", name,
                     result.target, name, result.found->value, result.found->success, result.found->mean_requests);
    if (result.best_below)
      s += fmt::format("  {} = {} falls short: P(success) {:.6g}\n", name, result.best_below->value,
                       result.best_below->success);
    else
      s += fmt::format("  (the smallest value searched, {} = {}, already meets it)\n", name, result.low);
  } else {
    s += fmt::format("  no {} in [{}, {}] meets P(success) >= {}: {} = {} gives {:.6g}\n", name, result.low,
                     result.limit, result.target, name, result.best_below->value, result.best_below->success);
  }
  if (!result.note.empty()) s += fmt::format("  note: {}\n", result.note);
  s += fmt::format("  exact evaluations: {}\n", result.evaluations);
  return s;
}

Json solve_answer_json(Json head, const SolveResult& result) {
  head[std::string(to_string(result.param))] = result.found ? Json(result.found->value) : Json(nullptr);
  const Json solved = solve_json(result);
  for (auto it = solved.begin(); it != solved.end(); ++it) head[it.key()] = it.value();
  return head;
}

std::string solve_answer_text(const SolveResult& result, std::string model_words, const Policy& base) {
  const std::int64_t shown = result.found ? result.found->value : result.best_below->value;
  if (result.param == SolveParam::b) model_words += fmt::format(" (at b = {})", shown);
  return fmt::format("relsim exact --solve {}\n  model: {}\n  policy: {}{}\n{}", to_string(result.param), model_words,
                     describe(with_value(base, result.param, shown)), result.found ? "" : " (at the limit)",
                     solve_words(result));
}

std::string solve_model_words(const Model& model, SolveParam param) {
  std::string words = model.independent() ? fmt::format("independent, p = {}", model.p)
                                          : fmt::format("bursty, p = {}, q = {}", model.p, model.q);
  if (param != SolveParam::b) words += fmt::format(", b = {}", model.b);
  return words + fmt::format(", g = {}, {} chain", model.g, to_string(model.chain));
}

}  // namespace relsim
