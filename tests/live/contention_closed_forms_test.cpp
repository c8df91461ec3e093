// The closed forms of docs/contention.md ("Numbers that can be checked
// before running") that take timing or hashing: each closed form checked
// against an outside reference (worked by hand, enumerated, or thrown by
// this test's own generator), then against live runs of the reference
// agents on loopback.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "relsim/contention/contention.hpp"
#include "support/sanitized.hpp"

namespace relsim::contention {
namespace {

// The prediction whose name starts with `what`; it must be there.
const Prediction* find(const ContentionScores& s, const std::string& what) {
  for (const Prediction& p : s.predictions)
    if (p.what.starts_with(what)) return &p;
  ADD_FAILURE() << "no prediction '" << what << "'";
  return nullptr;
}

// Nine agents of one tenant, each at 100 calls a second on one clock,
// against 500 calls per 10 s: ticks 0..54 make 495 calls, tick 55 the
// 496th to 504th, so the 501st, the first refused, goes at 0.55 s (the
// essay's nine agents at 0.42 calls a second: 555 ticks, 22 minutes).
// Under sanitizers a call costs milliseconds, so the ticks are 50 ms and
// the quota 100: ticks 0..10 make 99 calls, and the 101st goes at tick 11,
// again 0.55 s.
TEST(ContentionClosedForms, NineAgentsUseUpTheQuotaWhenTheTicksSay) {
  ContentionConfig c;
  c.scenario = Scenario::burst;
  c.agent = AgentKind::careful;
  c.agents = 9;
  c.tenants = 1;
  c.quota = {relsim::test::kSanitized ? 100 : 500, 10'000};
  c.call_rate = relsim::test::kSanitized ? 20 : 100;
  c.burst_calls = relsim::test::kSanitized ? 20 : 100;
  const ContentionScores s = run_contention(c);
  const Prediction* p = find(s, "seconds to use up tenant t0's tool quota");
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->value, 0.55);
  EXPECT_TRUE(p->agrees) << p->measured << " not in [" << p->interval->low << ", " << p->interval->high << "]";
  EXPECT_GE(p->measured, 0.5);  // never early by more than a few ms of clocks: the 496th to 500th calls were served
  EXPECT_EQ(s.tool_429.k, 9);   // each careful agent stops at its first 429
  // A quota the tenant cannot use up (9 agents' calls no more than it) has no exhaustion time.
  c.burst_calls = static_cast<int>(c.quota.calls / 9);
  const ContentionScores lasts = run_contention(c);
  EXPECT_EQ(lasts.tool_429.k, 0);
  for (const Prediction& q : lasts.predictions) EXPECT_FALSE(q.what.starts_with("seconds to use up")) << q.what;
}

// Birthday bound, enumerated: 3 texts hashed into 4 keys, every one of the
// 64 assignments: the writes that meet an entry are 3 less the keys used.
double enumerated_mean_shared() {
  double total = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      for (int d = 0; d < 4; ++d) total += 3 - static_cast<int>(std::set<int>{a, b, d}.size());
  return total / 64;
}

ContentionConfig memo_config(int agents, int bits, std::uint64_t seed) {
  ContentionConfig c;
  c.scenario = Scenario::interleaved;
  c.agents = agents;
  c.tenants = 4 > agents ? agents : 4;
  c.concurrency = 1;  // the count is the same in any order; one at a time nothing deadlocks
  c.increments = 1;
  c.key_bits = bits;
  c.seed = seed;
  return c;
}

TEST(ContentionClosedForms, MemoKeysMeetAsTheBirthdayBoundSays) {
  const ContentionScores three = run_contention(memo_config(3, 2, 1));
  const Prediction* p = find(three, "memo writes that met another agent's entry");
  ASSERT_NE(p, nullptr);
  EXPECT_NEAR(p->value, enumerated_mean_shared(), 1e-12);  // 44/64
  // 50 texts into 256 keys: this test's own throws give the mean and spread ...
  std::mt19937_64 gen(7);
  std::uniform_int_distribution<int> key(0, 255);
  const int throws = relsim::test::kSanitized ? 20'000 : 200'000;
  double sum = 0, sum2 = 0;
  for (int k = 0; k < throws; ++k) {
    std::set<int> used;
    for (int i = 0; i < 50; ++i) used.insert(key(gen));
    const double shared = 50.0 - static_cast<double>(used.size());
    sum += shared;
    sum2 += shared * shared;
  }
  const double mean = sum / throws, sd = std::sqrt(sum2 / throws - mean * mean);
  // ... and 20 seeds' live runs land on them (each seed its own texts).
  constexpr int kSeeds = 20;
  double measured = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const ContentionScores s = run_contention(memo_config(50, 8, seed));
    const Prediction* q = find(s, "memo writes that met another agent's entry");
    ASSERT_NE(q, nullptr);
    EXPECT_NEAR(q->value, mean, 0.05);
    EXPECT_NEAR((q->interval->high - q->value - 0.5) / 4.0, sd, 0.05);  // the band: 4 sd and half a count
    EXPECT_TRUE(q->agrees) << "seed " << seed << ": " << q->measured;
    EXPECT_EQ(s.key_collisions, static_cast<std::int64_t>(q->measured));
    measured += q->measured;
  }
  EXPECT_NEAR(measured / kSeeds, mean, 4 * sd / std::sqrt(kSeeds));
  // The careful agent keeps all 64 bits after its tenant: no memo meets another.
  ContentionConfig careful = memo_config(50, 8, 1);
  careful.agent = AgentKind::careful;
  const ContentionScores c = run_contention(careful);
  EXPECT_EQ(c.key_collisions, 0);
  EXPECT_TRUE(find(c, "memo writes that met another agent's entry")->agrees);
}

// Rounds: N reads uniform over S, each written D later; a round loses an
// update when two reads fall within D. The spacing law (1 - (N-1) D/S)^N,
// against this test's own uniforms first.
TEST(ContentionClosedForms, RoundsLoseUpdatesAsTheSpacingsSay) {
  // Under sanitizers a call takes milliseconds, which the write adds to D:
  // the gaps are twice as long, the law the same.
  constexpr int kAgents = 4;
  constexpr double kThink = relsim::test::kSanitized ? 0.02 : 0.01, kSpread = relsim::test::kSanitized ? 0.2 : 0.1;
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> u(0.0, kSpread);
  int apart = 0;
  constexpr int kThrows = 200'000;
  for (int k = 0; k < kThrows; ++k) {
    double r[kAgents];
    for (double& x : r) x = u(gen);
    std::sort(r, r + kAgents);
    bool ok = true;
    for (int i = 1; i < kAgents; ++i) ok = ok && r[i] - r[i - 1] >= kThink;
    apart += ok;
  }
  const double lost = 1.0 - std::pow(1.0 - (kAgents - 1) * kThink / kSpread, kAgents);  // 1 - 0.7^4 either way
  EXPECT_NEAR(1.0 - double(apart) / kThrows, lost, 0.005);

  ContentionConfig c;
  c.scenario = Scenario::interleaved;
  c.agents = kAgents;
  c.tenants = 2;
  c.increments = 20;
  c.think_s = kThink;
  c.spread_s = kSpread;
  c.deadline_s = 0.5;  // the naive agents' locks, after the rounds, may deadlock
  const ContentionScores s = run_contention(c);
  const Prediction* p = find(s, "rounds that lost an update");
  ASSERT_NE(p, nullptr);
  EXPECT_NEAR(p->value, lost, 1e-12);
  EXPECT_EQ(s.rounds_lost.n, 20);
  EXPECT_TRUE(p->agrees) << s.rounds_lost.k << " of 20";
  EXPECT_GE(s.lost_updates, s.rounds_lost.k);  // a round that lost updates lost at least one
  c.agent = AgentKind::careful;
  const ContentionScores careful = run_contention(c);
  EXPECT_EQ(careful.rounds_lost.k, 0);
  EXPECT_EQ(careful.lost_updates, 0);
  EXPECT_EQ(careful.success.k, kAgents);
  EXPECT_EQ(find(careful, "rounds that lost an update")->value, 0.0);
}

}  // namespace
}  // namespace relsim::contention
