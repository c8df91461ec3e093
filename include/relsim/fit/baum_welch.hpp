#pragma once
// One Baum-Welch run (scaled forward-backward, then the M-step) for a hidden Markov chain with
// Bernoulli emissions, the engine under fit_hidden (hidden.hpp). Public so that tests can follow a
// single run's log-likelihood; `relsim fit` uses fit_hidden.
#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "relsim/fit/hidden.hpp"

namespace relsim::fit {

// The tasks' sequences, each distinct one stored once with its count. The log-likelihood is a sum
// over tasks, so equal tasks need one forward-backward pass: 10^5 tasks of 10 requests have at
// most 2^10 distinct sequences. Empty tasks are dropped. Order: first occurrence (deterministic).
struct Sequences {
  std::vector<std::vector<std::uint8_t>> distinct;
  std::vector<double> count;  // tasks with that sequence
  std::int64_t records = 0;   // requests over all tasks
  std::int64_t bad = 0;       // bad requests over all tasks
};
// Throws InputError when a value is neither 0 nor 1.
Sequences distinct_sequences(const std::vector<std::vector<std::uint8_t>>& tasks);

// -2 logL + (k(k-1) + k) ln(records): k rows of k-1 free transition probabilities, k emissions
// (the initial law is not free: it is the stationary law of the step matrix).
double hidden_bic(double log_likelihood, int states, std::int64_t records);

// EM from (step, bad) until the relative log-likelihood gain is at most `tolerance` or after
// `max_iterations` accepted iterations. The first request of every task is drawn from the
// stationary law of the current step matrix. `trace`, when given, receives the log-likelihood of
// the start and of every accepted iteration (never decreasing). States are not reordered.
HiddenFit baum_welch(const Sequences& data, const Eigen::MatrixXd& step, const Eigen::VectorXd& bad,
                     int max_iterations, double tolerance, std::vector<double>* trace = nullptr);

}  // namespace relsim::fit
