#pragma once
// Exact results for the simple policy (SPEC section 3): the transfer-matrix
// engine, plus the result type shared with brute-force enumeration.
#include <cstdint>
#include <string>
#include <vector>

#include "relsim/model.hpp"
#include "relsim/policy.hpp"

namespace relsim {

// One bar of the distribution of requests per task, split by outcome.
struct RequestBin {
  std::int64_t requests = 0;
  Outcome outcome = Outcome::done;
  double probability = 0.0;
};

struct ExactResult {
  std::string method;             // "matrix" or "enumerate"
  double success = 0.0;           // P(done)
  double log10_success = 0.0;     // exact where success underflows; -inf when success is 0
  double env_error = 0.0;         // P(env_error)
  double mean_requests = 0.0;     // E[requests per task]
  std::int64_t max_requests = 0;  // largest request count with positive probability
  // Sorted by requests, done before env_error; bins of probability 0 left out.
  std::vector<RequestBin> requests;
  // False when the distribution was too large to compute (see ExactOptions);
  // success, log10_success, env_error, mean and max are always exact.
  bool distribution_complete = true;
  // Probability mass dropped from the ends of the distribution because it
  // lay below ExactOptions::prune_below (at most a few bins' worth of 1e-300).
  double pruned_mass = 0.0;
};

struct ExactOptions {
  bool distribution = true;
  // Distribution bins whose mass is below this are dropped from its ends.
  double prune_below = 1e-300;
  // Cap on bin updates (support x attempts x states^2 summed over calls)
  // spent on the distribution; above it the distribution is left out.
  // The default keeps a hopeless case (n = 10^6, r = 10) to a fraction of a second.
  double max_distribution_work = 3e8;
};

// The engine: dynamic programming over (hidden state, call, attempt) with
// the per-call transfer matrices of the chain. O(n (r + 1) k^2) for
// everything but the distribution.
ExactResult exact_matrix(const Model& model, const Policy& policy, const ExactOptions& options = {});

// The same over an explicit chain, from the given distribution of the hidden
// state at the task's first request (fresh scope: chain.initial).
ExactResult exact_matrix_from(const Chain& chain, const Eigen::RowVectorXd& start,
                              const Policy& policy, const ExactOptions& options = {});

// Continuous scope: the stationary distribution of the hidden state at the
// first request of a task, when the chain runs on from task to task.
Eigen::RowVectorXd continuous_start(const Chain& chain, const Policy& policy);

// The formula for independent faults, (1 - p^(r+1))^n.
double independent_success(double p, const Policy& policy);

// Largest absolute difference between two results: success, env_error and
// every bin of the distribution.
double max_abs_diff(const ExactResult& a, const ExactResult& b);

}  // namespace relsim
