#pragma once
// What `relsim fit` estimates from the counts (docs/fit.md): the MLE of
// (p, q) with 95% profile-likelihood intervals, p0, the tests (independent
// against bursty, order 1 against order 2, run lengths against the chain's
// geometric laws) and the fault-kind mix.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "relsim/fit/counts.hpp"
#include "relsim/fit/likelihood.hpp"

namespace relsim::fit {

// Chi-square quantiles (Boost.Math): the drop in log-likelihood that bounds a
// 95% profile interval (df 1) and the joint 95% region (df 2).
double interval_drop();
double region_drop();

struct Test {
  double statistic = 0.0;
  double df = 0.0;
  double p_value = 0.0;  // NaN when the test cannot be run (say why in `why_not`)
  std::string why_not;
};

// LR test of q = p (the MLE is then the bad fraction) against free q, df 1.
Test independence_test(const ChainCounts& counts, const MaximumLikelihood& mle);
// LR test of order 1 against order 2 on the transitions from each task's
// third request, conditional likelihoods from the triplet counts, df 2.
Test order2_test(const ChainCounts& counts);
// Runs of bad requests against geometric(continue q), runs of good ones
// against geometric(continue 1 - p0): at each length the runs that reached
// it and could be seen to go on, against the share the chain says ends
// there; the tail pooled so that every bin expects >= 5; df = bins - 1 per
// law, the two laws' statistics and dfs added.
Test runs_test(const ChainCounts& counts, double q, double p0);

struct KindMix {
  std::map<std::string, std::int64_t> counts;  // every kind seen on a bad request
  std::map<std::string, double> shares;        // of all bad requests
  std::string kinds_option;                    // "cut=12,stall=3": relsim's kinds only; "" when none
  std::vector<std::string> other;              // kinds that are not relsim fault kinds
};
KindMix kind_mix(const ChainCounts& counts);

struct ChainFit {
  MaximumLikelihood mle;
  double p = 0.0;
  double q = 0.0, p0 = 0.0;  // NaN when not identified
  Interval p_ci, q_ci;       // q_ci NaN when q is not identified
  bool q_identified = true;
  std::string note;          // why q is not identified, and what p_ci then is
  Test independence, order2, runs;
  KindMix kinds;
};

// Throws InputError when there are no records.
ChainFit estimate(const ChainCounts& counts);

}  // namespace relsim::fit
