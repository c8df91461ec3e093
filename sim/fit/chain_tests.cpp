// The three tests of the fitted chain (include/relsim/fit/estimate.hpp,
// docs/fit.md, Tests): likelihood ratios for independence and order 2, a
// chi-square on run lengths for the shape of the bursts.
#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/chi_squared.hpp>

#include "relsim/fit/estimate.hpp"

namespace relsim::fit {
namespace {

double upper_tail(double statistic, double df) {
  if (df <= 0.0) return kNaN;
  return boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(df),
                                                  std::max(statistic, 0.0)));
}

double xlogx_over(double n, double total) { return n == 0.0 ? 0.0 : n * std::log(n / total); }

struct Bin {
  double at_risk = 0.0, ended = 0.0;
};

// One law: runs of one outcome, ending with probability `end` at each length.
// Bins are single lengths while the next one still expects >= 5 endings and
// >= 5 continuations; the rest is the pooled tail, merged into the last bin
// when it expects fewer than 5 itself.
void one_law(const RunHistogram& completed, const RunHistogram& continued, double end, Test& test) {
  if (!(end > 0.0 && end < 1.0)) return;  // a degenerate law: nothing to test
  const std::int64_t longest = std::max(completed.max_length(), continued.max_length());
  std::vector<Bin> bins;
  Bin tail;
  bool pooling = false;
  for (std::int64_t k = 1; k <= longest; ++k) {
    const double ended = double(completed.at(k)), risk = ended + double(continued.at(k));
    if (!pooling && risk * std::min(end, 1.0 - end) >= 5.0) {
      bins.push_back({risk, ended});
    } else {
      pooling = true;
      tail.at_risk += risk;
      tail.ended += ended;
    }
  }
  if (tail.at_risk * std::min(end, 1.0 - end) >= 5.0) bins.push_back(tail);
  else if (!bins.empty()) bins.back().at_risk += tail.at_risk, bins.back().ended += tail.ended;
  if (bins.size() < 2) return;
  for (const Bin& b : bins) {
    const double expected = b.at_risk * end;
    test.statistic += (b.ended - expected) * (b.ended - expected) / (b.at_risk * end * (1.0 - end));
  }
  test.df += double(bins.size()) - 1.0;
}

}  // namespace

Test independence_test(const ChainCounts& counts, const MaximumLikelihood& mle) {
  const double bad_fraction = double(counts.bad()) / double(counts.records);
  Test t;
  t.df = 1.0;
  t.statistic = std::max(0.0, 2.0 * (mle.log_likelihood - log_likelihood(counts, bad_fraction, bad_fraction)));
  t.p_value = upper_tail(t.statistic, t.df);
  return t;
}

Test order2_test(const ChainCounts& counts) {
  Test t;
  t.df = 2.0;
  double l2 = 0.0, l1 = 0.0, seen = 0.0;
  for (int b = 0; b < 2; ++b) {
    double from_b = 0.0, to[2] = {0.0, 0.0};
    for (int a = 0; a < 2; ++a) {
      const double n0 = double(counts.triplets[a][b][0]), n1 = double(counts.triplets[a][b][1]);
      l2 += xlogx_over(n0, n0 + n1) + xlogx_over(n1, n0 + n1);
      to[0] += n0, to[1] += n1, from_b += n0 + n1;
    }
    l1 += xlogx_over(to[0], from_b) + xlogx_over(to[1], from_b);
    seen += from_b;
  }
  if (seen == 0.0) {
    t.p_value = kNaN;
    t.why_not = "no task has three requests";
    return t;
  }
  t.statistic = std::max(0.0, 2.0 * (l2 - l1));
  t.p_value = upper_tail(t.statistic, t.df);
  return t;
}

Test runs_test(const ChainCounts& counts, double q, double p0) {
  Test t;
  one_law(counts.completed[1], counts.continued[1], 1.0 - q, t);
  one_law(counts.completed[0], counts.continued[0], p0, t);
  t.p_value = upper_tail(t.statistic, t.df);
  if (t.df <= 0.0) t.why_not = "too few runs for a bin that expects 5";
  return t;
}

}  // namespace relsim::fit
