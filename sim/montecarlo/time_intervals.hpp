#pragma once
// Internal: the intervals of simulate_time (simulate_time.hpp): the mean's
// (normal for independent tasks, batch means over lanes otherwise) and the
// quantiles' order statistics.
#include <cstdint>
#include <vector>

#include "relsim/montecarlo/simulate_time.hpp"

namespace relsim::detail {

// mean +- z sd / sqrt(n), z the normal quantile at 1 - alpha/2 (central
// limit theorem), the low end clamped at 0; [0, +inf) for n < 2.
Interval normal_mean_interval(double mean, double sd, std::int64_t n, double confidence);

// Batch means over independent lanes (Law & Kelton, "Simulation Modeling
// and Analysis", batch means; here the batches are the lanes, which are
// independent by construction): the ratio estimator S / N of the mean, its
// variance L / (L - 1) sum_l (T_l - mean n_l)^2 / N^2 over the L lanes with
// tasks (T_l the lane's total, n_l its tasks), Student's t with L - 1
// degrees of freedom; [0, +inf) with one lane.
Interval lane_mean_interval(const std::vector<std::int64_t>& lane_micros, std::int64_t tasks, int lanes,
                            double confidence);

// out.quantiles from the tasks' times in microseconds (reordered: selected
// in place, never fully sorted); intervals only when `intervals`.
void fill_quantiles(std::vector<std::int64_t>& micros, double confidence, bool intervals, TimeSimResult& out);

}  // namespace relsim::detail
