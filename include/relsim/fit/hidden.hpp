#pragma once
// `relsim fit --hidden K|auto` (issue 14): a K-state Gilbert-Elliott chain (hidden states, each with
// its own probability that a request is bad) fitted to the tasks' good/bad sequences by Baum-Welch.
// K = 1 is the independent model, K = 2 with emissions 0 and 1 is Gilbert's chain; the exact engine
// takes any k (include/relsim/core/model.hpp, Chain), so a fit goes straight to a prediction.
#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "relsim/core/model.hpp"

namespace relsim::fit {

// Largest K accepted: params grow as K^2 and logs rarely support more than a handful of states.
inline constexpr int kMaxHiddenStates = 10;

struct HiddenFit {
  int states = 0;
  Eigen::MatrixXd step;        // k x k row-stochastic
  Eigen::VectorXd bad;         // P(bad | state)
  Eigen::RowVectorXd initial;  // the stationary law of `step` (the model's first request)
  double log_likelihood = 0.0;
  double bic = 0.0;            // -2 logL + params * ln(records)
  int iterations = 0;
  bool converged = false;
};
// Baum-Welch over the tasks' good/bad sequences (1 = bad), `restarts` seeded starts, the best kept.
HiddenFit fit_hidden(const std::vector<std::vector<std::uint8_t>>& tasks, int states, std::uint64_t seed,
                     int restarts = 8);
// K in 1..max_states by BIC.
HiddenFit fit_hidden_auto(const std::vector<std::vector<std::uint8_t>>& tasks, int max_states,
                          std::uint64_t seed, int restarts = 8);
Chain to_chain(const HiddenFit& fit);  // for the exact engine (include/relsim/core/model.hpp Chain, b = g = 0)

}  // namespace relsim::fit
