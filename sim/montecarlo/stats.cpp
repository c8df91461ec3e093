#include "relsim/montecarlo/stats.hpp"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/normal.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

std::string_view to_string(IntervalKind kind) {
  switch (kind) {
    case IntervalKind::wilson: return "wilson";
    case IntervalKind::clopper_pearson: return "clopper-pearson";
    case IntervalKind::jeffreys: return "jeffreys";
  }
  return "?";
}

IntervalKind parse_interval_kind(std::string_view word) {
  if (word == "wilson") return IntervalKind::wilson;
  if (word == "clopper-pearson") return IntervalKind::clopper_pearson;
  if (word == "jeffreys") return IntervalKind::jeffreys;
  throw InputError(fmt::format("interval = '{}' is not an interval: use wilson, clopper-pearson or jeffreys", word));
}

Interval binomial_interval(IntervalKind kind, std::int64_t k, std::int64_t n, double confidence) {
  if (n < 1) throw InputError(fmt::format("n = {} is out of range: the number of trials must be >= 1", n));
  if (k < 0 || k > n) throw InputError(fmt::format("k = {} is out of range: successes must be in [0, {}]", k, n));
  if (!(confidence > 0.0 && confidence < 1.0))
    throw InputError(fmt::format("confidence = {} is out of range: it must be in (0, 1)", confidence));
  const double alpha = 1.0 - confidence;
  const double kd = static_cast<double>(k), nd = static_cast<double>(n);
  Interval out;
  switch (kind) {
    case IntervalKind::wilson: {
      // Wilson (1927): the p whose score test at level alpha does not reject k/n.
      const double z = boost::math::quantile(boost::math::normal_distribution<double>(), 1.0 - alpha / 2.0);
      const double z2 = z * z;
      const double center = (kd + z2 / 2.0) / (nd + z2);
      const double half = z / (nd + z2) * std::sqrt(kd * (nd - kd) / nd + z2 / 4.0);
      out.low = k == 0 ? 0.0 : std::max(0.0, center - half);
      out.high = k == n ? 1.0 : std::min(1.0, center + half);
      break;
    }
    case IntervalKind::clopper_pearson: {
      // Clopper & Pearson (1934): invert the two one-sided binomial tests;
      // the bounds are Beta(k, n-k+1) and Beta(k+1, n-k) quantiles.
      out.low = k == 0 ? 0.0 : boost::math::ibeta_inv(kd, nd - kd + 1.0, alpha / 2.0);
      out.high = k == n ? 1.0 : boost::math::ibeta_inv(kd + 1.0, nd - kd, 1.0 - alpha / 2.0);
      break;
    }
    case IntervalKind::jeffreys: {
      // Brown, Cai & DasGupta (2001): equal-tailed Beta(k+1/2, n-k+1/2)
      // posterior interval, with low = 0 at k = 0 and high = 1 at k = n.
      const double a = kd + 0.5, b = nd - kd + 0.5;
      out.low = k == 0 ? 0.0 : boost::math::ibeta_inv(a, b, alpha / 2.0);
      out.high = k == n ? 1.0 : boost::math::ibeta_inv(a, b, 1.0 - alpha / 2.0);
      break;
    }
  }
  return out;
}

Interval effective_interval(IntervalKind kind, std::int64_t k, std::int64_t n, double confidence,
                            double design_effect) {
  if (!(design_effect >= 0.0 && std::isfinite(design_effect)))
    throw InputError(fmt::format("design effect = {} is out of range: it must be a finite number >= 0", design_effect));
  if (design_effect <= 1.0 || n < 1 || k < 0 || k > n) return binomial_interval(kind, k, n, confidence);
  const auto n_eff = std::max<std::int64_t>(1, std::llround(static_cast<double>(n) / design_effect));
  const auto k_eff = std::clamp<std::int64_t>(
      std::llround(static_cast<double>(k) * static_cast<double>(n_eff) / static_cast<double>(n)), 0, n_eff);
  return binomial_interval(kind, k_eff, n_eff, confidence);
}

}  // namespace relsim
