#pragma once
// The exact log-likelihood of the fault chain relsim computes with
// (docs/fit.md, Likelihood): each task's first request bad with the
// stationary probability p, every later one from the chain,
//   l(p, q) = F_b log p + F_g log(1-p) + N_bb log q + N_bg log(1-q)
//           + N_gb log p0 + N_gg log(1-p0),   p0 = p(1-q)/(1-p),
// over the valid region q >= max(0, (2p-1)/p) (docs/model.md, Valid parameters).
#include <limits>

#include "relsim/fit/counts.hpp"

namespace relsim::fit {

// What the fit's results hold where there is no estimate (NaN) or no bound
// (infinity).
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// -inf outside the valid region or where a seen transition has probability 0.
double log_likelihood(const ChainCounts& counts, double p, double q);

// The q in [min_q_for(p), 1] that maximises l(p, .), and the p in
// [0, 1/(2-q)] that maximises l(., q). Both are exact: the stationarity
// condition is a quadratic, and its roots in range are compared with the ends.
double best_q(const ChainCounts& counts, double p);
double best_p(const ChainCounts& counts, double q);

// Profile log-likelihoods: l(p, best_q(p)) and l(best_p(q), q).
double profile_p(const ChainCounts& counts, double p);
double profile_q(const ChainCounts& counts, double q);

struct MaximumLikelihood {
  double p = 0.0, q = 0.0;
  double log_likelihood = 0.0;
};
// The maximum over the valid region: a grid over p (logit scale), then Brent
// (Boost.Math brent_find_minima) on the profile around the grid's best point.
MaximumLikelihood maximise(const ChainCounts& counts);

enum class Parameter { p, q };
struct Interval {
  double low = 0.0, high = 0.0;
};
// {x : l_max - profile(x) <= drop}, found on each side of the estimate with
// Boost's toms748_solve; an end where the profile never drops that far is the
// end of the parameter's range. drop = chi2_1(0.95)/2 gives the 95% profile
// interval, chi2_2(0.95)/2 the bounding box of the joint 95% region.
Interval profile_interval(const ChainCounts& counts, Parameter which, const MaximumLikelihood& mle, double drop);

}  // namespace relsim::fit
