// The exact likelihood of per-call outcomes with hidden SDK retries and its maximisation
// (include/relsim/fit/call_likelihood.hpp).
#include "relsim/fit/call_likelihood.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/fit/likelihood.hpp"
#include "relsim/core/model.hpp"

namespace relsim::fit {
namespace {

constexpr int kBits = std::numeric_limits<double>::digits / 2;
// Rescale the forward vector only when it gets this small: a log per call would dominate the pass.
constexpr double kRescaleBelow = 1e-100;

// Brent minimises; -inf (an impossible log) becomes a large finite value it can compare.
double finite_minus(double l) { return std::isfinite(l) ? -l : 1e300; }

// The largest p that is valid with this q: q >= (2p-1)/p  <=>  p <= 1/(2-q).
double p_max(double q) { return 1.0 / (2.0 - q); }

// Every call bad: only (p, q) = (1, 1) has no good request at all.
double all_bad_at_one(const Sequences& calls, double p, double q) {
  if (p != 1.0 || q != 1.0) return -kInf;
  return calls.bad == calls.records ? 0.0 : -kInf;
}

// Brent on [lo, hi] after a coarse grid, so a profile with two bumps keeps the higher; the ends are
// compared too (Brent never evaluates them). Returns {argmax, max}.
template <class F>
std::pair<double, double> maximise_1d(const F& f, double lo, double hi, int grid) {
  double best_x = lo, best_l = f(lo);
  int best_i = 0;
  for (int i = 1; i <= grid; ++i) {
    const double x = lo + (hi - lo) * i / grid;
    const double l = f(x);
    if (l > best_l) best_l = l, best_x = x, best_i = i;
  }
  const double a = lo + (hi - lo) * std::max(0, best_i - 1) / grid;
  const double b = lo + (hi - lo) * std::min(grid, best_i + 1) / grid;
  if (b > a) {
    const auto minus = [&](double x) { return finite_minus(f(x)); };
    const auto [x, neg] = boost::math::tools::brent_find_minima(minus, a, b, kBits);
    if (-neg > best_l) best_l = -neg, best_x = x;
  }
  return {best_x, best_l};
}

constexpr int kInnerGrid = 8;
constexpr int kOuterGrid = 20;

double profile_q_at(const Sequences& calls, int s, double q) {
  return maximise_1d([&](double p) { return call_log_likelihood(calls, s, p, q); }, 0.0, p_max(q), kInnerGrid).second;
}

double profile_p_at(const Sequences& calls, int s, double p) {
  if (p >= 1.0) return call_log_likelihood(calls, s, 1.0, 1.0);
  return maximise_1d([&](double q) { return call_log_likelihood(calls, s, p, q); }, min_q_for(p), 1.0, kInnerGrid)
      .second;
}

// LR test of q = p against free q, df 1, both maxima of the per-call likelihood.
Test call_independence(const Sequences& calls, int s, const MaximumLikelihood& mle) {
  const auto at = [&](double p) { return call_log_likelihood(calls, s, p, p); };
  const double l0 = maximise_1d(at, 0.0, 1.0, kOuterGrid).second;
  Test t;
  t.df = 1.0;
  t.statistic = std::max(0.0, 2.0 * (mle.log_likelihood - l0));
  t.p_value = boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(1.0), t.statistic));
  return t;
}

}  // namespace

CallTransfer call_transfer(double p, double q, int sdk_retries) {
  const double p0 = std::clamp(p * (1.0 - q) / (1.0 - p), 0.0, 1.0);
  const double not_p0 = std::clamp((1.0 - (2.0 - q) * p) / (1.0 - p), 0.0, 1.0);
  Eigen::Matrix2d step;
  step << not_p0, p0, 1.0 - q, q;
  Eigen::Matrix2d to_bad = Eigen::Matrix2d::Zero(), to_good = Eigen::Matrix2d::Zero();
  to_bad.col(1) = step.col(1);   // P D_bad: the next request is bad
  to_good.col(0) = step.col(0);  // P D_good
  CallTransfer t;
  t.good.setZero();
  Eigen::Matrix2d power = Eigen::Matrix2d::Identity();  // (P D_bad)^j
  for (int j = 0; j <= sdk_retries; ++j) {
    t.good += power * to_good;
    power = power * to_bad;
  }
  t.bad = power;  // (P D_bad)^(S+1)
  return t;
}

double call_log_likelihood(const Sequences& calls, int sdk_retries, double p, double q) {
  if (!(p >= 0.0 && p <= 1.0 && q >= 0.0 && q <= 1.0)) return -kInf;
  if (p == 1.0) return all_bad_at_one(calls, p, q);
  if (q < min_q_for(p) - 1e-15) return -kInf;
  const CallTransfer t = call_transfer(p, q, sdk_retries);
  // The first request is drawn from the stationary law pi. Since pi P = pi, starting the pass from
  // pi as the law of a virtual request before the task and applying the first call's matrix (whose
  // first factor is a step P) gives exactly that.
  const Eigen::RowVector2d pi(1.0 - p, p);
  double total = 0.0;
  for (std::size_t i = 0; i < calls.distinct.size(); ++i) {
    Eigen::RowVector2d alpha = pi;
    double log_scale = 0.0;
    for (const std::uint8_t bad : calls.distinct[i]) {
      alpha = alpha * (bad ? t.bad : t.good);
      const double sum = alpha.sum();
      if (!(sum > 0.0)) return -kInf;
      if (sum < kRescaleBelow) log_scale += std::log(sum), alpha /= sum;
    }
    total += calls.count[i] * (log_scale + std::log(alpha.sum()));
  }
  return total;
}

MaximumLikelihood maximise_calls(const Sequences& calls, int sdk_retries) {
  const auto profile = [&](double q) { return profile_q_at(calls, sdk_retries, q); };
  // Named copies, not structured bindings: clang 14 cannot capture those in a lambda.
  const auto best_q = maximise_1d(profile, 0.0, 1.0, kOuterGrid);
  const double q = best_q.first;
  MaximumLikelihood mle{0.0, q, best_q.second};
  mle.p = maximise_1d([&](double p) { return call_log_likelihood(calls, sdk_retries, p, q); }, 0.0, p_max(q),
                      kInnerGrid)
              .first;
  mle.log_likelihood = call_log_likelihood(calls, sdk_retries, mle.p, mle.q);
  const double at_one = call_log_likelihood(calls, sdk_retries, 1.0, 1.0);
  if (at_one > mle.log_likelihood) mle = {1.0, 1.0, at_one};
  return mle;
}

Interval call_profile_interval(const Sequences& calls, int sdk_retries, Parameter which,
                               const MaximumLikelihood& mle, double drop) {
  const double level = mle.log_likelihood - drop;
  const auto h = [&](double x) {
    const double l = which == Parameter::p ? profile_p_at(calls, sdk_retries, x) : profile_q_at(calls, sdk_retries, x);
    return std::max(l - level, -1e3);  // as profile_interval: -inf would derail the interpolation
  };
  const double estimate = which == Parameter::p ? mle.p : mle.q;
  const double h_est = std::max(h(estimate), 0.0);
  const auto end_towards = [&](double end) {
    const double h_end = h(end);
    if (h_end >= 0.0 || estimate == end) return end;
    std::uintmax_t iterations = 100;
    const boost::math::tools::eps_tolerance<double> tolerance(30);
    const auto [a, b] = end < estimate
                            ? boost::math::tools::toms748_solve(h, end, estimate, h_end, h_est, tolerance, iterations)
                            : boost::math::tools::toms748_solve(h, estimate, end, h_est, h_end, tolerance, iterations);
    return 0.5 * (a + b);
  };
  return {end_towards(0.0), end_towards(1.0)};
}

ChainFit estimate_calls(const Sequences& calls, int sdk_retries, const ChainCounts& counts) {
  if (sdk_retries < 0 || sdk_retries > kMaxSdkRetries)
    throw InputError(fmt::format("--sdk-retries = {} is out of range: it must be in [0, {}]", sdk_retries,
                                 kMaxSdkRetries));
  if (calls.records == 0) throw InputError("no records to fit");
  ChainFit fit;
  fit.mle = maximise_calls(calls, sdk_retries);
  fit.p = fit.mle.p;
  fit.q = fit.mle.q;
  fit.p0 = fit.p < 1.0 ? fit.p * (1.0 - fit.q) / (1.0 - fit.p) : kNaN;
  fit.p_ci = call_profile_interval(calls, sdk_retries, Parameter::p, fit.mle, interval_drop());
  const std::string hidden = "does not apply to per-call outcomes: the requests inside a call are hidden";
  fit.order2 = {0.0, 2.0, kNaN, hidden};
  fit.runs = {0.0, 0.0, kNaN, hidden};
  if (calls.bad == 0) {
    fit.q = fit.p0 = kNaN;
    fit.q_ci = {kNaN, kNaN};
    fit.q_identified = false;
    fit.note = fmt::format("no bad call in {} calls: q is not identified (no bad request to follow); p's interval "
                           "is the 95% profile-likelihood interval of the per-call likelihood",
                           calls.records);
    fit.independence = {0.0, 1.0, kNaN, "no faults"};
  } else {
    fit.q_ci = call_profile_interval(calls, sdk_retries, Parameter::q, fit.mle, interval_drop());
    fit.independence = call_independence(calls, sdk_retries, fit.mle);
  }
  fit.kinds = kind_mix(counts);
  return fit;
}

PredictRegion call_region(const Sequences& calls, int sdk_retries, const ChainFit& fit) {
  PredictRegion region;
  region.p = call_profile_interval(calls, sdk_retries, Parameter::p, fit.mle, region_drop());
  region.q = fit.q_identified ? call_profile_interval(calls, sdk_retries, Parameter::q, fit.mle, region_drop())
                              : Interval{0.0, 1.0};
  region.log_likelihood = [&calls, sdk_retries](double p, double q) {
    return call_log_likelihood(calls, sdk_retries, p, q);
  };
  return region;
}

}  // namespace relsim::fit
