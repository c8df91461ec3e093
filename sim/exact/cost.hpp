#pragma once
// Internal to the exact engine: the cost per task (docs/model.md, Cost),
// for the discrete chain (exact.cpp) and in seconds (exact_time.cpp).
#include <Eigen/Dense>

#include "relsim/core/policy.hpp"
#include "relsim/exact/exact.hpp"
#include "exact/call_matrices.hpp"

namespace relsim::exact_detail {

// Fills out.cost from options.billing: a second walk over the calls' states
// on the same steps as the task's own (`steps`, from the hidden-state law
// `start`), whose clock counts what each request is billed where the time
// mode counts its seconds, with no waits (a wait bills nothing). Its mean is
// E[cost], its done path E[cost | done], and its distribution (as the time
// mode's wall time, in bins of a common step) the cost's. The clocks of
// `route`'s lanes are replaced by their providers' billings (options.fallback's
// prices for the second).
void add_cost(const Route& route, const Policy& policy, const ExactOptions& options, const Steps& steps,
              const Eigen::RowVectorXd& start, ExactResult& out);

}  // namespace relsim::exact_detail
