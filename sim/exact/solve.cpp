#include "relsim/exact/solve.hpp"

#include <algorithm>

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

std::pair<std::int64_t, std::int64_t> solve_range(SolveParam param, const Policy& policy, bool timed) {
  const bool simple = policy.kind == PolicyKind::simple;
  switch (param) {
    case SolveParam::r:
      return {0, simple ? kMaxRetries : std::min(kMaxRetries, kMaxRequestsPerCall / (policy.s + 1) - 1)};
    case SolveParam::s:
      if (simple)
        throw InputError("solve = s: the simple policy has no HTTP-layer retries; give --policy naive, layered or budgeted");
      return {0, std::min(kMaxHttpRetries, kMaxRequestsPerCall / (policy.r + 1) - 1)};
    case SolveParam::B:
      if (policy.kind != PolicyKind::budgeted)
        throw InputError(fmt::format("solve = B: B is the budgeted policy's cap, not policy = {}'s; give --policy budgeted",
                                     to_string(policy.kind)));
      // Past (s+1)(r+1) requests the cap never binds.
      return {1, std::int64_t{policy.s + 1} * (policy.r + 1)};
    case SolveParam::b:
      if (timed) throw InputError("solve = b: time mode has no silent steps; waits come from --backoff");
      return {0, kMaxSilentSteps};
  }
  return {0, 0};
}

Policy with_value(Policy policy, SolveParam param, std::int64_t v) {
  if (param == SolveParam::r) policy.r = static_cast<int>(v);
  if (param == SolveParam::s) policy.s = static_cast<int>(v);
  if (param == SolveParam::B) policy.B = static_cast<int>(v);
  return policy;
}

namespace {

// With a fallback after K requests, the values whose calls send at least K
// (validate(Fallback, Policy)): the range's low end moved up to the first.
std::int64_t fallback_low(const ExactOptions& options, const Policy& base, SolveParam param, std::int64_t low,
                          std::int64_t limit) {
  if (!options.fallback) return low;
  while (low < limit && with_value(base, param, low).max_requests_per_call() < options.fallback->after) ++low;
  if (with_value(base, param, low).max_requests_per_call() < options.fallback->after)
    throw InputError(fmt::format("fallback-after = {}: no {} up to {} gives a call that many requests",
                                 options.fallback->after, to_string(param), limit));
  return low;
}

}  // namespace

SolveResult solve_exact(const Model& model, const Policy& base, SolveParam param, double target,
                        ExactOptions options) {
  options.distribution = false;
  auto [low, limit] = solve_range(param, base, false);
  low = fallback_low(options, base, param, low, limit);
  const bool only_low = param == SolveParam::b && model.q < model.p;
  const std::string note =
      only_low ? "q < p: a retry right after a bad request is the likeliest to be good (b = 0); no larger b does better"
               : "";
  return solve_for_target(
      param, target, low, limit,
      [&](std::int64_t v) {
        Model m = model;
        if (param == SolveParam::b) m.b = v;
        const ExactResult r = exact_matrix(m, with_value(base, param, v), options);
        return SolvePoint{v, r.success, r.mean_requests};
      },
      only_low, note);
}

SolveResult solve_exact_time(const TimeModel& time, const Policy& base, SolveParam param, double target,
                             ExactOptions options) {
  options.distribution = false;
  auto [low, limit] = solve_range(param, base, true);
  low = fallback_low(options, base, param, low, limit);
  return solve_for_target(param, target, low, limit, [&](std::int64_t v) {
    const ExactResult r = exact_time(time, with_value(base, param, v), options);
    return SolvePoint{v, r.success, r.mean_requests};
  });
}

}  // namespace relsim
