// The independent brute force of the four policies (unit/policy_brute_force.hpp)
// checked on its own: scripted request sequences against the worst cases and
// rows of docs/policies.md, and its distributions against values worked out
// by hand (persistent faults, one kind at a time, the reference mix). The
// engine is compared with it in policy_brute_force_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "relsim/core/policy.hpp"
#include "unit/policy_brute_force.hpp"

namespace relsim::policy_brute_force_docs_test {

using namespace relsim::test::policy_bf;

// ---------------------------------------------------------------------------
// The brute force itself against the docs: scripted sequences.

PolicyCase scripted(PolicyKind policy, int s, int r, int B = 0, std::int64_t n = 1) {
  PolicyCase c;
  c.policy = {policy, n, r, s, B};
  return c;
}

Ending run_script(const PolicyCase& c, const std::vector<std::string>& names, int repeat = 1) {
  std::vector<int> seq;
  for (int i = 0; i < repeat; ++i)
    for (const auto& name : names) seq.push_back(name == "ok" ? -1 : kind_index(name));
  return run_task(c.policy, seq);
}

void expect_ending(const Ending& e, int requests, const std::string& outcome) {
  EXPECT_FALSE(e.overrun);
  EXPECT_EQ(e.requests, requests);
  EXPECT_EQ(class_name(e.outcome), outcome);
}

// docs/policies.md: worst cases per call, simple r + 1, naive and layered
// (s + 1)(r + 1) (naive on persistent slow headers, layered on "headers late
// s times, then a stall, every round"), budgeted min(B, (s + 1)(r + 1)).
TEST(PolicyBruteForce, ScriptedRunsMeetTheDocumentedWorstCases) {
  const auto naive = scripted(PolicyKind::naive, 2, 2), layered = scripted(PolicyKind::layered, 2, 2);
  expect_ending(run_script(scripted(PolicyKind::simple, 2, 2), {"slow_headers"}, 20), 3, "env_error:slow_headers");
  expect_ending(run_script(naive, {"slow_headers"}, 20), 9, "crash:slow_headers");
  expect_ending(run_script(naive, {"reset"}, 20), 9, "crash:reset");
  expect_ending(run_script(layered, {"slow_headers"}, 20), 3, "env_error:slow_headers");
  expect_ending(run_script(layered, {"slow_headers", "slow_headers", "stall"}, 20), 9, "env_error:stall");
  expect_ending(run_script(scripted(PolicyKind::budgeted, 2, 2, 4), {"slow_headers", "slow_headers", "stall"}, 20), 4,
                "env_error:slow_headers");
  expect_ending(run_script(scripted(PolicyKind::budgeted, 2, 2, 9), {"slow_headers", "slow_headers", "stall"}, 20), 9,
                "env_error:stall");
  expect_ending(run_script(scripted(PolicyKind::budgeted, 2, 2, 20), {"slow_headers", "slow_headers", "stall"}, 20), 9,
                "env_error:stall");
}

// docs/policies.md, the naive row: a status error outlives the HTTP retries
// and escapes as crash:<kind> (s + 1 requests); slow_headers / reset that the
// HTTP layer gave up on reach the stream layer, whose retry is a fresh HTTP
// call; overloaded crashes at once, stall hangs; cut is retried r times.
TEST(PolicyBruteForce, ScriptedNaiveFollowsTheDocsRow) {
  const auto naive = scripted(PolicyKind::naive, 2, 2);
  expect_ending(run_script(naive, {"http_529"}, 20), 3, "crash:http_529");
  expect_ending(run_script(naive, {"http_429", "http_503", "ok"}), 3, "done");
  expect_ending(run_script(naive, {"slow_headers", "slow_headers", "reset", "slow_headers", "ok"}), 5, "done");
  expect_ending(run_script(naive, {"slow_headers", "slow_headers", "reset", "http_500", "http_500", "http_500"}), 6,
                "crash:http_500");
  expect_ending(run_script(naive, {"cut", "overloaded"}), 2, "crash:overloaded");
  expect_ending(run_script(naive, {"slow_headers", "stall"}), 2, "hang");
  expect_ending(run_script(naive, {"cut", "no_stop", "malformed"}), 3, "crash:malformed");
  expect_ending(run_script(naive, {"cut", "http_400"}), 2, "harness_error");
}

// Layered: one layer per fault; an in-stream retry starts a fresh HTTP call
// with its own s; http_400 is harness_error under every policy; n calls.
TEST(PolicyBruteForce, ScriptedLayeredAndSimpleFollowTheDocsRows) {
  const auto layered = scripted(PolicyKind::layered, 2, 2, 0, 2);
  expect_ending(run_script(layered, {"http_529", "http_529", "cut", "http_529", "http_529", "ok", "ok"}), 7, "done");
  expect_ending(run_script(layered, {"ok", "cut", "overloaded", "stall"}), 4, "env_error:stall");
  expect_ending(run_script(layered, {"ok", "reset", "reset", "reset"}), 4, "env_error:reset");
  for (auto policy : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted})
    expect_ending(run_script(scripted(policy, 2, 2, 4, 2), {"ok", "cut", "http_400"}), 3, "harness_error");
  expect_ending(run_script(scripted(PolicyKind::simple, 0, 1, 0, 2), {"reset", "ok", "stall", "ok"}), 4, "done");
}

// ---------------------------------------------------------------------------
// The brute force's distributions against values worked out by hand.

PolicyCase chain_case(PolicyKind policy, int s, int r, int B, std::int64_t n, double p, double q,
                      std::vector<std::pair<std::string, double>> kinds, int length = 0) {
  PolicyCase c = scripted(policy, s, r, B, n);
  c.p = p;
  c.q = q;
  for (const auto& [name, w] : kinds) c.kinds.emplace_back(kind_index(name), w);
  c.length = length;
  return c;
}

long double outcome(const PolicyBrute& bf, const std::string& name) {
  for (int o = 0; o < kClasses; ++o)
    if (class_name(o) == name) return bf.outcomes[static_cast<std::size_t>(o)];
  ADD_FAILURE() << name;
  return 0.0L;
}

// Every request bad (p = q = 1) and one kind: all mass on the worst case.
TEST(PolicyBruteForce, PersistentFaultsPutAllMassOnTheWorstCase) {
  struct Row {
    PolicyKind policy;
    int B;
    const char* kind;
    int requests;
    const char* outcome;
  } rows[] = {
      {PolicyKind::naive, 0, "slow_headers", 9, "crash:slow_headers"},
      {PolicyKind::naive, 0, "http_503", 3, "crash:http_503"},
      {PolicyKind::naive, 0, "cut", 3, "crash:cut"},
      {PolicyKind::layered, 0, "slow_headers", 3, "env_error:slow_headers"},
      {PolicyKind::layered, 0, "no_stop", 3, "env_error:no_stop"},
      {PolicyKind::budgeted, 2, "slow_headers", 2, "env_error:slow_headers"},
      {PolicyKind::simple, 0, "http_429", 3, "env_error:http_429"},
  };
  for (const auto& row : rows) {
    const PolicyBrute bf = policy_brute_force(chain_case(row.policy, 2, 2, row.B, 1, 1.0, 1.0, {{row.kind, 1.0}}));
    SCOPED_TRACE(std::string(to_string(row.policy)) + " " + row.kind);
    EXPECT_FALSE(bf.overrun);
    EXPECT_NEAR(static_cast<double>(outcome(bf, row.outcome)), 1.0, 1e-15);
    EXPECT_EQ(bf.max_requests, row.requests);
    EXPECT_NEAR(static_cast<double>(bf.mean), row.requests, 1e-15);
  }
}

// p = 0.3, q = 0.8 (p0 = 3/35), s = r = 2, one pre-response kind:
//   layered, slow_headers: the HTTP layer alone, 3 requests; fails w.p.
//     p q^2 = 0.192; mean 1 + p + p q = 1.54.
//   naive, slow_headers: 9 requests, crash w.p. p q^8 = 0.3 * 0.16777216
//     = 0.050331648.
//   naive, http_529: the HTTP layer's 3, then crash, w.p. 0.192.
//   budgeted, B = 4, cut only, s = 0, r = 5: stops at 4, env_error:cut
//     w.p. p q^3 = 0.1536; mean 1 + p + p q + p q^2 = 1.732.
TEST(PolicyBruteForce, OneKindCasesMatchHandComputedValues) {
  PolicyBrute bf = policy_brute_force(chain_case(PolicyKind::layered, 2, 2, 0, 1, 0.3, 0.8, {{"slow_headers", 1.0}}));
  EXPECT_NEAR(static_cast<double>(outcome(bf, "done")), 0.808, 1e-15);
  EXPECT_NEAR(static_cast<double>(outcome(bf, "env_error:slow_headers")), 0.192, 1e-15);
  EXPECT_NEAR(static_cast<double>(bf.mean), 1.54, 1e-15);
  EXPECT_EQ(bf.max_requests, 3);

  bf = policy_brute_force(chain_case(PolicyKind::naive, 2, 2, 0, 1, 0.3, 0.8, {{"slow_headers", 1.0}}));
  EXPECT_NEAR(static_cast<double>(outcome(bf, "crash:slow_headers")), 0.050331648, 1e-15);
  EXPECT_EQ(bf.max_requests, 9);

  bf = policy_brute_force(chain_case(PolicyKind::naive, 2, 2, 0, 1, 0.3, 0.8, {{"http_529", 1.0}}));
  EXPECT_NEAR(static_cast<double>(outcome(bf, "crash:http_529")), 0.192, 1e-15);
  EXPECT_EQ(bf.max_requests, 3);

  bf = policy_brute_force(chain_case(PolicyKind::budgeted, 0, 5, 4, 1, 0.3, 0.8, {{"cut", 1.0}}));
  EXPECT_NEAR(static_cast<double>(outcome(bf, "env_error:cut")), 0.1536, 1e-15);
  EXPECT_NEAR(static_cast<double>(bf.mean), 1.732, 1e-15);
  EXPECT_EQ(bf.max_requests, 4);
}

// The reference mix of docs/policies.md (p = 0.3, q = 0.8, r = 2, n = 2,
// s = 2, B = 4, the five in-stream kinds at 1/5 each). With no pre-response
// kind a call sends at most r + 1 = 3 requests, so sequences of length 6 do.
//
// simple, layered, budgeted (the docs: layered equals simple, B never binds):
//   success 0.808 * 33.08/35 = 26.72864/35 = 0.763675428571428571...;
//   mean: call 1 sends 1 + p + p q = 1.54, call 2 (after a good request,
//   p0 = 3/35) 1 + p0 (1 + q) = 40.4/35, so 1.54 + 0.808 * 40.4/35
//   = 86.5432/35 = 2.472662857142857...
// naive: of a bad request's kinds u = 3/5 are retried (cut, no_stop,
//   malformed), 1/5 hangs (stall), 1/5 crashes (overloaded). A call whose
//   first request is bad w.p. x succeeds w.p. (1 - x) + x u (1 - q)(1 + u q),
//   hangs w.p. (x/5)(1 + u q + (u q)^2), ends crash:cut w.p. x (u q)^2 / 5,
//   and sends 1 + x u (1 + u q) requests. With u q = 0.48:
//   call 1 (x = 0.3): success 0.75328, hang 0.102624, crash:cut 0.013824,
//     requests 1.2664;
//   call 2 (x = 3/35): success 32.5328/35, hang 1.02624/35,
//     crash:cut 0.13824/35, requests 37.664/35.
//   success 0.75328 * 32.5328/35 = 24.506307584/35 = 0.70018021668571428...
//   hang = crash:overloaded = 0.102624 + 0.75328 * 1.02624/35
//     = (3.59184 + 0.7730460672)/35 = 4.3648860672/35 = 0.12471103049142857...
//   crash:cut (= no_stop = malformed) = 0.013824 + 0.75328 * 0.13824/35
//     = (0.48384 + 0.1041334272)/35 = 0.5879734272/35 = 0.016799240777142857...
//   mean 1.2664 + 0.75328 * 37.664/35 = (44.324 + 28.37153792)/35
//     = 72.69553792/35 = 2.0770153691428571...
TEST(PolicyBruteForce, ReferenceMixMatchesHandComputedValues) {
  const std::vector<std::pair<std::string, double>> mix = {
      {"cut", 1}, {"no_stop", 1}, {"malformed", 1}, {"overloaded", 1}, {"stall", 1}};
  for (auto policy : {PolicyKind::simple, PolicyKind::layered, PolicyKind::budgeted}) {
    SCOPED_TRACE(std::string(to_string(policy)));
    const PolicyBrute bf = policy_brute_force(chain_case(policy, 2, 2, 4, 2, 0.3, 0.8, mix, 6));
    EXPECT_FALSE(bf.overrun);
    EXPECT_NEAR(static_cast<double>(outcome(bf, "done")), 0.76367542857142857, 1e-15);
    EXPECT_NEAR(static_cast<double>(bf.mean), 2.4726628571428571, 1e-15);
    EXPECT_EQ(bf.max_requests, 6);
  }
  const PolicyBrute bf = policy_brute_force(chain_case(PolicyKind::naive, 2, 2, 0, 2, 0.3, 0.8, mix, 6));
  EXPECT_FALSE(bf.overrun);
  EXPECT_NEAR(static_cast<double>(outcome(bf, "done")), 0.70018021668571429, 1e-15);
  EXPECT_NEAR(static_cast<double>(outcome(bf, "hang")), 0.12471103049142857, 1e-15);
  EXPECT_NEAR(static_cast<double>(outcome(bf, "crash:overloaded")), 0.12471103049142857, 1e-15);
  for (const char* k : {"crash:cut", "crash:no_stop", "crash:malformed"})
    EXPECT_NEAR(static_cast<double>(outcome(bf, k)), 0.016799240777142857, 1e-15) << k;
  EXPECT_NEAR(static_cast<double>(bf.mean), 2.0770153691428571, 1e-15);
  EXPECT_EQ(bf.max_requests, 6);
}

}  // namespace relsim::policy_brute_force_docs_test
