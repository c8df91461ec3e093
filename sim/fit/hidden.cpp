// fit_hidden, fit_hidden_auto, to_chain (relsim/fit/hidden.hpp): seeded restarts of Baum-Welch
// (relsim/fit/baum_welch.hpp), the closed form for K = 1, canonical state order, BIC.
#include "relsim/fit/hidden.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/fit/baum_welch.hpp"

namespace relsim::fit {

namespace {

// Every restart first runs at most kScreenIterations EM iterations; only the best of them then
// runs on to convergence (at most kMaxIterations in all). Restarts that start in a poor basin
// show it within a few dozen iterations, and this bounds the cost of 8 restarts at about
// 8 * 40 + 1000 E-steps where running every restart to convergence could cost 8000.
constexpr int kScreenIterations = 40;
constexpr int kMaxIterations = 1000;
// Relative log-likelihood gain below which a run has converged: about 10^-3 in logL for 10^6
// records, far below what changes a BIC choice or an estimate's interval.
constexpr double kTolerance = 1e-9;
constexpr int kMaxRestarts = 1000;

// A uniform in [0, 1) from the generator's raw bits, so that a seed gives the same starts with
// every standard library (std::uniform_real_distribution's algorithm is not specified).
double uniform(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

// A random start: emissions spread over (0.02, 0.98), rows leaning to their diagonal (faults
// come in bursts, so states tend to persist), every entry positive so no path is ruled out.
HiddenFit random_start(std::mt19937_64& rng, int k) {
  HiddenFit start;
  start.step.resize(k, k);
  start.bad.resize(k);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) start.step(i, j) = 0.05 + uniform(rng) + (i == j ? 1.0 : 0.0);
    start.step.row(i) /= start.step.row(i).sum();
  }
  for (int i = 0; i < k; ++i) start.bad(i) = 0.02 + 0.96 * uniform(rng);
  return start;
}

// States ordered by P(bad) ascending (ties keep their order), so that equal fits print the same.
HiddenFit canonical(HiddenFit fit) {
  const int k = fit.states;
  std::vector<int> order(static_cast<std::size_t>(k));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return fit.bad(a) < fit.bad(b); });
  HiddenFit out = fit;
  for (int i = 0; i < k; ++i) {
    out.bad(i) = fit.bad(order[i]);
    out.initial(i) = fit.initial(order[i]);
    for (int j = 0; j < k; ++j) out.step(i, j) = fit.step(order[i], order[j]);
  }
  return out;
}

// K = 1: every request bad with the same probability, whose MLE is the bad fraction.
HiddenFit independent_fit(const Sequences& data) {
  HiddenFit fit;
  fit.states = 1;
  fit.step = Eigen::MatrixXd::Ones(1, 1);
  fit.initial = Eigen::RowVectorXd::Ones(1);
  const double n = double(data.records), b = double(data.bad);
  const double f = b / n;
  fit.bad = Eigen::VectorXd::Constant(1, f);
  fit.log_likelihood = (b > 0 ? b * std::log(f) : 0.0) + (n - b > 0 ? (n - b) * std::log1p(-f) : 0.0);
  fit.bic = hidden_bic(fit.log_likelihood, 1, data.records);
  fit.converged = true;
  return fit;
}

HiddenFit fit_sequences(const Sequences& data, int states, std::uint64_t seed, int restarts) {
  if (states == 1) return independent_fit(data);
  std::mt19937_64 rng(seed);
  HiddenFit best;
  for (int r = 0; r < restarts; ++r) {
    const HiddenFit start = random_start(rng, states);
    HiddenFit run = baum_welch(data, start.step, start.bad, kScreenIterations, kTolerance);
    if (r == 0 || run.log_likelihood > best.log_likelihood) best = std::move(run);
  }
  if (!best.converged) {
    HiddenFit more = baum_welch(data, best.step, best.bad, kMaxIterations - best.iterations, kTolerance);
    more.iterations += best.iterations;
    best = std::move(more);
  }
  return canonical(std::move(best));
}

Sequences checked_sequences(const std::vector<std::vector<std::uint8_t>>& tasks, int restarts) {
  if (restarts < 1 || restarts > kMaxRestarts)
    throw InputError(fmt::format("restarts = {} is out of range: use 1 .. {}", restarts, kMaxRestarts));
  Sequences data = distinct_sequences(tasks);
  if (data.records == 0) throw InputError("no requests to fit a hidden chain to: every task is empty");
  return data;
}

void check_states(int states) {
  if (states < 1 || states > kMaxHiddenStates)
    throw InputError(fmt::format("--hidden {} is out of range: use 1 .. {} states, or auto", states, kMaxHiddenStates));
}

}  // namespace

HiddenFit fit_hidden(const std::vector<std::vector<std::uint8_t>>& tasks, int states, std::uint64_t seed,
                     int restarts) {
  check_states(states);
  return fit_sequences(checked_sequences(tasks, restarts), states, seed, restarts);
}

HiddenFit fit_hidden_auto(const std::vector<std::vector<std::uint8_t>>& tasks, int max_states, std::uint64_t seed,
                          int restarts) {
  check_states(max_states);
  const Sequences data = checked_sequences(tasks, restarts);
  HiddenFit best;
  for (int k = 1; k <= max_states; ++k) {
    HiddenFit fit = fit_sequences(data, k, seed, restarts);
    if (k == 1 || fit.bic < best.bic) best = std::move(fit);  // a tie keeps the smaller K
  }
  return best;
}

Chain to_chain(const HiddenFit& fit) {
  Chain chain;
  chain.step = fit.step;
  chain.bad = fit.bad;
  chain.initial = fit.initial;
  chain.retry = fit.step;  // P^(1+b) with b = 0
  chain.gap = fit.step;    // P^(1+g) with g = 0
  return chain;
}

}  // namespace relsim::fit
