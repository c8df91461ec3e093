// relsim fit in seconds (seconds.hpp; docs/fit.md, Fit in seconds).
#include "relsim/fit/seconds.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>
#include <fmt/format.h>

namespace relsim::fit {
namespace {

// The search runs on logit(p) in this range and on log-rates from a grid of
// this many points refined by Brent.
constexpr double kLogitLimit = 30.0;
constexpr int kRateGrid = 48;
constexpr int kShareGrid = 16;
constexpr int kCheckBins = 5;  // quintiles of the gaps, per outcome before them
constexpr double kMinCellVariance = 1.0;

constexpr double kGapResolution = 1e-3;  // the fit's gaps are rounded to the millisecond

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The gaps by transition as (seconds, how many): exact for GapData's own
// values, or rounded to kGapResolution and merged, so a log of 10^7 requests
// costs what its distinct gaps cost.
struct Gaps {
  double first[2] = {0, 0};
  std::vector<double> seconds[2][2], count[2][2];
};

Gaps gaps_of(const GapData& d, bool merge) {
  Gaps g;
  g.first[0] = static_cast<double>(d.first[0]);
  g.first[1] = static_cast<double>(d.first[1]);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      if (!merge) {
        g.seconds[a][b] = d.gaps[a][b];
        g.count[a][b].assign(d.gaps[a][b].size(), 1.0);
        continue;
      }
      std::vector<std::int64_t> ticks;
      ticks.reserve(d.gaps[a][b].size());
      for (const double s : d.gaps[a][b]) ticks.push_back(std::max<std::int64_t>(1, std::llround(s / kGapResolution)));
      std::sort(ticks.begin(), ticks.end());
      for (std::size_t i = 0; i < ticks.size();) {
        std::size_t j = i;
        while (j < ticks.size() && ticks[j] == ticks[i]) ++j;
        g.seconds[a][b].push_back(static_cast<double>(ticks[i]) * kGapResolution);
        g.count[a][b].push_back(static_cast<double>(j - i));
        i = j;
      }
    }
  return g;
}

// l(p, λ): the likelihood in the share of bad time and the rate of forgetting.
double log_likelihood_at(const Gaps& d, double p, double rate) {
  if (!(p > 0.0 && p < 1.0) || !(rate > 0.0)) return -kInf;
  double l = d.first[1] * std::log(p) + d.first[0] * std::log1p(-p);
  const auto sum = [&](int a, int b, auto term) {
    const std::vector<double>& s = d.seconds[a][b];
    const std::vector<double>& n = d.count[a][b];
    for (std::size_t i = 0; i < s.size(); ++i) l += n[i] * term(-std::expm1(-rate * s[i]));
  };
  sum(0, 0, [p](double om) { return std::log1p(-p * om); });
  sum(1, 1, [p](double om) { return std::log1p(-(1.0 - p) * om); });
  double changes[2] = {0, 0};
  for (int a = 0; a < 2; ++a)
    for (const double n : d.count[a][1 - a]) changes[a] += n;
  l += changes[0] * std::log(p) + changes[1] * std::log1p(-p);
  sum(0, 1, [](double om) { return std::log(om); });
  sum(1, 0, [](double om) { return std::log(om); });
  return std::isnan(l) ? -kInf : l;
}

struct Best {
  double x = 0.0, value = -kInf;
};

// The maximum of f over [low, high]: a grid of `points`, then Brent between
// the grid point's neighbours.
Best maximise_1d(const std::function<double(double)>& f, double low, double high, int points) {
  Best best;
  const double step = (high - low) / (points - 1);
  for (int i = 0; i < points; ++i) {
    const double x = low + step * i;
    const double v = f(x);
    if (v > best.value) best = {x, v};
  }
  if (best.value == -kInf) return best;
  const auto minus = [&](double x) { return -f(x); };
  const auto [x, v] = boost::math::tools::brent_find_minima(minus, std::max(low, best.x - step),
                                                            std::min(high, best.x + step),
                                                            std::numeric_limits<double>::digits / 2);
  if (-v > best.value) best = {x, -v};
  return best;
}

// Bounds of the search, from the gaps seen.
struct Range {
  double t_low = 0.0, t_high = 0.0;
};

Range range_of(const GapData& d) {
  double shortest = kInf, longest = 0.0;
  for (const auto& row : d.gaps)
    for (const auto& gaps : row)
      for (double s : gaps) shortest = std::min(shortest, s), longest = std::max(longest, s);
  return {std::max(1e-3 * shortest, 1e-9), 1e7 * longest};
}

// The end of the 95% interval of log T on one side of the estimate, for
// the profile `profile(log T)`; 0 or kInf when the profile stays above the
// drop out to the search bound.
double interval_end(const std::function<double(double)>& profile, double estimate, double bound, double level) {
  const double direction = bound > estimate ? 1.0 : -1.0;
  const auto h = [&](double x) { return profile(x) - level; };
  double inside = estimate, x = estimate;
  for (double step = std::log(2.0);; step *= 1.5) {
    x = inside + direction * step;
    if (direction * (x - bound) >= 0) {
      x = bound;
      if (h(x) >= 0) return direction > 0 ? kInf : 0.0;
      break;
    }
    if (h(x) < 0) break;
    inside = x;
  }
  std::uintmax_t iterations = 100;
  const auto tolerance = boost::math::tools::eps_tolerance<double>(30);
  const double a = std::min(inside, x), b = std::max(inside, x);
  const auto [lo, hi] = boost::math::tools::toms748_solve(h, a, b, h(a), h(b), tolerance, iterations);
  return std::exp(direction > 0 ? lo : hi);  // the end inside the interval's closure
}

Test calibration(const GapData& d, double p, double rate) {
  Test t;
  t.df = 0;
  for (int from = 0; from < 2; ++from) {
    std::vector<std::pair<double, int>> gaps;
    for (int to = 0; to < 2; ++to)
      for (double s : d.gaps[from][to]) gaps.emplace_back(s, to);
    std::sort(gaps.begin(), gaps.end());
    const int bins = gaps.size() >= 10 * kCheckBins ? kCheckBins : 1;
    for (int b = 0; b < bins; ++b) {
      const std::size_t begin = gaps.size() * b / bins, end = gaps.size() * (b + 1) / bins;
      double seen = 0, expected = 0, variance = 0;
      for (std::size_t i = begin; i < end; ++i) {
        const double om = -std::expm1(-rate * gaps[i].first);
        const double bad = from == 1 ? 1.0 - (1.0 - p) * om : p * om;
        seen += gaps[i].second;
        expected += bad;
        variance += bad * (1.0 - bad);
      }
      if (variance < kMinCellVariance) continue;
      t.statistic += (seen - expected) * (seen - expected) / variance;
      t.df += 1;
    }
  }
  t.df -= 2;
  if (t.df < 1) {
    t.p_value = kNaN;
    t.why_not = "too few gaps to check";
    return t;
  }
  t.p_value = boost::math::cdf(boost::math::complement(boost::math::chi_squared(t.df), t.statistic));
  return t;
}

}  // namespace

std::int64_t GapData::count() const {
  return static_cast<std::int64_t>(gaps[0][0].size() + gaps[0][1].size() + gaps[1][0].size() + gaps[1][1].size());
}

void GapCollector::add(const Record& record) {
  if (!record.timed) {
    ++data_.untimed;
    return;
  }
  const std::uint8_t bad = record.bad ? 1 : 0;
  const auto [it, fresh] = last_.try_emplace(record.task, Last{record.order, bad});
  if (fresh) {
    ++data_.first[bad];
    return;
  }
  if (record.order <= it->second.ns) {  // ChainCounter refuses one that goes back
    ++data_.same_start;
    return;
  }
  data_.gaps[it->second.bad][bad].push_back(static_cast<double>(record.order - it->second.ns) * 1e-9);
  it->second = Last{record.order, bad};
}

double seconds_log_likelihood(const GapData& data, double t_good, double t_bad) {
  return log_likelihood_at(gaps_of(data, false), t_bad / (t_good + t_bad), 1.0 / t_good + 1.0 / t_bad);
}

SecondsFit fit_seconds(const GapData& d) {
  SecondsFit f;
  f.gaps = d.count();
  const std::int64_t bad = d.first[1] + static_cast<std::int64_t>(d.gaps[0][1].size() + d.gaps[1][1].size());
  const std::int64_t good = d.first[0] + static_cast<std::int64_t>(d.gaps[0][0].size() + d.gaps[1][0].size());
  if (f.gaps == 0) {
    f.note = "no task has two requests at different times: the gaps between them are what the fit in seconds reads";
    return f;
  }
  if (bad == 0 || good == 0) {
    f.note = bad == 0 ? "no bad request: the outages' length is not identified"
                      : "no good request: the good periods' length is not identified";
    return f;
  }
  if (d.gaps[0][1].empty() && d.gaps[1][0].empty()) {
    f.note = "no task changes between good and bad: how fast the chain changes is not identified";
    return f;
  }
  const Range r = range_of(d);
  const Gaps merged = gaps_of(d, true);
  // The profile over p for a rate, on logit p (l is concave in p).
  const auto best_share = [&](double rate) {
    return maximise_1d([&](double x) { return log_likelihood_at(merged, logistic(x), rate); }, -kLogitLimit,
                       kLogitLimit, kShareGrid);
  };
  const double rate_low = std::log(1.0 / r.t_high), rate_high = std::log(2.0 / r.t_low);
  const Best rate = maximise_1d([&](double x) { return best_share(std::exp(x)).value; }, rate_low, rate_high, kRateGrid);
  // A rate on the search's edge: no scale of time the gaps can see.
  constexpr double kEdge = 1e-3;
  if (rate.x > rate_high - kEdge || rate.x < rate_low + kEdge) {
    f.note = rate.x > rate_high - kEdge
                 ? "the faults do not cluster in time at the scale of these gaps (the chain would forget faster than "
                   "the shortest gap): independent faults, whose fit is in requests"
                 : "the chain would change more slowly than the longest gap shows: not identified";
    return f;
  }
  const double lambda = std::exp(rate.x), p = logistic(best_share(lambda).x);
  f.identified = true;
  f.p = p;
  f.t_good = 1.0 / (p * lambda);
  f.t_bad = 1.0 / ((1.0 - p) * lambda);
  f.log_likelihood = rate.value;
  // Profiles of t_bad and t_good (log seconds): for T and p, the rate that
  // gives that mean, the best p kept.
  const auto profile_bad = [&](double x) {
    const double T = std::exp(x);
    const auto at = [&](double y) { return log_likelihood_at(merged, logistic(y), 1.0 / (T * (1.0 - logistic(y)))); };
    return maximise_1d(at, -kLogitLimit, kLogitLimit, kShareGrid).value;
  };
  const auto profile_good = [&](double x) {
    const double T = std::exp(x);
    const auto at = [&](double y) { return log_likelihood_at(merged, logistic(y), 1.0 / (T * logistic(y))); };
    return maximise_1d(at, -kLogitLimit, kLogitLimit, kShareGrid).value;
  };
  const double level = f.log_likelihood - interval_drop();
  const double lo = std::min(std::log(r.t_low), std::log(std::min(f.t_good, f.t_bad)) - 1.0);
  const double hi = std::max(std::log(r.t_high), std::log(std::max(f.t_good, f.t_bad)) + 1.0);
  f.t_bad_ci = {interval_end(profile_bad, std::log(f.t_bad), lo, level),
                interval_end(profile_bad, std::log(f.t_bad), hi, level)};
  f.t_good_ci = {interval_end(profile_good, std::log(f.t_good), lo, level),
                 interval_end(profile_good, std::log(f.t_good), hi, level)};
  f.check = calibration(d, p, lambda);
  if (f.t_bad_ci.low == 0.0)
    f.note = fmt::format("t_bad is not bounded below: outages as short as you like fit these {} gaps (the shortest "
                         "{:.3g} s), so the faults may not cluster in time at all (compare the verdict in requests)",
                         f.gaps, r.t_low * 1e3);
  return f;
}

std::vector<std::pair<double, double>> seconds_region(const GapData& data, const SecondsFit& f, int grid) {
  std::vector<std::pair<double, double>> points;
  if (!f.identified) return points;
  points.emplace_back(f.t_good, f.t_bad);
  constexpr double kWiden = 1.6, kUnbounded = 3.0 * 2.302585092994046;  // three decades
  const auto side = [&](double estimate, double end) {
    if (end <= 0.0 || std::isinf(end)) return kUnbounded;
    return kWiden * std::abs(std::log(end) - std::log(estimate));
  };
  const double g0 = std::log(f.t_good) - side(f.t_good, f.t_good_ci.low);
  const double g1 = std::log(f.t_good) + side(f.t_good, f.t_good_ci.high);
  const double b0 = std::log(f.t_bad) - side(f.t_bad, f.t_bad_ci.low);
  const double b1 = std::log(f.t_bad) + side(f.t_bad, f.t_bad_ci.high);
  const double level = f.log_likelihood - region_drop();
  const Gaps merged = gaps_of(data, true);
  for (int i = 0; i < grid; ++i)
    for (int j = 0; j < grid; ++j) {
      const double tg = std::exp(g0 + (g1 - g0) * i / (grid - 1)), tb = std::exp(b0 + (b1 - b0) * j / (grid - 1));
      if (log_likelihood_at(merged, tb / (tg + tb), 1.0 / tg + 1.0 / tb) >= level) points.emplace_back(tg, tb);
    }
  return points;
}

std::string seconds_options(const SecondsFit& f) {
  return fmt::format("--t-good {:.6g} --t-bad {:.6g}", f.t_good, f.t_bad);
}

}  // namespace relsim::fit
