// The exact cost per task (cost.hpp; docs/model.md, Cost).
#include "exact/cost.hpp"

#include <map>
#include <optional>
#include <vector>

#include "relsim/core/fallback.hpp"

#include "relsim/core/error.hpp"
#include "exact/exact_internal.hpp"
#include "exact/seconds_distribution.hpp"

namespace relsim::exact_detail {
namespace {

// The walk's clock keeps its values to a millionth (to_micros); counted in
// thousandths of a dollar, a cost is kept to the nano-dollar.
constexpr double kUnitsPerUsd = 1e3;

// What each request of a provider billed so is billed, on the walk's clock.
Clock billing_clock(const Billing& billing, bool distribution) {
  Clock clock;
  for (int kind = 0; kind < kFaultKinds; ++kind)
    clock.seconds[static_cast<std::size_t>(kind)] = billing.request_cost(static_cast<FaultKind>(kind)) * kUnitsPerUsd;
  clock.seconds[kFaultKinds] = billing.request_cost(std::nullopt) * kUnitsPerUsd;
  clock.track_done = true;
  clock.track_times = distribution;
  return clock;
}

// P(a task sends no billed request), by outcome class: its first call's
// requests all refused before the model starts until the policy gives up.
// The same walk over the refused kinds alone, a billed reply taken as the
// call's success (it ends an all-refused run); the done class is then
// "some request billed".
std::vector<double> unbilled_by_class(const Route& route, const Policy& policy, const Steps& steps,
                                      const Eigen::RowVectorXd& start) {
  const Lane& lane = route.lanes.front();
  FaultWeights refused;
  for (int kind = 0; kind < kFaultKinds; ++kind)
    if (!Billing::billed(static_cast<FaultKind>(kind)))
      refused.weight[static_cast<std::size_t>(kind)] = lane.kinds.weight[static_cast<std::size_t>(kind)];
  const double share = refused.total() / lane.kinds.total();
  std::vector<double> out(kOutcomeClasses, 0.0);
  if (!(share > 0.0)) return out;
  const Route only{{Lane{lane.bad * share, refused, nullptr}}, 0};
  out = totals(call_matrices(only, policy, steps), start, 1, false, 0.0).outcomes;
  out[static_cast<std::size_t>(index_of(OutcomeClass{Outcome::done}))] = 0.0;
  return out;
}

// The cache's write: every task with a billed request pays the surcharge
// once more (Billing::cache_surcharge), the others nothing. On the
// distribution, in the clock's units: every bin moves up by it but the
// unbilled tasks' mass at 0.
void add_cache_write(const std::vector<double>& unbilled, double surcharge_units, std::vector<SecondsBin>& bins) {
  std::map<Outcome, double> at_zero;
  for (int c = 0; c < kOutcomeClasses; ++c) at_zero[outcome_class(c).outcome] += unbilled[static_cast<std::size_t>(c)];
  std::map<std::pair<double, Outcome>, double> moved;
  for (const SecondsBin& bin : bins) {
    double billed = bin.probability;
    if (bin.seconds == 0.0) {
      const double stays = std::min(billed, at_zero[bin.outcome]);
      if (stays > 0.0) moved[{0.0, bin.outcome}] += stays;
      billed -= stays;
      // What is left at 0 is billed requests that cost nothing, or rounding of
      // the unbilled mass (the two walks sum in different orders).
      if (billed <= 1e-12 * bin.probability) billed = 0.0;
    }
    if (billed > 0.0) moved[{bin.seconds + surcharge_units, bin.outcome}] += billed;
  }
  bins.clear();
  for (const auto& [key, probability] : moved) bins.push_back(SecondsBin{key.first, key.second, probability});
}

}  // namespace

void add_cost(const Route& route, const Policy& policy, const ExactOptions& options, const Steps& steps,
              const Eigen::RowVectorXd& start, ExactResult& out) {
  RELSIM_ASSERT(options.billing.has_value());
  if (options.tools)
    throw InputError("tool-faults: the cost per task (--price-in, --price-out) does not cover tool calls yet; leave "
                     "out one of them");
  const Billing& billing = *options.billing;
  validate(billing);
  if (billing.cached_tokens > 0.0 && options.fallback)
    throw InputError("cached-tokens: a cached prefix with a fallback is not modelled yet (each provider keeps a cache "
                     "of its own); leave out one of them");
  const std::vector<Clock> clocks{
      billing_clock(billing, options.distribution),
      billing_clock(options.fallback ? second_billing(billing, *options.fallback) : billing, options.distribution)};
  Route billed_route = route;
  for (std::size_t i = 0; i < billed_route.lanes.size(); ++i) billed_route.lanes[i].clock = &clocks[i];
  const Eigen::Index k = route.lanes.front().bad.size();
  const Eigen::MatrixXd no_wait = Eigen::MatrixXd::Zero(k, k);
  Steps billed;
  billed.retry = [&steps, &no_wait](FaultKind kind, const CallState& from, const CallState& to) {
    RetryStep step = steps.retry(kind, from, to);
    step.mean_wait = 0.0;
    step.wait_micros = 0;
    step.wait_weighted = &no_wait;
    step.duration_weighted = nullptr;  // a request's cost is fixed by its kind
    return step;
  };
  billed.gap = steps.gap;
  const CallMatrices c = call_matrices(billed_route, policy, billed);
  const Totals t = totals(c, start, policy.n, false, 0.0);
  CostResult cost;
  cost.billing = billing;
  cost.mean = t.mean_seconds / kUnitsPerUsd;
  if (t.success > 0.0) cost.mean_done = t.mean_seconds_done / kUnitsPerUsd;
  // A cached prefix: the first billed request's write, once a task (a done task has one).
  const bool cached = billing.cached_tokens > 0.0;
  std::vector<double> unbilled(kOutcomeClasses, 0.0);
  if (cached) {
    unbilled = unbilled_by_class(route, policy, billed, start);
    double none = 0.0;
    for (const double p : unbilled) none += p;
    cost.mean += billing.cache_surcharge() * (1.0 - none);
    if (t.success > 0.0) cost.mean_done += billing.cache_surcharge();
  }
  if (options.distribution) {
    // seconds_distribution fills the time fields of a result; here they hold the cost.
    ExactResult held;
    seconds_distribution(c, start, policy, 0.0, options, held);
    // The surcharge to the nano-dollar, as each request's cost is kept.
    if (cached && held.seconds_complete)
      add_cache_write(unbilled, static_cast<double>(nano_surcharge(billing)) * 1e-9 * kUnitsPerUsd, held.seconds);
    if (held.seconds_complete) {
      cost.complete = true;
      for (const SecondsBin& bin : held.seconds)
        cost.bins.push_back(CostBin{bin.seconds / kUnitsPerUsd, bin.outcome, bin.probability});
      const Quantiles q = seconds_quantiles(held.seconds);
      cost.quantiles = Quantiles{q.p50 / kUnitsPerUsd, q.p90 / kUnitsPerUsd, q.p99 / kUnitsPerUsd};
    }
  }
  out.cost = std::move(cost);
}

}  // namespace relsim::exact_detail
