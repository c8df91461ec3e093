#include "relsim/core/model.hpp"

#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

std::string_view to_string(ChainScope scope) {
  return scope == ChainScope::fresh ? "fresh" : "continuous";
}

ChainScope parse_chain_scope(std::string_view word) {
  if (word == "fresh") return ChainScope::fresh;
  if (word == "continuous") return ChainScope::continuous;
  throw InputError(fmt::format("chain = '{}' is not a chain scope: use fresh or continuous", word));
}

double min_q_for(double p) { return p > 0.5 ? (2.0 * p - 1.0) / p : 0.0; }

double Model::p0() const {
  if (p >= 1.0) return 1.0;
  return std::min(1.0, p * (1.0 - q) / (1.0 - p));
}

void validate(const Model& m) {
  // Written as !(in range) so that NaN is rejected too.
  if (!(m.p >= 0.0 && m.p <= 1.0))
    throw InputError(fmt::format("p = {} is out of range: p must be in [0, 1]", m.p));
  if (!(m.q >= 0.0 && m.q <= 1.0))
    throw InputError(fmt::format("q = {} is out of range: q must be in [0, 1]", m.q));
  if (m.p == 1.0 && m.q != 1.0)
    throw InputError(fmt::format("q = {} is out of range for p = 1: q must be 1 (every request bad)", m.q));
  // p0 = p(1-q)/(1-p) <= 1  <=>  q >= (2p-1)/p. A relative slack of a few
  // ulps keeps a q printed from that bound (e.g. 0.75 for p = 0.8) valid.
  if (m.p < 1.0 && m.p * (1.0 - m.q) > (1.0 - m.p) * (1.0 + 1e-12))
    throw InputError(fmt::format(
        "q = {} is out of range for p = {}: q must be in [{:.17g}, 1] so that p0 = p(1-q)/(1-p) <= 1",
        m.q, m.p, min_q_for(m.p)));
  if (m.b < 0 || m.b > kMaxSilentSteps)
    throw InputError(fmt::format("b = {} is out of range: b must be in [0, {}]", m.b, kMaxSilentSteps));
  if (m.g < 0 || m.g > kMaxSilentSteps)
    throw InputError(fmt::format("g = {} is out of range: g must be in [0, {}]", m.g, kMaxSilentSteps));
}

namespace {

// Puts each row of a row-stochastic matrix back on the simplex: products of
// stochastic matrices drift off it by an ulp per product, and squaring
// doubles the drift each time (10^6 silent steps lost 4e-11 of each row).
void renormalise_rows(Eigen::MatrixXd& m) {
  for (Eigen::Index i = 0; i < m.rows(); ++i) m.row(i) /= m.row(i).sum();
}

}  // namespace

Eigen::MatrixXd matrix_power(const Eigen::MatrixXd& step, std::int64_t m) {
  RELSIM_ASSERT(m >= 0);
  Eigen::MatrixXd result = Eigen::MatrixXd::Identity(step.rows(), step.cols());
  Eigen::MatrixXd base = step;
  while (m > 0) {
    if (m & 1) {
      result = result * base;
      renormalise_rows(result);
    }
    m >>= 1;
    if (m > 0) {
      base = base * base;
      renormalise_rows(base);
    }
  }
  return result;
}

Eigen::RowVectorXd long_run_distribution(const Eigen::MatrixXd& K, const Eigen::RowVectorXd& initial) {
  const Eigen::Index k = K.rows();
  Eigen::MatrixXd average = Eigen::MatrixXd::Identity(k, k);  // A_1
  Eigen::MatrixXd power = K;                                   // K^1
  // Without renormalising, a row summing to 1 + 4e-16 would grow like
  // (1 + 4e-16)^(2^62) and overflow.
  for (int doubling = 0; doubling < 62; ++doubling) {
    average = 0.5 * (average + average * power);
    power = power * power;
    renormalise_rows(average);
    renormalise_rows(power);
  }
  Eigen::RowVectorXd mu = initial * average;
  return mu / mu.sum();
}

bool Chain::deterministic_emissions() const {
  for (Eigen::Index i = 0; i < bad.size(); ++i)
    if (bad(i) != 0.0 && bad(i) != 1.0) return false;
  return true;
}

Chain gilbert_chain(const Model& model) {
  validate(model);
  const double p0 = model.p0();
  Chain c;
  c.step.resize(2, 2);
  c.step << 1.0 - p0, p0, 1.0 - model.q, model.q;
  c.bad.resize(2);
  c.bad << 0.0, 1.0;
  c.initial.resize(2);
  c.initial << 1.0 - model.p, model.p;
  c.retry = matrix_power(c.step, 1 + model.b);
  c.gap = matrix_power(c.step, 1 + model.g);
  return c;
}

}  // namespace relsim
