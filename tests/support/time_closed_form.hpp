#pragma once
// Test oracles for time in seconds, written from the hand derivation in
// docs/time.md (A closed form for two states) in plain double arithmetic,
// sharing no code with the engines: the two-state chain's transition
// probabilities, the simple policy's success, mean wall time and mean
// requests in both chain scopes, its wall-time distribution (fresh scope,
// fixed waits) by direct enumeration of the calls, exp(Qt) of any generator
// by uniformisation, and Gauss-Legendre quadrature on [0, 1].
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <boost/math/quadrature/gauss.hpp>
#include <fmt/format.h>

namespace relsim_test {

// Gilbert's two states in continuous time (docs/time.md, The chain): mean
// sojourns t_good and t_bad, p = t_bad / (t_good + t_bad), and
// exp(Qt) = Pi + e^(-lambda t) (I - Pi), lambda = 1/t_good + 1/t_bad.
struct TwoStateRef {
  double t_good = 1.0, t_bad = 1.0;

  double p() const { return t_bad / (t_good + t_bad); }
  double lambda() const { return 1.0 / t_good + 1.0 / t_bad; }
  // P(bad at t | bad at 0) = p + (1 - p) e^(-lambda t), written with expm1 so
  // that a short t keeps its digits.
  double bad_bad(double t) const { return 1.0 + (1.0 - p()) * std::expm1(-lambda() * t); }
  // P(bad at t | good at 0) = p (1 - e^(-lambda t)).
  double good_bad(double t) const { return -p() * std::expm1(-lambda() * t); }
  // E P(bad at fixed + wait (1 - jitter U) | bad at 0), U uniform on [0, 1):
  // E e^(-lambda (f + w (1 - j U))) = e^(-lambda (f + w (1 - j))) (1 - e^(-lambda w j)) / (lambda w j).
  double bad_bad_jittered(double fixed, double wait, double jitter) const {
    const double x = lambda() * wait * jitter;
    if (x == 0.0) return bad_bad(fixed + wait);
    const double mean_exp = std::exp(-lambda() * (fixed + wait * (1.0 - jitter))) * (-std::expm1(-x)) / x;
    return p() + (1.0 - p()) * mean_exp;
  }
};

// The simple policy (n calls, r retries) over the two-state chain, with a
// good request taking d_good seconds, a bad one d_bad, `think` seconds
// between calls, and the wait before retry a + 1 equal to
// waits[min(a, size - 1)] (1 - jitter U). `waits` empty: no wait.
struct HandCase {
  double t_good = 3600.0, t_bad = 120.0;
  double d_good = 0.0, d_bad = 0.0, think = 0.0;
  std::vector<double> waits;
  double jitter = 0.0;
  int r = 0;
  std::int64_t n = 1;
  bool continuous = false;

  double wait(int a) const {
    if (waits.empty()) return 0.0;
    return waits[std::min<std::size_t>(static_cast<std::size_t>(a), waits.size() - 1)];
  }
  std::string str() const {
    std::string w;
    for (double x : waits) w += fmt::format("{}{:g}", w.empty() ? "" : ",", x);
    return fmt::format("t_good={:g} t_bad={:g} d_good={:g} d_bad={:g} think={:g} waits=[{}] jitter={:g} r={} n={} {}",
                       t_good, t_bad, d_good, d_bad, think, w, jitter, r, n, continuous ? "continuous" : "fresh");
  }
};

struct HandResult {
  double success = 0.0, mean_seconds = 0.0, mean_requests = 0.0;
  double start_bad = 0.0;  // P(the task's first request is bad)
};

// docs/time.md, A closed form for two states. With qbar_a the chance that
// retry a + 1 is bad after a bad attempt a, Q = prod_a qbar_a, and x the
// chance that a call's first request is bad:
//   P(call fails)      = x Q,
//   E[call seconds]    = d_good + x (d_bad - d_good + A),
//   E[call requests]   = 1 + x A_req,
// where A = sum_a (prod_{i<a} qbar_i)(wbar_a + (1 - qbar_a) d_good + qbar_a d_bad)
// and A_req = sum_a prod_{i<a} qbar_i. The first call starts with x = p
// (fresh) and every later one with x = pg = P(bad at d_good + think | good).
inline HandResult hand_closed_form(const HandCase& c) {
  const TwoStateRef ch{c.t_good, c.t_bad};
  double Q = 1.0, A = 0.0, A_req = 0.0;
  for (int a = 0; a < c.r; ++a) {
    const double w = c.wait(a);
    const double qbar = ch.bad_bad_jittered(c.d_bad, w, c.jitter);
    const double wbar = w * (1.0 - c.jitter / 2.0);
    A += Q * (wbar + (1.0 - qbar) * c.d_good + qbar * c.d_bad);
    A_req += Q;
    Q *= qbar;
  }
  const double pg = ch.good_bad(c.d_good + c.think);
  const double qg = ch.bad_bad(c.d_bad + c.think);
  const double y = pg * Q;  // 1 - s_g: a later call fails
  const double m = static_cast<double>(c.n - 1);
  const double later_all = y == 0.0 ? 1.0 : std::exp(m * std::log1p(-y));        // s_g^(n-1)
  const double later_sum = y == 0.0 ? m : -std::expm1(m * std::log1p(-y)) / y;  // sum_{j<n-1} s_g^j
  const auto success_from = [&](double x) { return (1.0 - x * Q) * later_all; };
  double x = ch.p();
  if (c.continuous) {
    // The next task's first request follows a success (good last request)
    // or a failure (bad last request) by its duration plus think.
    // When 1 - s_good + s_bad = 0 (pg = 0 and qg Q = 1: d = think = 0 and
    // no retry) a good start stays good and a bad one bad for ever: the
    // long run keeps the first task's start, x = p.
    const double s_good = success_from(pg), s_bad = success_from(qg);
    const double denominator = 1.0 - s_good + s_bad;
    if (denominator > 0.0) {
      const double pi = s_bad / denominator;
      x = pi * pg + (1.0 - pi) * qg;
    }
  }
  const auto call_seconds = [&](double xx) { return c.d_good + xx * (c.d_bad - c.d_good + A); };
  const auto call_requests = [&](double xx) { return 1.0 + xx * A_req; };
  const double first_ok = 1.0 - x * Q;
  HandResult out;
  out.start_bad = x;
  out.success = success_from(x);
  out.mean_seconds = call_seconds(x) + first_ok * later_sum * (c.think + call_seconds(pg));
  out.mean_requests = call_requests(x) + first_ok * later_sum * call_requests(pg);
  return out;
}

// The wall-time distribution of a HandCase (fresh scope, no jitter) by
// walking the calls one by one: keys are (microseconds, 0 = done /
// 1 = env_error). Durations are rounded to the microsecond term by term, so
// use binary fractions (0.25, 1.5) to keep the sums exact.
inline std::map<std::pair<std::int64_t, int>, double> hand_seconds_distribution(const HandCase& c) {
  const TwoStateRef ch{c.t_good, c.t_bad};
  const auto us = [](double s) { return static_cast<std::int64_t>(std::llround(s * 1e6)); };
  // Per call from start-bad chance x: (probability, duration, succeeded).
  struct Way {
    double prob;
    std::int64_t dur;
    bool ok;
  };
  const auto ways = [&](double x) {
    std::vector<Way> out{{1.0 - x, us(c.d_good), true}};
    double bad_so_far = x, spent = 0.0;
    for (int a = 0; a < c.r; ++a) {
      spent += c.d_bad + c.wait(a);
      const double q = ch.bad_bad(c.d_bad + c.wait(a));
      out.push_back({bad_so_far * (1.0 - q), us(spent) + us(c.d_good), true});
      bad_so_far *= q;
    }
    out.push_back({bad_so_far, us(spent) + us(c.d_bad), false});
    return out;
  };
  std::map<std::pair<std::int64_t, int>, double> ended;
  std::map<std::int64_t, double> alive{{0, 1.0}};
  for (std::int64_t j = 0; j < c.n; ++j) {
    const auto w = ways(j == 0 ? ch.p() : ch.good_bad(c.d_good + c.think));
    const std::int64_t gap = j == 0 ? 0 : us(c.think);
    std::map<std::int64_t, double> next;
    for (const auto& [t, mass] : alive) {
      for (const Way& way : w) {
        const std::int64_t at = t + gap + way.dur;
        if (!way.ok) ended[{at, 1}] += mass * way.prob;
        else if (j + 1 == c.n) ended[{at, 0}] += mass * way.prob;
        else next[at] += mass * way.prob;
      }
    }
    alive = std::move(next);
  }
  return ended;
}

// The smallest x with P(X <= x) >= level, over all outcomes.
inline double quantile_seconds(const std::map<std::pair<std::int64_t, int>, double>& dist, double level) {
  std::map<std::int64_t, double> by_time;
  for (const auto& [key, mass] : dist) by_time[key.first] += mass;
  double cum = 0.0;
  for (const auto& [t, mass] : by_time) {
    cum += mass;
    if (cum >= level) return static_cast<double>(t) / 1e6;
  }
  return static_cast<double>(by_time.rbegin()->first) / 1e6;
}

// exp(Q t) by uniformisation: with mu >= max_i |Q_ii| and P = I + Q / mu
// (a stochastic matrix), exp(Q t) = sum_k e^(-mu t) (mu t)^k / k! P^k. Every
// term is non-negative, so the sum has no cancellation.
inline Eigen::MatrixXd uniformised_exp(const Eigen::MatrixXd& Q, double t) {
  const Eigen::Index k = Q.rows();
  const double mu = std::max(1e-300, (-Q.diagonal()).maxCoeff());
  const Eigen::MatrixXd P = Eigen::MatrixXd::Identity(k, k) + Q / mu;
  const double x = mu * t;
  Eigen::MatrixXd power = Eigen::MatrixXd::Identity(k, k), sum = Eigen::MatrixXd::Zero(k, k);
  double weight = std::exp(-x);  // Poisson(x) probability of k jumps
  for (int j = 0; j < 100000; ++j) {
    sum += weight * power;
    if (j > x && weight < 1e-20) break;
    power = power * P;
    weight *= x / (j + 1);
  }
  return sum;
}

// Gauss-Legendre on [0, 1] with 30 nodes: exact for polynomials of degree
// 59, so for the smooth exponentials integrated here the error is far below
// the 1e-9 asked of the tests.
template <class F>
double integrate_unit(F&& f) {
  return boost::math::quadrature::gauss<double, 30>::integrate(f, 0.0, 1.0);
}

}  // namespace relsim_test
