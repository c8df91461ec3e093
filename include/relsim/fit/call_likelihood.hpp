#pragma once
// `relsim fit --sdk-retries S` (issue 14, docs/fit.md "Per-call outcomes: SDK retries inside one
// record"): when a log holds one record per model call and the SDK's own retries are hidden inside
// it, a good record is j bad requests (0 <= j <= S) then a good one, a bad record is S + 1 bad
// requests in a row. The requests are still consecutive steps of the chain, so the exact likelihood
// of what is seen is a forward pass over the 2-state chain with one transfer matrix per call, as the
// exact engine unrolls calls (include/relsim/exact/exact.hpp). Tasks are kept whole in this mode,
// grouped into distinct sequences (Sequences, baum_welch.hpp), so the pass runs once per distinct one.
#include <Eigen/Dense>

#include "relsim/fit/baum_welch.hpp"
#include "relsim/fit/counts.hpp"
#include "relsim/fit/estimate.hpp"
#include "relsim/fit/likelihood.hpp"
#include "relsim/fit/predict.hpp"

namespace relsim::fit {

inline constexpr int kMaxSdkRetries = 100;
// The official SDKs' default maxRetries / max_retries (TypeScript, Python).
inline constexpr int kSdkDefaultRetries = 2;

// Row = the last request's state (0 good, 1 bad), column = the state after the call's last
// request, entry = the probability of that and of the call's outcome:
//   good = sum_{j=0..S} (P D_bad)^j P D_good,   bad = (P D_bad)^(S+1).
// Requires a valid (p, q) with p < 1.
struct CallTransfer {
  Eigen::Matrix2d good, bad;
};
CallTransfer call_transfer(double p, double q, int sdk_retries);

// The log-likelihood of the tasks' per-call outcomes (1 = bad call), the first request of each task
// from the stationary law; -inf outside the valid region or where what is seen is impossible.
// With sdk_retries = 0 it equals log_likelihood(counts, p, q) of the same records.
double call_log_likelihood(const Sequences& calls, int sdk_retries, double p, double q);

// The maximum over the valid region: the profile over q (a grid of q, then Brent), each profile
// point a Brent maximisation over p in [0, 1/(2-q)] after a coarse grid.
MaximumLikelihood maximise_calls(const Sequences& calls, int sdk_retries);

// {x : l_max - profile(x) <= drop} by toms748_solve on each side, as profile_interval.
Interval call_profile_interval(const Sequences& calls, int sdk_retries, Parameter which,
                               const MaximumLikelihood& mle, double drop);

// The whole fit: estimate, intervals, the LR test of q = p with this likelihood; order 2 and runs
// are not run (the requests inside a call are hidden). `counts` (of the per-call records) gives
// the kinds. Throws InputError when there are no records or sdk_retries is out of [0, 100].
ChainFit estimate_calls(const Sequences& calls, int sdk_retries, const ChainCounts& counts);

// The joint 95% region of this likelihood, for predict().
PredictRegion call_region(const Sequences& calls, int sdk_retries, const ChainFit& fit);

}  // namespace relsim::fit
