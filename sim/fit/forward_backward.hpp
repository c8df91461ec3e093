#pragma once
// The E-step of Baum-Welch (fit/baum_welch.hpp): the expected transition, occupancy and bad
// counts of every hidden state given the sequences, by the scaled forward-backward recursions
// (Rabiner 1989, section V.A; scaled by powers of two, and only where the forward vector's sum
// would otherwise head for underflow), and the log-likelihood from the scale factors' exponents.
#include <Eigen/Dense>

#include "relsim/fit/baum_welch.hpp"

namespace relsim::fit {

struct ExpectedCounts {
  Eigen::MatrixXd transitions;  // expected i -> j moves between consecutive requests of a task
  Eigen::VectorXd occupancy;    // expected requests made in state i
  Eigen::VectorXd bad;          // expected bad requests made in state i
  double log_likelihood = 0.0;  // -inf when some task is impossible under the parameters
};

// Tasks are split into blocks by record count alone and each block is summed on its own, then the
// blocks are added in order: the result is bit-for-bit the same for any number of OpenMP threads.
ExpectedCounts expected_counts(const Sequences& data, const Eigen::MatrixXd& step, const Eigen::VectorXd& bad,
                               const Eigen::RowVectorXd& initial);

}  // namespace relsim::fit
