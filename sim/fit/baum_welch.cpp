// One Baum-Welch run (relsim/fit/baum_welch.hpp): E-step in fit/forward_backward.cpp, M-step and
// the guarded iteration here.
#include "relsim/fit/baum_welch.hpp"

#include <algorithm>
#include <cmath>

#include "fit/forward_backward.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/model.hpp"

namespace relsim::fit {

namespace {

// Step halvings tried when a full EM step lowers the log-likelihood (see `baum_welch`).
constexpr int kHalvings = 4;

struct Params {
  Eigen::MatrixXd step;
  Eigen::VectorXd bad;
  Eigen::RowVectorXd initial;
};

// The first request of a task comes from the stationary law of the step matrix: that is the
// model relsim computes with (docs/model.md; Chain::initial). Inside EM it is an approximation:
// the M-step below maximises over step and emissions as if the initial law were free, and then
// ties the initial law to the new step matrix, so an iteration is no longer guaranteed to raise
// the likelihood. The log-likelihood check in `baum_welch` guards against that.
Params with_stationary(Eigen::MatrixXd step, Eigen::VectorXd bad) {
  const Eigen::Index k = step.rows();
  Params p{std::move(step), std::move(bad), {}};
  p.initial = long_run_distribution(p.step, Eigen::RowVectorXd::Constant(k, 1.0 / double(k)));
  return p;
}

// Expected-count maximiser for the step rows and the emissions. A state with no expected
// transitions out (or no expected requests) keeps its old row (or emission).
Params m_step(const ExpectedCounts& counts, const Params& old) {
  Eigen::MatrixXd step = old.step;
  Eigen::VectorXd bad = old.bad;
  for (Eigen::Index i = 0; i < step.rows(); ++i) {
    const double out = counts.transitions.row(i).sum();
    if (out > 0.0) step.row(i) = counts.transitions.row(i) / out;
    if (counts.occupancy(i) > 0.0) bad(i) = std::clamp(counts.bad(i) / counts.occupancy(i), 0.0, 1.0);
  }
  return with_stationary(std::move(step), std::move(bad));
}

Params mix(const Params& from, const Params& to, double weight) {
  return with_stationary((1.0 - weight) * from.step + weight * to.step, (1.0 - weight) * from.bad + weight * to.bad);
}

ExpectedCounts e_step(const Sequences& data, const Params& p) {
  return expected_counts(data, p.step, p.bad, p.initial);
}

}  // namespace

double hidden_bic(double log_likelihood, int states, std::int64_t records) {
  const double params = double(states) * (states - 1) + states;
  return -2.0 * log_likelihood + params * std::log(double(std::max<std::int64_t>(records, 1)));
}

// Each iteration takes the M-step and keeps it when the log-likelihood does not drop. When it
// drops (the stationary initial law, see with_stationary), the step is halved towards the current
// parameters up to kHalvings times; if none of those raises the log-likelihood either, the current
// parameters are a fixed point of the guarded map and the run stops there as converged.
HiddenFit baum_welch(const Sequences& data, const Eigen::MatrixXd& step, const Eigen::VectorXd& bad,
                     int max_iterations, double tolerance, std::vector<double>* trace) {
  RELSIM_ASSERT(step.rows() == step.cols() && step.rows() == bad.size() && step.rows() > 0);
  Params cur = with_stationary(step, bad);
  ExpectedCounts counts = e_step(data, cur);
  if (trace) trace->push_back(counts.log_likelihood);
  HiddenFit fit;
  for (int it = 0; it < max_iterations && std::isfinite(counts.log_likelihood); ++it) {
    const Params proposal = m_step(counts, cur);
    Params next = proposal;
    ExpectedCounts next_counts = e_step(data, next);
    for (int h = 1; h <= kHalvings && !(next_counts.log_likelihood >= counts.log_likelihood); ++h) {
      next = mix(cur, proposal, std::ldexp(1.0, -h));
      next_counts = e_step(data, next);
    }
    if (!(next_counts.log_likelihood >= counts.log_likelihood)) {
      fit.converged = true;
      break;
    }
    const double gain = next_counts.log_likelihood - counts.log_likelihood;
    cur = std::move(next);
    counts = std::move(next_counts);
    ++fit.iterations;
    if (trace) trace->push_back(counts.log_likelihood);
    if (gain <= tolerance * std::max(1.0, std::abs(counts.log_likelihood))) {
      fit.converged = true;
      break;
    }
  }
  fit.states = int(cur.step.rows());
  fit.step = std::move(cur.step);
  fit.bad = std::move(cur.bad);
  fit.initial = std::move(cur.initial);
  fit.log_likelihood = counts.log_likelihood;
  fit.bic = hidden_bic(fit.log_likelihood, fit.states, data.records);
  return fit;
}

}  // namespace relsim::fit
