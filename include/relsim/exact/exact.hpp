#pragma once
// Exact results (docs/model.md, Exact answers): the transfer-matrix engine for every policy
// of docs/model.md (Policies), plus the result type shared with brute-force
// enumeration (simple policy).
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/billing.hpp"
#include "relsim/core/fallback.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/core/tool_faults.hpp"

namespace relsim {

// One bar of the distribution of requests per task, split by outcome.
struct RequestBin {
  std::int64_t requests = 0;
  Outcome outcome = Outcome::done;
  double probability = 0.0;
};

// One bar of the distribution of wall time per task (time mode, fixed waits).
struct SecondsBin {
  double seconds = 0.0;  // rounded to the microsecond
  Outcome outcome = Outcome::done;
  double probability = 0.0;
};

// Quantiles of a distribution: the smallest x with P(X <= x) >= level.
struct Quantiles {
  double p50 = 0.0, p90 = 0.0, p99 = 0.0;
};

// One bar of the distribution of cost per task (ExactOptions::billing).
struct CostBin {
  double usd = 0.0;  // to the nano-dollar
  Outcome outcome = Outcome::done;
  double probability = 0.0;
};

// Cost per task in USD (docs/model.md, Cost): the sum of what the task's
// requests are billed (Billing::request_cost).
struct CostResult {
  Billing billing;
  double mean = 0.0;                                          // E[cost per task]
  double mean_done = std::numeric_limits<double>::quiet_NaN();  // E[cost | done]; NaN when no task ends done
  // The distribution by outcome, sorted by cost then outcome, and its
  // quantiles over all tasks; when `complete` (ExactOptions::distribution,
  // within max_distribution_work). Each request's cost is kept to the
  // nano-dollar there (exact for prices in tenths of a cent per million
  // tokens); the means are not rounded.
  bool complete = false;
  std::vector<CostBin> bins;
  Quantiles quantiles;
};

struct ExactResult {
  std::string method;             // "matrix", "enumerate" or "enumerate-naive"
  double success = 0.0;           // P(done)
  double log10_success = 0.0;     // exact where success underflows; -inf when success is 0
  double env_error = 0.0;         // P(env_error), all kinds
  // P(each outcome class), indexed by index_of(OutcomeClass): done,
  // harness_error, hang, partial_done, then env_error:<kind> and then
  // crash:<kind> for each FaultKind in enum order.
  std::vector<double> outcomes = std::vector<double>(kOutcomeClasses, 0.0);
  double wrong = 0.0;             // P(crash, hang or partial_done; with tools also side_effect_left, silent_wrong)
  double mean_requests = 0.0;     // E[requests per task]
  // E[bad requests per task]; NaN where the method does not track it
  // (enumeration). Over mean_requests it is the share of sent requests that
  // fail (fault_share), which is not the chain's p (docs/model.md).
  double mean_bad_requests = 0.0;
  std::int64_t max_requests = 0;  // largest request count with positive probability
  // Sorted by requests, then by outcome in the order of the Outcome enum
  // (done, env_error, harness_error, crash, hang, partial_done; not
  // index_of's order); bins of probability 0 left out.
  std::vector<RequestBin> requests;
  // False when the distribution was too large to compute (see ExactOptions);
  // success, log10_success, env_error, mean and max are always exact.
  bool distribution_complete = true;
  // Probability mass dropped from the ends of the distribution because it
  // lay below ExactOptions::prune_below (at most a few bins' worth of 1e-300).
  double pruned_mass = 0.0;

  // With tool calls (ExactOptions::tools): the model and P(each ToolClass).
  // success is then P(done): every model and tool call fine, no result
  // corrupted; outcomes[] holds the model's classes, each reached only
  // while the tool calls before it went on; the requests distribution is
  // not computed.
  std::optional<ToolModel> tools{};
  std::vector<double> tool_outcomes = std::vector<double>(kToolClasses, 0.0);

  // With ExactOptions::billing: what the tasks cost.
  std::optional<CostResult> cost;
  // With ExactOptions::fallback: the fallback the result is for.
  std::optional<Fallback> fallback{};

  // Time mode (exact_time) only.
  bool timed = false;
  double mean_seconds = 0.0;  // E[wall time per task]: first request's start to last request's end
  // E[wall time | done]: the tasks that end well, which mean_seconds mixes
  // with the failed ones (which stop early). NaN when not computed
  // (ExactOptions::done_seconds) or when no task ends done.
  double mean_seconds_done = std::numeric_limits<double>::quiet_NaN();
  // Wall time per task by outcome, sorted by seconds then outcome; filled
  // when every wait and duration is fixed (TimeModel::fixed_times) and the support stays
  // within ExactOptions::max_distribution_work, else empty.
  std::vector<SecondsBin> seconds;
  bool seconds_complete = false;
  Quantiles seconds_quantiles;  // meaningful when seconds_complete

  // mean_bad_requests / mean_requests (NaN when not tracked or no request is sent).
  double fault_share() const;
};

// The reactions of `react` one walk over a call's states asked for, kept for
// the next walk with the same policy and the same kinds, which asks for the
// same ones in the same order whatever its step matrices (relsim tune: every
// backoff of a policy). Not shared between threads: one per thread.
class WalkMemo {
 public:
  WalkMemo();
  ~WalkMemo();
  WalkMemo(const WalkMemo&) = delete;
  WalkMemo& operator=(const WalkMemo&) = delete;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct ExactOptions {
  // Kinds a bad request takes (they decide the layered policies' moves and
  // name the outcomes). The simple policy's success does not depend on them.
  FaultWeights kinds = FaultWeights::in_stream_uniform();
  bool distribution = true;
  // Distribution bins whose mass is below this are dropped from its ends.
  double prune_below = 1e-300;
  // Cap on bin updates (support x attempts x states^2 summed over calls)
  // spent on the distribution; above it the distribution is left out.
  // The default keeps a hopeless case (n = 10^6, r = 10) to a fraction of a second.
  double max_distribution_work = 3e8;
  // Tool calls after each successful model call (docs/tool_model.md); the
  // matrix engine's fresh scope only (InputError otherwise).
  std::optional<ToolModel> tools{};
  // Time mode: also the mean wall time of the tasks that end done
  // (ExactResult::mean_seconds_done); `relsim tune` leaves it out of its search.
  bool done_seconds = true;
  // When given, the walk replays the reactions it holds for this policy and
  // kinds, or records them for the next call (the answer is the same).
  WalkMemo* walk_memo = nullptr;
  // When given, also the cost per task (ExactResult::cost): its mean, its
  // mean over the tasks that end done and (with `distribution`) its
  // distribution. Not with tool calls.
  std::optional<Billing> billing{};
  // When given, a call moves to a second provider after `after` failed
  // requests (docs/model.md, Fallback): the engine works on the product of
  // the providers' chains. The matrix engine's discrete chain only, without
  // tool calls or a walk memo (InputError otherwise).
  std::optional<Fallback> fallback{};
};

// The engine: dynamic programming over (hidden state, call, call state) with
// the per-call transfer matrices of the chain and the policy. O(n C k^2),
// C the most requests of a call, for everything but the distribution.
ExactResult exact_matrix(const Model& model, const Policy& policy, const ExactOptions& options = {});

// The same over an explicit chain, from the given distribution of the hidden
// state at the task's first request (fresh scope: chain.initial).
ExactResult exact_matrix_from(const Chain& chain, const Eigen::RowVectorXd& start,
                              const Policy& policy, const ExactOptions& options = {});

// Continuous scope: the stationary distribution of the hidden state at the
// first request of a task, when the chain runs on from task to task.
Eigen::RowVectorXd continuous_start(const Chain& chain, const Policy& policy,
                                    const FaultWeights& kinds = FaultWeights::in_stream_uniform());

// Time mode (docs/time.md): the same engine, each step between two requests
// exp(QΔ) for the Δ the policy, the durations and the backoff give it, and
// averaged over the jitter. Also fills mean_seconds and, for fixed waits, the
// wall-time distribution and its quantiles.
ExactResult exact_time(const TimeModel& time, const Policy& policy, const ExactOptions& options = {});

// The quantiles of a wall-time distribution sorted by seconds, over all outcomes.
Quantiles seconds_quantiles(const std::vector<SecondsBin>& bins);

// P(success) when every request fails independently with probability p, its
// kind drawn from `kinds` (a closed form, docs/exact.md): a stream attempt of
// a call ends good with G = (1 - p) sum_{j=0..s} a^j and in a fault its
// stream layer retries with C = c sum_{j=0..s} a^j, where a and c are p times
// the shares of the kinds the HTTP layer and the stream layer retry (for the
// simple policy s = 0 and c is every kind but the fatal one); a call succeeds
// with G (1 - C^(r+1)) / (1 - C), a task with that to the n. With the
// default kinds, (1 - p^(r+1))^n. nullopt for the naive and budgeted
// policies, which this form does not cover.
std::optional<double> independent_success(double p, const Policy& policy,
                                          const FaultWeights& kinds = FaultWeights::in_stream_uniform());
// With a fallback after K requests (docs/model.md, Fallback): P(success)
// when both providers fail independently of each other and from request to
// request (q = p, q2 = p2, no shared outage), under the simple policy, with
// no fatal kind on either: (1 - p^K p2^(r+1-K))^n. nullopt otherwise.
std::optional<double> independent_fallback_success(const Model& model, const Policy& policy, const FaultWeights& kinds,
                                                   const Fallback& fallback);

// The form independent_success takes for `policy` and `kinds`, as the table
// prints it: "(1 - p^(r+1))^n" when the stream layer retries every kind, the
// general one otherwise, "" when it does not cover the policy.
std::string_view independent_form(const Policy& policy, const FaultWeights& kinds = FaultWeights::in_stream_uniform());

// Largest absolute difference between two results: success, env_error and
// every bin of the distribution.
double max_abs_diff(const ExactResult& a, const ExactResult& b);

}  // namespace relsim
