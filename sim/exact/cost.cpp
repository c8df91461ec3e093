// The exact cost per task (cost.hpp; docs/model.md, Cost).
#include "exact/cost.hpp"

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

}  // namespace

void add_cost(const Route& route, const Policy& policy, const ExactOptions& options, const Steps& steps,
              const Eigen::RowVectorXd& start, ExactResult& out) {
  RELSIM_ASSERT(options.billing.has_value());
  if (options.tools)
    throw InputError("tool-faults: the cost per task (--price-in, --price-out) does not cover tool calls yet; leave "
                     "out one of them");
  const Billing& billing = *options.billing;
  validate(billing);
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
    return step;
  };
  billed.gap = steps.gap;
  const CallMatrices c = call_matrices(billed_route, policy, billed);
  const Totals t = totals(c, start, policy.n, false, 0.0);
  CostResult cost;
  cost.billing = billing;
  cost.mean = t.mean_seconds / kUnitsPerUsd;
  if (t.success > 0.0) cost.mean_done = t.mean_seconds_done / kUnitsPerUsd;
  if (options.distribution) {
    // seconds_distribution fills the time fields of a result; here they hold the cost.
    ExactResult held;
    seconds_distribution(c, start, policy, 0.0, options, held);
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
