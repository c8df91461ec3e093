#pragma once
// Test oracles written from docs/model.md (Fault chain, Exact answers) in plain double arithmetic,
// sharing no code with the engines: the closed form of the simple policy
// generalised to silent steps and to the continuous chain scope, its mean
// number of requests, and a generator of random valid parameter sets.
//
// Gilbert (1960) chain with second eigenvalue lam = q - p0:
//   P^m[bad -> bad]  = p + (1 - p) lam^m = 1 - (1 - p)(1 - lam^m),
//   P^m[good -> bad] = p - p lam^m       = p (1 - lam^m),
// written in the second form so that q = 1 (lam = 1) gives exact 1 and 0.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include <fmt/format.h>

#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"

namespace relsim_test {

struct Case {
  double p = 0.0, q = 0.0;
  int r = 0;
  std::int64_t n = 1;
  std::int64_t b = 0, g = 0;
  bool continuous = false;

  relsim::Model model() const {
    return {.p = p,
            .q = q,
            .b = b,
            .g = g,
            .chain = continuous ? relsim::ChainScope::continuous : relsim::ChainScope::fresh};
  }
  relsim::Policy policy() const { return {.n = n, .r = r, .kind = relsim::PolicyKind::simple}; }
  std::int64_t length() const { return n * (r + 1); }
  std::string str() const {
    return fmt::format("p={:.17g} q={:.17g} r={} n={} b={} g={} chain={}", p, q, r, n, b, g,
                       continuous ? "continuous" : "fresh");
  }
};

struct ChainNumbers {
  double qb;   // P^(1+b)[bad -> bad]: a retry after a bad request is bad
  double p0g;  // P^(1+g)[good -> bad]: the next call's first request after a good one
  double qg;   // P^(1+g)[bad -> bad]: the next task's first request after a failed task
};

inline ChainNumbers chain_numbers(const Case& c) {
  const double p0 = c.p >= 1.0 ? 1.0 : std::min(1.0, c.p * (1.0 - c.q) / (1.0 - c.p));
  const double lam = c.q - p0;
  const auto bad_bad = [&](std::int64_t m) { return 1.0 - (1.0 - c.p) * (1.0 - std::pow(lam, double(m))); };
  const auto good_bad = [&](std::int64_t m) { return c.p * (1.0 - std::pow(lam, double(m))); };
  return {bad_bad(1 + c.b), good_bad(1 + c.g), bad_bad(1 + c.g)};
}

// P(success) when the task's first request is bad with probability pi:
// (1 - pi qb^r)(1 - p0g qb^r)^(n-1).
inline double success_from(const Case& c, double pi) {
  const ChainNumbers k = chain_numbers(c);
  const double fail = std::pow(k.qb, c.r);
  return (1.0 - pi * fail) * std::pow(1.0 - k.p0g * fail, double(c.n - 1));
}

// Continuous scope: the probability that a task's first request is bad in
// the long run. Task outcomes form a two-state chain: after done the next
// task starts like a call after a good request (S_g), after env_error like
// one after a bad request (S_b); x = S_b / (1 - S_g + S_b). When both
// outcomes are absorbing (S_g = 1, S_b = 0) the Cesaro limit is the first,
// fresh task's.
inline double continuous_first_bad(const Case& c) {
  const ChainNumbers k = chain_numbers(c);
  const double fail = std::pow(k.qb, c.r);
  // 1 - S_g, S_g = (1 - p0g qb^r)^n, without cancellation.
  const double one_minus_s_good = -std::expm1(double(c.n) * std::log1p(-k.p0g * fail));
  const double s_bad = (1.0 - k.qg * fail) * std::pow(1.0 - k.p0g * fail, double(c.n - 1));
  if (one_minus_s_good + s_bad == 0.0) return c.p;
  const double x = s_bad / (one_minus_s_good + s_bad);
  return x * k.p0g + (1.0 - x) * k.qg;
}

inline double first_bad(const Case& c) { return c.continuous ? continuous_first_bad(c) : c.p; }

inline double closed_success(const Case& c) { return success_from(c, first_bad(c)); }

// E[requests per task] from a first request bad with probability pi: call j
// is reached when calls 1..j-1 succeeded, and takes 1 + pi_j (1 + qb + ... +
// qb^(r-1)) requests, where pi_1 = pi and pi_j = p0g after that. The sum
// over later calls, (1 - s^(n-1)) / (1 - s) with s = 1 - p0g qb^r, is taken
// through expm1/log1p so that s near 1 loses nothing to cancellation.
inline double mean_from(const Case& c, double pi) {
  const ChainNumbers k = chain_numbers(c);
  double extra = 0.0, term = 1.0;
  for (int a = 0; a < c.r; ++a, term *= k.qb) extra += term;
  const double fail = std::pow(k.qb, c.r);
  const double f = k.p0g * fail;  // 1 - s
  const double later_calls =
      f == 0.0 ? double(c.n - 1) : f == 1.0 ? (c.n > 1 ? 1.0 : 0.0) : -std::expm1(double(c.n - 1) * std::log1p(-f)) / f;
  return (1.0 + pi * extra) + (1.0 - pi * fail) * (1.0 + k.p0g * extra) * later_calls;
}

// log10 P(success), finite where the success underflows.
inline double closed_log10_success(const Case& c) {
  const ChainNumbers k = chain_numbers(c);
  const double fail = std::pow(k.qb, c.r);
  return (std::log1p(-first_bad(c) * fail) + double(c.n - 1) * std::log1p(-k.p0g * fail)) / std::log(10.0);
}

inline double closed_mean(const Case& c) { return mean_from(c, first_bad(c)); }

// E[bad requests per task], by the same sum: a call whose first request is
// bad with probability pi sends request a + 1 exactly when its first a were
// bad, and that request is bad with probability qb, so the call's bad
// requests average pi (1 + qb + ... + qb^r). The share of sent requests
// that fail is this over closed_mean.
inline double mean_bad_from(const Case& c, double pi) {
  const ChainNumbers k = chain_numbers(c);
  double bad = 0.0, term = 1.0;
  for (int a = 0; a <= c.r; ++a, term *= k.qb) bad += term;
  const double fail = std::pow(k.qb, c.r);
  const double f = k.p0g * fail;
  const double later_calls =
      f == 0.0 ? double(c.n - 1) : f == 1.0 ? (c.n > 1 ? 1.0 : 0.0) : -std::expm1(double(c.n - 1) * std::log1p(-f)) / f;
  return pi * bad + (1.0 - pi * fail) * k.p0g * bad * later_calls;
}

inline double closed_mean_bad(const Case& c) { return mean_bad_from(c, first_bad(c)); }

inline double min_q_for(double p) { return p > 0.5 ? (2.0 * p - 1.0) / p : 0.0; }

// A random valid parameter set with n (r + 1) <= max_length. Edges come up
// often on purpose: p = 0, p = 1, p > 1/2 with q at its bound, q = 1, q = p.
inline Case random_case(std::mt19937_64& rng, int max_length, bool allow_silent = true) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto pick = [&](int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng); };
  Case c;
  switch (pick(12)) {
    case 0: c.p = 0.0; break;
    case 1: c.p = 1.0; break;
    case 2: case 3: c.p = 0.5 + 0.45 * unit(rng); break;  // p > 1/2: q has a lower bound
    default: c.p = 0.5 * unit(rng);
  }
  const double lo = min_q_for(c.p);
  if (c.p == 1.0) {
    c.q = 1.0;
  } else {
    switch (pick(10)) {
      case 0: c.q = lo; break;
      case 1: c.q = 1.0; break;
      case 2: c.q = c.p >= lo ? c.p : lo; break;  // independent when allowed
      default: c.q = lo + (1.0 - lo) * unit(rng);
    }
  }
  c.r = pick(6);
  c.n = 1 + pick(std::max(1, max_length / (c.r + 1)));
  if (allow_silent) {
    // Small silent steps: long ones are tested on their own (their matrix
    // powers are a separate concern).
    const auto silent = [&] { return pick(2) ? 0 : (pick(8) ? 1 + pick(6) : 20 + pick(21)); };
    c.b = silent();
    c.g = silent();
  }
  c.continuous = pick(2) == 1;
  return c;
}

}  // namespace relsim_test
