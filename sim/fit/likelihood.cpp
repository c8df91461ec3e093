// The chain's likelihood and its exact maximisation (include/relsim/fit/likelihood.hpp).
#include "relsim/fit/likelihood.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>

#include "relsim/core/model.hpp"

namespace relsim::fit {
namespace {

// n log x with 0 log 0 = 0: a transition never seen costs nothing even
// where its probability is 0.
double xlog(double n, double x) { return n == 0.0 ? 0.0 : n * std::log(x); }

struct Tally {
  double fb, fg, bb, bg, gb, gg;
  explicit Tally(const ChainCounts& c)
      : fb(double(c.first[1])), fg(double(c.first[0])), bb(double(c.transitions[1][1])),
        bg(double(c.transitions[1][0])), gb(double(c.transitions[0][1])), gg(double(c.transitions[0][0])) {}
};

// Roots of a x^2 + b x + c in [lo, hi], stable for either sign of b.
void roots_in(double a, double b, double c, double lo, double hi, std::vector<double>& out) {
  auto keep = [&](double x) {
    if (std::isfinite(x) && x >= lo && x <= hi) out.push_back(x);
  };
  const double scale = std::max({std::abs(a), std::abs(b), std::abs(c)});
  if (scale == 0.0) return;
  if (std::abs(a) <= 1e-14 * scale) {
    if (b != 0.0) keep(-c / b);
    return;
  }
  const double disc = b * b - 4.0 * a * c;
  if (disc < 0.0) return;
  const double t = -0.5 * (b + std::copysign(std::sqrt(disc), b));
  if (t != 0.0) keep(c / t);
  keep(t / a);
}

double logistic(double t) { return 1.0 / (1.0 + std::exp(-t)); }

}  // namespace

double log_likelihood(const ChainCounts& counts, double p, double q) {
  const Tally n(counts);
  if (!(p >= 0.0 && p <= 1.0 && q >= 0.0 && q <= 1.0)) return -kInf;
  if (p == 1.0) {  // only with q = 1: every request bad
    if (q != 1.0) return -kInf;
    return (n.fg + n.bg + n.gb + n.gg) > 0.0 ? -kInf : 0.0;
  }
  if (q < min_q_for(p) - 1e-15) return -kInf;
  const double p0 = std::clamp(p * (1.0 - q) / (1.0 - p), 0.0, 1.0);
  // 1 - p0 = (1 - (2-q) p)/(1 - p), written so that it keeps its digits near 0.
  const double not_p0 = std::clamp((1.0 - (2.0 - q) * p) / (1.0 - p), 0.0, 1.0);
  return xlog(n.fb, p) + xlog(n.fg, 1.0 - p) + xlog(n.bb, q) + xlog(n.bg, 1.0 - q) + xlog(n.gb, p0) +
         xlog(n.gg, not_p0);
}

double best_q(const ChainCounts& counts, double p) {
  const Tally n(counts);
  if (p >= 1.0) return 1.0;
  // In u = 1 - q the terms are N_bb log(1-u) + M log u + N_gg log(1-p-pu):
  // concave, with a stationary point at the root of the quadratic below.
  const double m = n.bg + n.gb, a = 1.0 - p;
  const double u_max = p > 0.5 ? (1.0 - p) / p : 1.0;
  std::vector<double> us = {0.0, u_max};
  roots_in(p * (m + n.bb + n.gg), -(m + n.bb * a + n.gg * p), m * a, 0.0, u_max, us);
  double best = 1.0, best_l = -kInf;
  for (const double u : us) {
    const double q = std::clamp(1.0 - u, min_q_for(p), 1.0);
    const double l = log_likelihood(counts, p, q);
    if (l > best_l) best_l = l, best = q;
  }
  return best;
}

double best_p(const ChainCounts& counts, double q) {
  const Tally n(counts);
  // l(., q) = A log p + C log(1-p) + D log(1-kp) + const, k = 2 - q.
  const double k = 2.0 - q, A = n.fb + n.gb, C = n.fg - n.gb - n.gg, D = n.gg;
  const double p_max = 1.0 / k;
  std::vector<double> ps = {0.0, p_max, 0.5 * p_max};
  roots_in(k * (A + C + D), -(A * (k + 1.0) + C + D * k), A, 0.0, p_max, ps);
  double best = 0.0, best_l = -kInf;
  for (const double p : ps) {
    const double l = log_likelihood(counts, std::min(p, q == 1.0 ? 1.0 : std::nextafter(1.0, 0.0)), q);
    if (l > best_l) best_l = l, best = p;
  }
  return best;
}

double profile_p(const ChainCounts& counts, double p) { return log_likelihood(counts, p, best_q(counts, p)); }
double profile_q(const ChainCounts& counts, double q) { return log_likelihood(counts, best_p(counts, q), q); }

MaximumLikelihood maximise(const ChainCounts& counts) {
  // The grid guards Brent against a profile with more than one bump.
  constexpr int kGrid = 240;
  constexpr double kT = 30.0;
  double best_t = 0.0, best_l = -kInf;
  for (int i = 0; i <= kGrid; ++i) {
    const double t = -kT + 2.0 * kT * i / kGrid;
    const double l = profile_p(counts, logistic(t));
    if (l > best_l) best_l = l, best_t = t;
  }
  const double step = 2.0 * kT / kGrid;
  const auto minus = [&](double t) { return -profile_p(counts, logistic(t)); };
  const auto [t, neg] =
      boost::math::tools::brent_find_minima(minus, best_t - step, best_t + step, std::numeric_limits<double>::digits / 2);
  MaximumLikelihood mle{logistic(t), 0.0, -neg};
  if (best_l > mle.log_likelihood) mle = {logistic(best_t), 0.0, best_l};
  for (const double end : {0.0, 1.0}) {  // the range's ends lie off the logit grid
    const double l = profile_p(counts, end);
    if (l > mle.log_likelihood) mle = {end, 0.0, l};
  }
  mle.q = best_q(counts, mle.p);
  // Brent stops at sqrt(epsilon) in p; a few exact coordinate steps (each a
  // quadratic's root) take the estimate the rest of the way.
  for (int round = 0; round < 4; ++round) {
    const double p = best_p(counts, mle.q), q = best_q(counts, p);
    const double l = log_likelihood(counts, p, q);
    if (!(l >= mle.log_likelihood)) break;
    mle = {p, q, l};
  }
  return mle;
}

Interval profile_interval(const ChainCounts& counts, Parameter which, const MaximumLikelihood& mle, double drop) {
  const double level = mle.log_likelihood - drop;
  const auto h = [&](double x) {
    const double l = which == Parameter::p ? profile_p(counts, x) : profile_q(counts, x);
    // -inf at a range end would derail the interpolation; any negative value keeps the sign change.
    return std::max(l - level, -1e3);
  };
  const double estimate = which == Parameter::p ? mle.p : mle.q;
  const auto end_towards = [&](double end) {
    const double h_end = h(end);
    const double h_est = h(estimate);
    if (h_end >= 0.0 || estimate == end) return end;
    std::uintmax_t iterations = 200;
    const boost::math::tools::eps_tolerance<double> tolerance(45);
    const auto [a, b] = end < estimate
                            ? boost::math::tools::toms748_solve(h, end, estimate, h_end, h_est, tolerance, iterations)
                            : boost::math::tools::toms748_solve(h, estimate, end, h_est, h_end, tolerance, iterations);
    return 0.5 * (a + b);
  };
  return {end_towards(0.0), end_towards(1.0)};
}

}  // namespace relsim::fit
