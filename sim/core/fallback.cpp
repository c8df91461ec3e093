// The fallback to a second provider (fallback.hpp; docs/model.md, Fallback).
#include "relsim/core/fallback.hpp"

#include <string>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {
namespace {

// The Kronecker product of two row-stochastic matrices (or row vectors):
// the two chains step together, independently.
Eigen::MatrixXd kron(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd out(a.rows() * b.rows(), a.cols() * b.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) out.block(i * b.rows(), j * b.cols(), b.rows(), b.cols()) = a(i, j) * b;
  return out;
}

// The Kronecker sum A (+) B = A x I + I x B of two generators: the two
// chains move independently in continuous time.
Eigen::MatrixXd kron_sum(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return kron(a, Eigen::MatrixXd::Identity(b.rows(), b.cols())) + kron(Eigen::MatrixXd::Identity(a.rows(), a.cols()), b);
}

}  // namespace

double Fallback::second_p() const { return timed() ? second_time->bad_share() : second.p; }
double Fallback::shared_p() const {
  if (!correlated()) return 0.0;
  return timed() ? shared_time->bad_share() : shared.p;
}

void validate(const Fallback& fallback, const Policy& policy) {
  const int most = policy.max_requests_per_call();
  if (fallback.after < 1 || fallback.after > most)
    throw InputError(fmt::format("fallback-after = {}: must be a whole number in [1, {}] (the most requests one call "
                                 "of this policy sends)", fallback.after, most));
  try {
    validate(fallback.second);
  } catch (const InputError& e) {
    throw InputError(std::string("second provider: ") + e.what());
  }
  fallback.kinds.checked_total();
  // p = 0 is "no shared outage" (the default); given, it must be in (0, 1).
  if (!(fallback.shared.p >= 0.0 && fallback.shared.p < 1.0))
    throw InputError(fmt::format("shared-p = {} is out of range: it must be in (0, 1) (leave it out for independent "
                                 "providers)", fallback.shared.p));
  if (fallback.shared_time && !fallback.second_time)
    throw InputError("shared outage in seconds: the second provider's chain must be in seconds too (--t-good2, --t-bad2)");
  if (!fallback.timed() && fallback.correlated()) {
    try {
      validate(fallback.shared);
    } catch (const InputError& e) {
      throw InputError(std::string("shared outage: ") + e.what());
    }
  }
  for (const auto& [name, price] : {std::pair{"price-in2", fallback.price_in}, std::pair{"price-out2", fallback.price_out}})
    if (price && !(*price >= 0.0 && *price <= 1e6))
      throw InputError(fmt::format("{} = {}: must be a price in [0, 1000000] USD per million tokens", name, *price));
  if (fallback.cooldown) {
    if (!fallback.timed())
      throw InputError("cooldown: a cooldown is timed, so it needs time mode (--t-good, --t-bad) and the second "
                       "provider's chain in seconds (--t-good2, --t-bad2)");
    validate(*fallback.cooldown);
  }
}

Billing second_billing(const Billing& first, const Fallback& fallback) {
  Billing b = first;
  if (fallback.price_in) b.price_in = *fallback.price_in;
  if (fallback.price_out) b.price_out = *fallback.price_out;
  return b;
}

std::array<Chain, 3> provider_chains(const Model& first, const Fallback& fallback) {
  Model second = fallback.second, shared = fallback.shared;
  for (Model* m : {&second, &shared}) {
    m->b = first.b;
    m->g = first.g;
    m->chain = first.chain;
  }
  return {gilbert_chain(first), gilbert_chain(second), gilbert_chain(shared)};
}

// The index of the product state is own1 + 2 own2 + 4 shared (state 0 good,
// 1 bad in each chain), so the first factor is the last one kron'd.
FallbackChain fallback_chain(const Model& first, const Fallback& fallback) {
  const std::array<Chain, 3> chains = provider_chains(first, fallback);
  const Chain &one = chains[0], &two = chains[1];
  Chain c;
  c.step = kron(two.step, one.step);
  c.initial = kron(two.initial, one.initial);
  c.retry = kron(two.retry, one.retry);
  c.gap = kron(two.gap, one.gap);
  if (fallback.correlated()) {
    const Chain& s = chains[2];
    c.step = kron(s.step, c.step);
    c.initial = kron(s.initial, c.initial);
    c.retry = kron(s.retry, c.retry);
    c.gap = kron(s.gap, c.gap);
  }
  const Eigen::Index k = c.step.rows();
  c.bad.resize(k);
  Eigen::VectorXd second_bad(k);
  for (Eigen::Index i = 0; i < k; ++i) {
    const bool own1 = i & 1, own2 = i & 2, down = i & 4;
    c.bad(i) = own1 || down ? 1.0 : 0.0;
    second_bad(i) = own2 || down ? 1.0 : 0.0;
  }
  return FallbackChain{std::move(c), std::move(second_bad)};
}

double marginal_p(double p, const Fallback& fallback) {
  return fallback.correlated() ? 1.0 - (1.0 - p) * (1.0 - fallback.shared_p()) : p;
}

FallbackTimeChain fallback_time_chain(const TimeChain& first, const Fallback& fallback) {
  RELSIM_ASSERT(fallback.second_time.has_value());
  const TimeChain& two = *fallback.second_time;
  TimeChain c;
  c.generator = kron_sum(two.generator, first.generator);
  c.initial = kron(two.initial, first.initial);
  Eigen::VectorXd own1 = kron(Eigen::VectorXd::Ones(two.states()), first.bad);
  Eigen::VectorXd own2 = kron(two.bad, Eigen::VectorXd::Ones(first.states()));
  Eigen::VectorXd down = Eigen::VectorXd::Zero(c.states());
  if (fallback.shared_time) {
    const TimeChain& s = *fallback.shared_time;
    c.generator = kron_sum(s.generator, c.generator);
    c.initial = kron(s.initial, c.initial);
    const Eigen::Index k = own1.size();
    own1 = kron(Eigen::VectorXd::Ones(s.states()), own1);
    own2 = kron(Eigen::VectorXd::Ones(s.states()), own2);
    down = kron(s.bad, Eigen::VectorXd::Ones(k));
  }
  const Eigen::VectorXd up = Eigen::VectorXd::Ones(c.states()) - down;
  c.bad = Eigen::VectorXd::Ones(c.states()) - (Eigen::VectorXd::Ones(c.states()) - own1).cwiseProduct(up);
  Eigen::VectorXd second_bad = Eigen::VectorXd::Ones(c.states()) - (Eigen::VectorXd::Ones(c.states()) - own2).cwiseProduct(up);
  return FallbackTimeChain{std::move(c), std::move(second_bad)};
}

}  // namespace relsim
