#pragma once
// Header only: the step loop is inlined into the general walk's task.
// Internal: one task with a fallback to a second provider (core/fallback.hpp;
// docs/methods.md, Fallback), request by request. The three two-state chains
// (first provider, second, shared outage) each take one uniform per request
// from Stream::fallback_chain, indexed 3 x request + chain; a bad request's
// kind one word from Stream::fallback_kind, indexed by the request, from the
// kinds of the provider it went to. The policy's rules (`TaskRunner`) route
// and end the task, as they do for one provider.
#include <array>
#include <cstdint>
#include <optional>

#include "relsim/core/fallback.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/rng.hpp"

namespace relsim::detail {

// What every task of a run shares: each chain's law at a task's first
// request and after a retry's and a next call's steps, and the kind cuts of
// each provider.
struct FallbackDraws {
  struct Steps {
    double start = 0.0;                    // P(bad) at the first request
    std::array<double, 2> retry{}, gap{};  // P(bad | previous good, previous bad) after P^(1+b), P^(1+g)
  };
  std::array<Steps, 3> chains;  // first, second, shared
  std::array<KindCuts, 2> cuts;
  int after = 1;

  static FallbackDraws make(const Model& first, const Fallback& fallback, const FaultWeights& kinds) {
    FallbackDraws d;
    const std::array<Chain, 3> chains = provider_chains(first, fallback);
    for (std::size_t c = 0; c < 3; ++c) {
      const Chain& chain = chains[c];
      d.chains[c].start = chain.initial(1);
      for (Eigen::Index from = 0; from < 2; ++from) {
        d.chains[c].retry[static_cast<std::size_t>(from)] = chain.retry(from, 1);
        d.chains[c].gap[static_cast<std::size_t>(from)] = chain.gap(from, 1);
      }
    }
    d.cuts = {kind_cuts(kinds), kind_cuts(fallback.kinds)};
    d.after = fallback.after;
    return d;
  }
};

// on_request(replies, lane): the request went to provider `lane` (0 the
// first, 1 the second) and got replies[lane] (nullopt for a good one);
// replies[1 - lane] is what the other provider would have answered (a
// fallback plan's other column, plan_gen.hpp). after_call(c) as in
// walk_policy_task.
template <class OnRequest, class AfterCall>
TaskRunner walk_fallback_task(const FallbackDraws& d, const Policy& policy, std::uint64_t seed, std::int64_t task,
                              OnRequest&& on_request, AfterCall&& after_call) {
  TaskRunner runner(policy);
  const auto t = static_cast<std::uint64_t>(task);
  std::array<bool, 3> bad{};
  for (std::uint64_t i = 0; !runner.ended(); ++i) {
    // A retry of the call steps as a retry; a next call (after an answer,
    // good or a content fault's the policy took) as a gap.
    const bool retry = runner.state().used > 0;
    for (std::size_t c = 0; c < 3; ++c) {
      const FallbackDraws::Steps& s = d.chains[c];
      const double p_bad = i == 0 ? s.start : (retry ? s.retry : s.gap)[bad[c] ? 1 : 0];
      bad[c] = rng::uniform(seed, rng::Stream::fallback_chain, t, 3 * i + c) < p_bad;
    }
    const int lane = to_second_provider(runner.state().used, d.after) ? 1 : 0;
    std::array<std::optional<FaultKind>, 2> replies;
    for (std::size_t l = 0; l < 2; ++l)
      if (bad[l] || bad[2]) replies[l] = kind_of_word(d.cuts[l], rng::word(seed, rng::Stream::fallback_kind, t, i));
    const std::optional<FaultKind>& reply = replies[static_cast<std::size_t>(lane)];
    const std::int64_t calls = runner.call();
    runner.feed(reply);
    on_request(replies, lane);
    if (runner.call() > calls && !after_call(calls)) break;
  }
  return runner;
}

}  // namespace relsim::detail
