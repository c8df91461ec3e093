#pragma once
// Internal to the exact engine: the distribution of wall time per task in
// time mode with fixed waits (exact_time.cpp), call by call over dense bins.
#include <Eigen/Dense>

#include "relsim/core/policy.hpp"
#include "relsim/exact/exact.hpp"
#include "exact/call_matrices.hpp"

namespace relsim::exact_detail {

// The wall time per task, call by call: the forward vectors split by the
// time so far. Fills out.seconds, out.seconds_quantiles and
// out.seconds_complete; ends trimmed below options.prune_below into
// out.pruned_mass; the whole given up (out unchanged but for pruned_mass)
// past options.max_distribution_work. `think`: seconds before every call but
// the first.
void seconds_distribution(const CallMatrices& c, const Eigen::RowVectorXd& start, const Policy& policy,
                          double think, const ExactOptions& options, ExactResult& out);

}  // namespace relsim::exact_detail
