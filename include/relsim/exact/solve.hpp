#pragma once
// relsim exact --target T --solve r|s|b|B (docs/model.md, Solving for a
// target): the smallest value of one parameter whose exact P(success) meets
// a target, found by bracketing and bisection over the exact engine.
//
// The search relies on P(success) never falling as the value grows, which
// holds for r, s and B (a call gets more attempts; every attempt it had
// before meets the same chain) and for b when q >= p (the retry's P(bad) =
// p + (1 - p)(q - p0)^(1+b) falls towards p). For q < p that power
// alternates in sign, so b = 0 gives the retry its smallest P(bad) and no
// larger b does better: only b = 0 is tried. Tests check the search against
// a scan of every value.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "relsim/core/json.hpp"

namespace relsim {

enum class SolveParam { r, s, b, B };
std::string_view to_string(SolveParam param);
// "r", "s", "b" or "B"; throws InputError otherwise.
SolveParam parse_solve_param(std::string_view word);

// One evaluated value.
struct SolvePoint {
  std::int64_t value = 0;
  double success = 0.0;
  double mean_requests = 0.0;
};

struct SolveResult {
  SolveParam param = SolveParam::r;
  double target = 0.0;
  std::int64_t low = 0, limit = 0;  // the values searched, [low, limit]
  std::optional<SolvePoint> found;  // the smallest value meeting the target
  // The largest value below `found` that was evaluated (the one just below
  // it, when found > low), or, when nothing meets the target, the best
  // evaluated value (the limit).
  std::optional<SolvePoint> best_below;
  int evaluations = 0;
  std::string note;  // why the search was cut short (b with q < p), or ""
};

// Searches [low, limit] for the smallest value v with evaluate(v).success >=
// target. target must be in (0, 1] (InputError otherwise); low <= limit.
// With only_low, only `low` is evaluated (b for q < p) and `note` says why.
SolveResult solve_for_target(SolveParam param, double target, std::int64_t low, std::int64_t limit,
                             const std::function<SolvePoint(std::int64_t)>& evaluate, bool only_low = false,
                             std::string note = "");

// {"solve": "r", "target": .., "found": true, "value": .., "success": ..,
// "mean_requests": .., "below": {"value", "success", "mean_requests"} or
// null, "low": .., "limit": .., "evaluations": .., "note": ..}; value,
// success and mean_requests are null when nothing meets the target.
Json solve_json(const SolveResult& result);
// The same in words: one line for the answer, one for the value below it.
std::string solve_words(const SolveResult& result);

}  // namespace relsim
