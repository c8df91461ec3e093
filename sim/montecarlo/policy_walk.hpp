#pragma once
// Header only: a template over the source of draws.
// Internal: one task of any policy over the simulator's draws (the scheme of
// docs/methods.md). Each call takes one uniform for its run of bad requests,
// each bad request one kind word; the policy's rules (`TaskRunner`) decide
// how many of them the task sends. simulate() counts what it sends, the plan
// generator records every drawn request of each call the task reaches.
#include <cstdint>
#include <optional>

#include "relsim/core/policy.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/montecarlo/simulate.hpp"

namespace relsim::detail {

// on_request(request, sent): `request` is nullopt for a good one; `sent` is
// false for the rest of a call's drawn run after the policy ended the task.
// after_call(c): called after model call c (0-based) succeeded, before the
// next; the task stops there when it returns false (a tool call ended it).
template <class OnRequest, class AfterCall>
TaskRunner walk_policy_task(const DrawScheme& s, const Policy& policy, std::uint64_t seed, std::int64_t task,
                            Entry entry, OnRequest&& on_request, AfterCall&& after_call) {
  TaskRunner runner(policy);
  const int most = s.r + 1;  // the most requests a call can send
  const auto t = static_cast<std::uint64_t>(task);
  std::uint64_t bad = 0;
  for (std::int64_t c = 0; c < policy.n && !runner.ended(); ++c) {
    const int a = s.bad_run(entry, rng::call_uniform(seed, t, static_cast<std::uint64_t>(c)));
    // A call that takes a content fault's answer ends on that bad request:
    // the rest of its drawn run is not the chain's any more, and the next
    // call starts from a bad request's state.
    bool took_bad = false;
    for (int j = 0; j < a && !took_bad; ++j) {
      const FaultKind kind = s.kind(rng::kind_word(seed, t, bad++));
      const bool sent = !runner.ended();
      if (sent) runner.feed(kind);
      on_request(std::optional<FaultKind>(kind), sent);
      took_bad = sent && runner.call() > c;
    }
    if (a < most && !took_bad) {
      const bool sent = !runner.ended();
      if (sent) runner.feed(std::nullopt);
      on_request(std::optional<FaultKind>(), sent);
    }
    entry = took_bad ? Entry::after_bad : Entry::after_good;
    if (runner.call() > c && !after_call(c)) break;
  }
  return runner;
}

template <class OnRequest>
TaskRunner walk_policy_task(const DrawScheme& s, const Policy& policy, std::uint64_t seed, std::int64_t task,
                            Entry entry, OnRequest&& on_request) {
  return walk_policy_task(s, policy, seed, task, entry, on_request, [](std::int64_t) { return true; });
}

}  // namespace relsim::detail
