#pragma once
// A second provider (docs/model.md, Fallback): after `after` failed requests
// of a call on the first provider, the call's remaining requests, up to its
// retry limit, go to the second. Each provider has its own fault chain,
// kinds and prices; an optional shared outage chain, when bad, fails both
// (regions of one provider often go down together).
#include <array>
#include <optional>

#include <Eigen/Dense>

#include "relsim/core/billing.hpp"
#include "relsim/core/cooldown.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"

namespace relsim {

struct Fallback {
  int after = 1;  // K: the call's first K requests go to the first provider
  // The second provider's chain: p and q (its b, g and scope are the first's).
  Model second;
  FaultWeights kinds = FaultWeights::in_stream_uniform();  // of the second provider's bad requests
  // Its prices per million tokens (the tokens and break positions are the first's).
  std::optional<double> price_in, price_out;
  // The shared outage chain's p and q; p = 0 is independent providers.
  Model shared;
  // Time mode (docs/time.md): the second provider's chain and the shared
  // outage's in seconds, in place of `second` and `shared` (two states each,
  // two_state_time_chain); the second required, the shared one optional.
  std::optional<TimeChain> second_time, shared_time;
  // Time mode's simulation only: the first provider skipped for a while after
  // failures (cooldown.hpp).
  std::optional<Cooldown> cooldown;

  bool timed() const { return second_time.has_value(); }
  bool correlated() const { return timed() ? shared_time.has_value() : shared.p > 0.0; }
  // The second provider's and the shared outage's long-run share of bad requests.
  double second_p() const;
  double shared_p() const;
};

// Throws InputError naming the bad value and its valid range: after in
// [1, the policy's most requests per call], the second and shared chains
// valid models, prices as Billing's, a cooldown valid and in seconds.
void validate(const Fallback& fallback, const Policy& policy);

// The billing of the second provider's requests: `first` at its own prices.
Billing second_billing(const Billing& first, const Fallback& fallback);

// The three chains each on its own, Gilbert's two states (gilbert_chain):
// the first provider's, the second's and the shared outage's (p = 0 when
// there is none), the last two with the first's b, g and scope.
std::array<Chain, 3> provider_chains(const Model& first, const Fallback& fallback);

// The product chain of the two providers (and the shared one): each ticks on
// the same steps, the first's b and g for both. State index own1 + 2 own2
// (+ 4 shared when correlated), so 4 or 8 states. `bad` of the chain is the
// first provider's emissions; `second_bad` the second's.
struct FallbackChain {
  Chain chain;
  Eigen::VectorXd second_bad;
};
FallbackChain fallback_chain(const Model& first, const Fallback& fallback);

// A provider's long-run share of bad requests: 1 - (1 - p)(1 - p_shared).
double marginal_p(double p, const Fallback& fallback);

// Time mode: the product of the first provider's chain in seconds (any
// number of states: a fitted hidden chain too), the second's and the shared
// outage's, Q = Q_shared (+) Q2 (+) Q1 (Kronecker sum: independent chains
// in continuous time). State index i1 + k1 (i2 + 2 shared); a request to a
// provider is bad with 1 - (1 - own)(1 - shared).
struct FallbackTimeChain {
  TimeChain chain;
  Eigen::VectorXd second_bad;
};
FallbackTimeChain fallback_time_chain(const TimeChain& first, const Fallback& fallback);

}  // namespace relsim
