#pragma once
// Internal to the exact engine: the distribution of requests per task
// (ExactResult::requests), call by call over the count of extra requests.
#include <Eigen/Dense>

#include "relsim/core/policy.hpp"
#include "relsim/exact/exact.hpp"
#include "exact/call_matrices.hpp"

namespace relsim::exact_detail {

// The forward vectors split by the number of extra requests (beyond one per
// call) so far; what is alive after the last call is done, or partial_done
// in the trust bit's second half. Its ends are trimmed where their mass
// falls below options.prune_below (into out.pruned_mass), and the whole is
// given up (out.distribution_complete false) past options.max_distribution_work.
void requests_distribution(const CallMatrices& c, const Eigen::RowVectorXd& start, const Policy& policy,
                           const ExactOptions& options, ExactResult& out);

}  // namespace relsim::exact_detail
