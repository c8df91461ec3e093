#pragma once
// For the tune tests: a small search space, a priced configuration in
// seconds, and one schedule evaluated by the exact engine alone (no walk
// memo), the reference each tune figure is checked against.
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "relsim/core/billing.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/sweep/tune.hpp"

namespace relsim::test {

// Layered and budgeted over s in 0..s_max, r in 0..r_max, B in `budgets`,
// the `fixed` backoffs and one exp schedule (base 0.5 s, cap 8 s, no jitter).
inline TuneSpace small_tune_space(std::vector<Backoff> fixed, int s_max, int r_max, std::vector<int> budgets) {
  TuneSpace s;
  s.fixed = std::move(fixed);
  s.s_max = s_max;
  s.r_max = r_max;
  s.budgets = std::move(budgets);
  s.bases = {0.5};
  s.caps = {8.0};
  s.jitters = {0.0};
  return s;
}

// A task of n calls of `request_seconds` under `chain`, kinds `kinds`, at
// $3/$15 per million tokens, with no p99 runs.
inline TuneConfig priced_tune_config(TimeChain chain, double request_seconds, int n, std::string_view kinds,
                                     double target, double input_tokens, double output_tokens) {
  TuneConfig c;
  c.time.chain = std::move(chain);
  c.time.request_seconds = request_seconds;
  c.n = n;
  c.kinds = parse_fault_weights(kinds);
  c.target = target;
  c.p99_tasks = 0;
  Billing b;
  b.input_tokens = input_tokens;
  b.output_tokens = output_tokens;
  b.price_in = 3.0;
  b.price_out = 15.0;
  c.billing = b;
  return c;
}

// The exact engine on one schedule of `c`, with this fallback (or none).
inline ExactResult exact_alone(const TuneConfig& c, const Backoff& backoff, const Policy& policy,
                               const std::optional<Fallback>& fallback) {
  TimeModel time = c.time;
  time.backoff = backoff;
  ExactOptions options;
  options.kinds = c.kinds;
  options.distribution = false;
  options.billing = c.billing;
  options.fallback = fallback;
  return exact_time(time, policy, options);
}

}  // namespace relsim::test
