#include "relsim/exact/solve.hpp"

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

std::string_view to_string(SolveParam param) {
  switch (param) {
    case SolveParam::r: return "r";
    case SolveParam::s: return "s";
    case SolveParam::b: return "b";
    case SolveParam::B: return "B";
  }
  return "?";
}

SolveParam parse_solve_param(std::string_view word) {
  if (word == "r") return SolveParam::r;
  if (word == "s") return SolveParam::s;
  if (word == "b") return SolveParam::b;
  if (word == "B") return SolveParam::B;
  throw InputError(fmt::format("solve = '{}' is not a parameter to solve for: use r, s, b or B", word));
}

SolveResult solve_for_target(SolveParam param, double target, std::int64_t low, std::int64_t limit,
                             const std::function<SolvePoint(std::int64_t)>& evaluate, bool only_low,
                             std::string note) {
  if (!(target > 0.0 && target <= 1.0))
    throw InputError(fmt::format("target = {} is out of range: it must be in (0, 1]", target));
  RELSIM_ASSERT(low <= limit);
  SolveResult out;
  out.param = param;
  out.target = target;
  out.low = low;
  out.limit = only_low ? low : limit;
  out.note = std::move(note);
  auto eval = [&](std::int64_t v) {
    ++out.evaluations;
    return evaluate(v);
  };
  auto meets = [&](const SolvePoint& p) { return p.success >= target; };
  SolvePoint first = eval(low);
  if (meets(first)) {
    out.found = first;
    return out;
  }
  // Bracket: fail < v, doubling the step, until a value meets the target or
  // the limit fails too.
  SolvePoint fail = first;
  std::optional<SolvePoint> pass;
  for (std::int64_t step = 1; fail.value < out.limit; step *= 2) {
    const SolvePoint p = eval(std::min(out.limit, fail.value + step));
    if (meets(p)) {
      pass = p;
      break;
    }
    fail = p;
  }
  if (!pass) {
    out.best_below = fail;
    return out;
  }
  // Bisect (fail, pass]: fail never meets, pass always does.
  while (pass->value - fail.value > 1) {
    const SolvePoint mid = eval(fail.value + (pass->value - fail.value) / 2);
    if (meets(mid)) pass = mid;
    else fail = mid;
  }
  out.found = pass;
  out.best_below = fail;
  return out;
}

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

}  // namespace relsim
