#pragma once
// The fault process over requests (docs/model.md, Fault chain): independent or bursty
// (Gilbert 1960) faults, silent steps while the client waits, and the chain
// scope across tasks.
#include <cstdint>
#include <string>
#include <string_view>

#include <Eigen/Dense>

namespace relsim {

enum class ChainScope { fresh, continuous };

std::string_view to_string(ChainScope scope);
// Throws InputError naming the value and the accepted words.
ChainScope parse_chain_scope(std::string_view word);

// Largest number of silent steps accepted for b and g. P^(1+b) is computed
// by squaring, so the bound is about sanity, not cost.
inline constexpr std::int64_t kMaxSilentSteps = 1'000'000'000;

struct Model {
  double p = 0.0;  // long-run bad fraction; request 0 is bad with probability p
  double q = 0.0;  // P(bad | previous bad); q == p is the independent case
  std::int64_t b = 0;  // silent steps before a retry of the same call
  std::int64_t g = 0;  // silent steps before the first request of the next call
  ChainScope chain = ChainScope::fresh;

  // P(bad | previous good) = p(1-q)/(1-p). For p = 1 (then q = 1) it plays
  // no part and is reported as 1.
  double p0() const;
  bool independent() const { return q == p; }
};

// Checks every field (docs/model.md, "Valid parameters"); throws InputError
// whose message names the bad value and its valid range, for q the range
// this p allows.
void validate(const Model& model);

// The smallest q that p allows: (2p-1)/p for p > 1/2, otherwise 0.
double min_q_for(double p);

// A hidden Markov view of the fault process (Gilbert-Elliott form): k hidden
// states, each with its own probability that a request in it is bad. The
// exact engines work on this and never assume k == 2.
struct Chain {
  Eigen::MatrixXd step;        // one-step transition P (k x k, row-stochastic)
  Eigen::VectorXd bad;         // P(request bad | hidden state)
  Eigen::RowVectorXd initial;  // distribution of the hidden state at request 0 (stationary)
  Eigen::MatrixXd retry;       // P^(1+b): from a bad request to the retry of the same call
  Eigen::MatrixXd gap;         // P^(1+g): from a good request to the next call's first request

  Eigen::Index states() const { return step.rows(); }
  // True when every state emits good or bad with certainty (Gilbert's
  // two-state model): then the last request's value is the hidden state.
  bool deterministic_emissions() const;
};

// The two-state Gilbert chain of a validated model: state 0 good, state 1 bad.
Chain gilbert_chain(const Model& model);

// P^m of a row-stochastic P by repeated squaring, each product's rows put
// back on the simplex so that m = 10^9 keeps every row summing to 1.
Eigen::MatrixXd matrix_power(const Eigen::MatrixXd& step, std::int64_t m);

// The long-run distribution of a chain with row-stochastic matrix K started
// from `initial`: the Cesaro limit of initial K^t, which is the stationary
// distribution when that is unique and still well defined when K has several
// closed classes (e.g. p = 0, q = 1). Computed by doubling,
// A_2m = A_m (I + K^m) / 2, to m = 2^62, so the error is O(2^-62).
Eigen::RowVectorXd long_run_distribution(const Eigen::MatrixXd& K, const Eigen::RowVectorXd& initial);

}  // namespace relsim
