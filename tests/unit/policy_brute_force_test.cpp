// The exact engine (exact_matrix) against an independent brute force of all
// four policies (unit/policy_brute_force.hpp, written from docs/policies.md
// and docs/model.md alone, sharing no policy code with relsim) on random
// small cases: every outcome class, every (requests, outcome) bin, the mean
// and the largest number of requests must agree. relsim's public types are
// used only to call exact_matrix and to read its result. The brute force's
// own checks against the docs and hand-computed values are in
// policy_brute_force_docs_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "relsim/exact/exact.hpp"
#include "unit/policy_brute_force.hpp"

namespace relsim::policy_brute_force_test {

using namespace relsim::test::policy_bf;

// ---------------------------------------------------------------------------
// The engine against the brute force.

ExactResult engine(const PolicyCase& c) {
  const Model m{.p = c.p,
                .q = c.q,
                .b = c.b,
                .g = c.g,
                .chain = c.continuous ? ChainScope::continuous : ChainScope::fresh};
  const Policy pol{.n = c.policy.n, .r = c.policy.r, .s = c.policy.s, .B = c.policy.B, .kind = c.policy.policy};
  ExactOptions opt;
  opt.kinds = FaultWeights{};
  for (const auto& [k, weight] : c.kinds) opt.kinds.weight[static_cast<std::size_t>(kKinds[k].id)] = weight;
  return exact_matrix(m, pol, opt);
}

// Returns the largest absolute difference over every compared probability and mean.
double expect_engine_matches(const PolicyCase& c, const PolicyBrute& bf) {
  SCOPED_TRACE(c.str());
  double diff = 0.0;
  auto near = [&](double got, long double want, const std::string& what) {
    const double d = std::abs(got - static_cast<double>(want));
    diff = std::max(diff, d);
    EXPECT_NEAR(got, static_cast<double>(want), 1e-12) << what;
  };
  EXPECT_FALSE(bf.overrun) << "a task outran its sequence";
  long double total = 0.0L, env = 0.0L, wrong = 0.0L;
  for (int o = 0; o < kClasses; ++o) {
    total += bf.outcomes[static_cast<std::size_t>(o)];
    if (class_is_env_error(o)) env += bf.outcomes[static_cast<std::size_t>(o)];
    if (class_is_wrong(o)) wrong += bf.outcomes[static_cast<std::size_t>(o)];
  }
  EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-13) << "the brute force's own outcomes";

  const ExactResult ex = engine(c);
  EXPECT_TRUE(ex.distribution_complete);
  near(ex.success, bf.outcomes[kDone], "success");
  near(ex.env_error, env, "env_error");
  near(ex.wrong, wrong, "wrong");
  near(ex.mean_requests, bf.mean, "mean requests");
  EXPECT_EQ(ex.max_requests, bf.max_requests);
  // Every outcome class of the engine, by name; each of ours must be one of them.
  std::map<std::string, double> classes;
  for (int o = 0; o < kOutcomeClasses; ++o) classes[outcome_class(o).name()] = ex.outcomes[static_cast<std::size_t>(o)];
  for (int o = 0; o < kClasses; ++o) {
    const auto it = classes.find(class_name(o));
    if (it == classes.end()) {
      ADD_FAILURE() << "the engine has no outcome class " << class_name(o);
      continue;
    }
    near(it->second, bf.outcomes[static_cast<std::size_t>(o)], class_name(o));
    classes.erase(it);
  }
  for (const auto& [name, prob] : classes) EXPECT_EQ(prob, 0.0) << name << " is never an outcome here";
  // Every bin, both ways.
  std::map<std::pair<int, std::string>, double> bins;
  for (const auto& bin : ex.requests)
    bins[{static_cast<int>(bin.requests), std::string(to_string(bin.outcome))}] += bin.probability;
  for (const auto& [key, prob] : bf.bins) {
    const auto it = bins.find(key);
    near(it == bins.end() ? 0.0 : it->second, prob, "bin " + std::to_string(key.first) + " " + key.second);
  }
  for (const auto& [key, prob] : bins)
    EXPECT_TRUE(bf.bins.count(key)) << "engine bin the brute force never reaches: " << key.first << " " << key.second
                                    << " p " << prob;
  return diff;
}

// Random small cases: any p, a q that p allows, 1-4 kinds of any stage with
// random weights, s, r, B, n, silent steps, either scope; at most
// `max_sequences` sequences each.
PolicyCase random_policy_case(std::mt19937_64& gen, PolicyKind policy, double max_sequences) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  while (true) {
    PolicyCase c;
    c.policy.policy = policy;
    c.policy.n = pick(1, 3);
    c.policy.r = pick(0, 3);
    c.policy.s = policy == PolicyKind::simple ? 0 : pick(0, 2);
    if (policy == PolicyKind::budgeted) c.policy.B = pick(1, (c.policy.s + 1) * (c.policy.r + 1) + 1);
    const int shape = pick(0, 9);
    c.p = shape == 0 ? 0.0 : 0.02 + 0.88 * unit(gen);
    const double min_q = c.p > 0.5 ? (2 * c.p - 1) / c.p : 0.0;
    c.q = shape == 1 ? c.p : shape == 2 ? min_q + 1e-3 * (1 - min_q) : shape == 3 ? 1.0 : min_q + (1 - min_q) * unit(gen);
    // On the boundary q = (2p - 1)/p only where it is exact in binary: p0 = 1,
    // so a good request is never followed by a good one. (With a rounded q,
    // p0 computed from it may be 1 - 1e-16 and leave a path of probability
    // 1e-32 that moves the worst case but no probability.)
    if (shape == 4) {
      c.p = 0.5;
      c.q = 0.0;
    }
    if (pick(0, 1)) {
      c.b = pick(0, 3);
      c.g = pick(0, 3);
    }
    // Continuous scope needs a unique long run: not with p = 0 or q = 1, nor
    // with the periodic chain p = 0.5, q = 0 (done and failed tasks can each
    // repeat forever).
    c.continuous = pick(0, 2) == 0 && c.p > 0.0 && c.q < 1.0 && shape != 4;
    const int k = pick(1, 4);
    std::vector<int> all(kKindCount);
    for (int i = 0; i < kKindCount; ++i) all[static_cast<std::size_t>(i)] = i;
    std::shuffle(all.begin(), all.end(), gen);
    for (int i = 0; i < k; ++i) c.kinds.emplace_back(all[static_cast<std::size_t>(i)], 0.25 + 2.75 * unit(gen));
    if (c.sequences() <= max_sequences) return c;
  }
}

// The same with a content fault (max_tokens, bad_tool_args,
// duplicate_event) in every mix: the trust bit's partial_done, and the chain
// stepping to the next call from a bad request a loop took as its answer.
TEST(PolicyBruteForce, EngineMatchesIndependentBruteForceWithContentFaultsInEveryMix) {
  std::mt19937_64 gen(20261207);
  const int content[] = {kind_index("max_tokens"), kind_index("bad_tool_args"), kind_index("duplicate_event")};
  for (auto policy : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted}) {
    long long sequences = 0;
    double diff = 0.0, partial = 0.0;
    int cases = 0;
    for (; cases < 150; ++cases) {
      PolicyCase c = random_policy_case(gen, policy, 6e4);
      const int pick = content[std::uniform_int_distribution<int>(0, 2)(gen)];
      bool has = false;
      for (const auto& kw : c.kinds) has = has || kKinds[kw.first].where == Where::content;
      if (!has) c.kinds.front().first = pick;
      std::sort(c.kinds.begin(), c.kinds.end());
      c.kinds.erase(std::unique(c.kinds.begin(), c.kinds.end(),
                                [](const auto& a, const auto& b) { return a.first == b.first; }),
                    c.kinds.end());
      if (c.sequences() > 6e4) continue;
      const PolicyBrute bf = policy_brute_force(c);
      sequences += bf.sequences;
      partial = std::max(partial, static_cast<double>(bf.outcomes[kPartial]));
      diff = std::max(diff, expect_engine_matches(c, bf));
    }
    std::cout << "[ brute    ] " << to_string(policy) << " with content faults: " << cases << " cases, " << sequences
              << " sequences, largest P(partial_done) " << partial << ", max |engine - brute force| " << diff << "\n";
    if (policy == PolicyKind::simple) EXPECT_EQ(partial, 0.0);  // simple retries every kind
    else EXPECT_GT(partial, 0.1);
  }
}

TEST(PolicyBruteForce, EngineMatchesIndependentBruteForceOnRandomSmallCases) {
  const auto t0 = std::chrono::steady_clock::now();
  std::mt19937_64 gen(20261001);
  for (auto policy : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted}) {
    long long sequences = 0;
    double diff = 0.0;
    int cases = 0;
    for (; cases < 200; ++cases) {
      const PolicyCase c = random_policy_case(gen, policy, 6e4);
      const PolicyBrute bf = policy_brute_force(c);
      sequences += bf.sequences;
      diff = std::max(diff, expect_engine_matches(c, bf));
    }
    std::cout << "[ brute    ] " << to_string(policy) << ": " << cases << " cases, " << sequences
              << " sequences, max |engine - brute force| " << diff << "\n";
  }
  std::cout << "[ brute    ] "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
}

}  // namespace relsim::policy_brute_force_test
