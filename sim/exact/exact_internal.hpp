#pragma once
// No exact_internal.cpp: defined in exact.cpp, used by exact.cpp and exact_time.cpp.
// Internal to the exact engine: the forward pass over the calls of a task,
// shared by the discrete chain (exact.cpp) and the time mode (exact_time.cpp).
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Dense>

#include "relsim/exact/exact.hpp"
#include "exact/call_matrices.hpp"

namespace relsim::exact_detail {

// Everything but the distribution, with the forward vector renormalised at
// every call (the scaling of Rabiner 1989 for hidden Markov models), so
// log10 P(success) stays exact where P(success) underflows.
struct Totals {
  double success = 0.0;
  double log10_success = 0.0;
  double mean_requests = 0.0;
  double mean_bad_requests = 0.0;
  double mean_seconds = 0.0;  // with `think` seconds before every call but the first
  double mean_seconds_done = std::numeric_limits<double>::quiet_NaN();  // E[seconds | done], advance_seconds given
  std::vector<double> outcomes = std::vector<double>(kOutcomeClasses, 0.0);
  // With tool calls: sum over k of goes_on^(k-1) S_k, the chance that the
  // tool call after model call k is made.
  double tool_reach = 0.0;
  Eigen::RowVectorXd exit;  // state at the next task's first request (unnormalised)
};

// `goes_on`: P(the tool call after a successful model call lets the task go
// on); 1 without tool calls. The exit state does not count tasks a tool call
// ended, so want_exit needs goes_on == 1.
Totals totals(const CallMatrices& c, const Eigen::RowVectorXd& start, std::int64_t n, bool want_exit, double think,
              double goes_on = 1.0);

// Success, outcomes, means, the worst case and (options.distribution) the
// requests distribution of a task from the hidden-state law `start`.
ExactResult result_from(const CallMatrices& c, const Eigen::RowVectorXd& start, const Policy& policy,
                        const ExactOptions& options, double think);

// Refuses what a fallback does not cover yet (tool calls, relsim tune's walk
// memo) and a second provider's chain in the wrong units: in seconds
// (`in_seconds`, exact_time) or in steps (exact_matrix); then validates it.
void check_fallback(const Fallback& fallback, const ExactOptions& options, const Policy& policy, bool in_seconds);

// Continuous scope: the long-run law of the hidden state at a task's first
// request, the chain running on from task to task.
Eigen::RowVectorXd continuous_start_of(const CallMatrices& c, const Eigen::RowVectorXd& initial, std::int64_t n);

}  // namespace relsim::exact_detail
