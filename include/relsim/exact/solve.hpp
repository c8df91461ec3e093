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
// a scan of every value. The answer's table and JSON: solve_report.hpp.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"

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

// The values a search may take for `policy`: [low, limit], within the
// ranges validate() accepts. Throws InputError for a parameter this policy or
// mode has not: s for the simple policy, B for any but budgeted, b in time
// mode (its waits come from --backoff).
std::pair<std::int64_t, std::int64_t> solve_range(SolveParam param, const Policy& policy, bool timed);
// `policy` with the searched parameter set to v (b is the model's, so the
// policy is unchanged for it).
Policy with_value(Policy policy, SolveParam param, std::int64_t v);

// The search over the exact engine (the requests distribution left out):
// the discrete chain, where b is the model's and q < p tries b = 0 only (see
// above), or time mode. `base` holds every parameter but the one searched.
SolveResult solve_exact(const Model& model, const Policy& base, SolveParam param, double target,
                        ExactOptions options);
SolveResult solve_exact_time(const TimeModel& time, const Policy& base, SolveParam param, double target,
                             ExactOptions options);

}  // namespace relsim
