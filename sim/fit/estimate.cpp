// estimate(): the MLE, its intervals and the special cases where the log
// cannot identify q (include/relsim/fit/estimate.hpp).
#include "relsim/fit/estimate.hpp"

#include <cmath>
#include <limits>

#include <boost/math/distributions/chi_squared.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim::fit {
namespace {

// With no bad request (or no good one) the profile over q puts q where the
// unseen state never returns, so p rests on the tasks' first requests alone:
// a binomial with zero successes, whose exact one-sided 95% bound is
// 1 - 0.05^(1/n) (the "rule of three", 3/n, for large n).
ChainFit one_sided(const ChainCounts& counts, bool no_faults) {
  ChainFit fit;
  const double n = double(no_faults ? counts.first[0] : counts.first[1]);
  const double bound = std::pow(0.05, 1.0 / n);
  fit.p = no_faults ? 0.0 : 1.0;
  fit.mle = {fit.p, no_faults ? 0.0 : 1.0, 0.0};
  fit.p_ci = no_faults ? Interval{0.0, 1.0 - bound} : Interval{bound, 1.0};
  fit.q = fit.p0 = kNaN;
  fit.q_ci = {kNaN, kNaN};
  fit.q_identified = false;
  fit.note = no_faults
                 ? fmt::format("no faults in {} requests: q is not identified (no bad request to follow); "
                               "p's interval is the one-sided 95% upper bound from the {} tasks' first requests",
                               counts.records, counts.tasks)
                 : fmt::format("every one of {} requests is bad: q is not identified (no good request to "
                               "follow); p's interval is the one-sided 95% lower bound from the {} tasks' first "
                               "requests",
                               counts.records, counts.tasks);
  const std::string why = no_faults ? "no faults" : "no good requests";
  fit.independence = {0.0, 1.0, kNaN, why};
  fit.order2 = order2_test(counts);
  fit.runs = {0.0, 0.0, kNaN, why};
  return fit;
}

}  // namespace

double interval_drop() { return boost::math::quantile(boost::math::chi_squared_distribution<double>(1.0), 0.95) / 2.0; }
double region_drop() { return boost::math::quantile(boost::math::chi_squared_distribution<double>(2.0), 0.95) / 2.0; }

ChainFit estimate(const ChainCounts& counts) {
  if (counts.records == 0) throw InputError("no records to fit");
  ChainFit fit;
  if (counts.bad() == 0 || counts.good() == 0) {
    fit = one_sided(counts, counts.bad() == 0);
    fit.kinds = kind_mix(counts);
    return fit;
  }
  fit.mle = maximise(counts);
  fit.p = fit.mle.p;
  fit.q = fit.mle.q;
  fit.p0 = fit.p < 1.0 ? fit.p * (1.0 - fit.q) / (1.0 - fit.p) : kNaN;
  fit.p_ci = profile_interval(counts, Parameter::p, fit.mle, interval_drop());
  const std::int64_t transitions =
      counts.transitions[0][0] + counts.transitions[0][1] + counts.transitions[1][0] + counts.transitions[1][1];
  if (transitions == 0) {
    fit.q = fit.p0 = kNaN;
    fit.q_ci = {kNaN, kNaN};
    fit.q_identified = false;
    fit.note = "every task has a single request: q is not identified (no transition seen)";
    fit.independence = {0.0, 1.0, kNaN, "no transitions"};
    fit.runs = {0.0, 0.0, kNaN, "no transitions"};
  } else {
    fit.q_ci = profile_interval(counts, Parameter::q, fit.mle, interval_drop());
    fit.independence = independence_test(counts, fit.mle);
    fit.runs = runs_test(counts, fit.q, fit.p0);
  }
  fit.order2 = order2_test(counts);
  fit.kinds = kind_mix(counts);
  return fit;
}

}  // namespace relsim::fit
