// Intervals for time mode's simulator (montecarlo/time_intervals.hpp) and
// quantile_ranks (simulate_time.hpp).
#include "montecarlo/time_intervals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::array<int, 3> kPercents = {50, 90, 99};

// The largest j in [lo, hi] with pred(j), given pred(lo) and pred monotone
// (true then false).
template <class Pred>
std::int64_t last_true(std::int64_t lo, std::int64_t hi, Pred&& pred) {
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (pred(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace

QuantileRanks quantile_ranks(std::int64_t tasks, int percent, double confidence) {
  if (tasks < 1) throw InputError(fmt::format("tasks = {} is out of range: quantiles need at least 1 task", tasks));
  if (percent < 1 || percent > 99)
    throw InputError(fmt::format("percent = {} is out of range: a quantile level must be in [1, 99]", percent));
  if (!(confidence > 0.0 && confidence < 1.0))
    throw InputError(fmt::format("confidence = {} is out of range: it must be in (0, 1)", confidence));
  const double half_alpha = (1.0 - confidence) / 2.0;
  const boost::math::binomial_distribution<double> b(static_cast<double>(tasks), percent / 100.0);
  const auto cdf = [&](std::int64_t j) { return j < 0 ? 0.0 : boost::math::cdf(b, static_cast<double>(j)); };
  QuantileRanks q;
  q.rank = (tasks * percent + 99) / 100;
  // low - 1: the largest j in [-1, tasks - 1] with P(B <= j) <= alpha/2.
  q.low = last_true(-1, tasks - 1, [&](std::int64_t j) { return cdf(j) <= half_alpha; }) + 1;
  // high - 1: the smallest j in [0, tasks] with P(B <= j) >= 1 - alpha/2,
  // i.e. one past the largest j in [-1, tasks - 1] with P(B <= j) < 1 - alpha/2.
  q.high = last_true(-1, tasks - 1, [&](std::int64_t j) { return cdf(j) < 1.0 - half_alpha; }) + 2;
  return q;
}

namespace detail {

Interval normal_mean_interval(double mean, double sd, std::int64_t n, double confidence) {
  if (n < 2) return {0.0, kInfinity};
  const double z = boost::math::quantile(boost::math::normal_distribution<double>(), 1.0 - (1.0 - confidence) / 2.0);
  const double half = z * sd / std::sqrt(static_cast<double>(n));
  return {std::max(0.0, mean - half), mean + half};
}

Interval lane_mean_interval(const std::vector<std::int64_t>& lane_micros, std::int64_t tasks, int lanes,
                            double confidence) {
  const std::int64_t used = std::min<std::int64_t>(lanes, tasks);  // lanes with at least one task
  if (used < 2) return {0.0, kInfinity};
  long double total = 0.0L;
  for (std::int64_t l = 0; l < used; ++l) total += static_cast<long double>(lane_micros[static_cast<std::size_t>(l)]);
  const long double n = static_cast<long double>(tasks), mean = total / n;
  long double squares = 0.0L;
  for (std::int64_t l = 0; l < used; ++l) {
    const auto in_lane = static_cast<long double>((tasks - l + lanes - 1) / lanes);
    const long double e = static_cast<long double>(lane_micros[static_cast<std::size_t>(l)]) - mean * in_lane;
    squares += e * e;
  }
  const long double variance = static_cast<long double>(used) / static_cast<long double>(used - 1) * squares / (n * n);
  const boost::math::students_t_distribution<double> t(static_cast<double>(used - 1));
  const double quantile = boost::math::quantile(t, 1.0 - (1.0 - confidence) / 2.0);
  const double half = quantile * static_cast<double>(std::sqrt(variance)) * 1e-6;
  const double m = static_cast<double>(mean) * 1e-6;
  return {std::max(0.0, m - half), m + half};
}

void fill_quantiles(std::vector<std::int64_t>& micros, double confidence, bool intervals, TimeSimResult& out) {
  const auto n = static_cast<std::int64_t>(micros.size());
  std::array<QuantileRanks, 3> ranks;
  std::vector<std::int64_t> wanted;  // 1-based ranks to select
  for (std::size_t i = 0; i < kPercents.size(); ++i) {
    ranks[i] = quantile_ranks(n, kPercents[i], confidence);
    for (const std::int64_t r : {ranks[i].rank, ranks[i].low, ranks[i].high})
      if (r >= 1 && r <= n) wanted.push_back(r);
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  // Each selection leaves everything after its rank no smaller, so the next
  // one searches only there.
  auto from = micros.begin();
  for (const std::int64_t r : wanted) {
    const auto at = micros.begin() + (r - 1);
    std::nth_element(from, at, micros.end());
    from = at + 1;
  }
  const auto seconds_at = [&](std::int64_t r) {
    return static_cast<double>(micros[static_cast<std::size_t>(r - 1)]) * 1e-6;
  };
  for (std::size_t i = 0; i < kPercents.size(); ++i) {
    SimQuantile& q = out.quantiles[i];
    q.percent = kPercents[i];
    q.seconds = seconds_at(ranks[i].rank);
    q.interval = {0.0, kInfinity};
    if (!intervals) continue;
    if (ranks[i].low >= 1) q.interval.low = seconds_at(ranks[i].low);
    if (ranks[i].high <= n) q.interval.high = seconds_at(ranks[i].high);
  }
}

}  // namespace detail
}  // namespace relsim
