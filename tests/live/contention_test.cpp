// relsim contention run's engine over loopback (docs/contention.md): the
// reference agents against a real tools server. Run one at a time, every
// naive scenario must land on its closed form (counts worked out from the
// order of the agents, not read from the code); run all at once, the
// careful agent must pass every pattern the naive one fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "relsim/contention/contention.hpp"
#include "support/files.hpp"
#include "support/input_error.hpp"
#include "support/sanitized.hpp"

namespace relsim::contention {
namespace {

ContentionConfig config(Scenario s, AgentKind a, int concurrency) {
  ContentionConfig c;
  c.scenario = s;
  c.agent = a;
  c.agents = 20;
  c.tenants = 4;
  c.concurrency = concurrency;
  // One at a time, a deadlocked agent waits out its deadline alone (crash-
  // mid-write: 15 of them); all at once, a careful agent may wait behind a
  // dead holder's TTL (0.3 s each).
  c.deadline_s = concurrency != 1 ? 10.0 : s == Scenario::crash_mid_write ? 1.0 : 5.0;
  return c;
}

// The prediction named `what` (it must be there and agree) and its value.
double predicted(const ContentionScores& s, const std::string& what) {
  for (const Prediction& p : s.predictions)
    if (p.what == what) {
      EXPECT_TRUE(p.agrees) << p.what << ": " << p.value << " vs " << p.measured;
      return p.value;
    }
  ADD_FAILURE() << "no prediction '" << what << "'";
  return -1;
}

// One at a time, 20 naive agents over 4 tenants (agent i of tenant i mod 4):
// each closed form against the count worked out by hand, and the run
// against both.
TEST(Contention, OneAtATimeInterleavedNaiveCollidesTwiceAnAgent) {
  const ContentionScores s = run_contention(config(Scenario::interleaved, AgentKind::naive, 1));
  // Agents 1..19 each meet the previous agent's entry with their first read and write.
  EXPECT_EQ(predicted(s, "collisions, one at a time"), 38);
  EXPECT_EQ(s.collisions, 38);
  EXPECT_EQ(predicted(s, "lost updates, one at a time"), 0);
  EXPECT_EQ(s.success.k, 20);
}

TEST(Contention, OneAtATimeProbePairsLeakTenantZerosAnswer) {
  const ContentionScores s = run_contention(config(Scenario::probe_pairs, AgentKind::naive, 1));
  // Agent 0 stores tenant 0's answer; both lookups of agents 1..19 outside tenant 0 (15) get it: 30 of 40.
  EXPECT_DOUBLE_EQ(predicted(s, "wrong-tenant hit rate, one at a time"), 30.0 / 40.0);
  EXPECT_EQ(s.wrong_tenant_hits.k, 30);
  EXPECT_EQ(s.wrong_tenant_hits.n, 40);
}

TEST(Contention, OneAtATimeCrashMidWriteLeavesALockForever) {
  const ContentionScores s = run_contention(config(Scenario::crash_mid_write, AgentKind::naive, 1));
  // Agent 4 dies holding a lock without TTL, its record half written: agents 5..19 see that and wait.
  EXPECT_EQ(predicted(s, "deadlocks, one at a time"), 15);
  EXPECT_EQ(predicted(s, "half-written records seen, one at a time"), 15);
  EXPECT_EQ(predicted(s, "locks past TTL, one at a time"), 1);
  EXPECT_EQ(s.success.k, 4);
  EXPECT_EQ(s.success.n, 19);
}

TEST(Contention, OneAtATimeOutOfOrderTakesOneOfKPlusTwo) {
  const ContentionScores s = run_contention(config(Scenario::out_of_order, AgentKind::naive, 1));
  // Agent k takes one of k + 2 pending results: right with 1/(k + 2).
  double right = 0;
  for (int k = 0; k < 20; ++k) right += 1.0 / (k + 2);
  EXPECT_NEAR(predicted(s, "stale accepted, one at a time"), 1 - right / 20, 1e-12);
  EXPECT_EQ(s.stale_accepted.n, 20);
  // The draws of this seed (Philox stream 15), pinned: a queue that always
  // handed out a stale result (20) would still sit inside the interval.
  EXPECT_EQ(s.stale_accepted.k, 18);
}

TEST(Contention, OneAtATimeBurstRetriesEveryRefusalThreeTimes) {
  const ContentionScores s = run_contention(config(Scenario::burst, AgentKind::naive, 1));
  // 5 agents a tenant, 20 calls each, a quota of 50: 2 served whole, 10 calls of the third,
  // then 3 agents refused 4 times each (the call and three retries at once).
  EXPECT_DOUBLE_EQ(predicted(s, "tool 429 rate, one at a time"), 48.0 / (200 + 48));
  EXPECT_EQ(s.tool_429.k, 48);
  EXPECT_EQ(s.tool_429.n, 248);
}

TEST(Contention, AllAtOnceTheCarefulAgentPassesEveryPattern) {
  for (const Scenario sc : {Scenario::interleaved, Scenario::probe_pairs, Scenario::crash_mid_write,
                            Scenario::out_of_order}) {
    const ContentionScores s = run_contention(config(sc, AgentKind::careful, 0));
    SCOPED_TRACE(std::string(to_string(sc)));
    EXPECT_EQ(s.success.k, s.success.n);
    EXPECT_EQ(s.lost_updates, 0);
    EXPECT_EQ(s.collisions, 0);
    EXPECT_EQ(s.deadlocks, 0);
    EXPECT_EQ(s.wrong_tenant_hits.k, 0);
    EXPECT_EQ(s.stale_accepted.k, 0);
    EXPECT_EQ(s.locks_past_ttl, 0);
    EXPECT_EQ(s.half_written_seen, 0);
  }
  // burst: a careful agent meets a 429 once and stops, so 429s are the
  // agents turned away: those not served all 20 calls.
  const ContentionScores b = run_contention(config(Scenario::burst, AgentKind::careful, 0));
  EXPECT_EQ(b.tool_429.k, b.success.n - b.success.k);
  EXPECT_EQ(b.tool_429.n - b.tool_429.k, 4 * 50);  // every tenant's quota served exactly
}

TEST(Contention, AllAtOnceTheNaiveAgentsCollideAndLoseUpdates) {
  ContentionConfig c = config(Scenario::interleaved, AgentKind::naive, 0);
  c.deadline_s = 1.5;  // agents that took the two locks in opposite orders wait it out
  const ContentionScores s = run_contention(c);
  EXPECT_GT(s.collisions, 0);  // two tenants write one key: at least one call meets the other's entry
  EXPECT_EQ(s.deadlocks + s.success.k, 20);  // each agent either finished or was still waiting
}

TEST(Contention, ALogIsKeptWhenAskedAndBadConfigsAreRefused) {
  const std::filesystem::path log = relsim::test::scratch("contention") / "calls.jsonl";
  std::filesystem::create_directories(log.parent_path());
  ContentionConfig c = config(Scenario::probe_pairs, AgentKind::careful, 0);
  run_contention(c, log.string());
  std::ifstream in(log);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_GE(lines, 40);  // every agent's two lookups, and its stores
  c.tenants = 21;
  EXPECT_NE(relsim::test::input_error([&] { run_contention(c); }).find("tenants = 21"), std::string::npos);
  c.tenants = 4;
  c.concurrency = 30;
  EXPECT_NE(relsim::test::input_error([&] { run_contention(c); }).find("concurrency = 30"), std::string::npos);
  EXPECT_NE(relsim::test::input_error([] { parse_scenario("chaos"); }).find("long-short or mixed"), std::string::npos);
  c.concurrency = 0;
  c.scenario = Scenario::long_short;
  c.agents = 11;  // 4 tenants x (2 long + 1 short) = 12 at least
  EXPECT_NE(relsim::test::input_error([&] { run_contention(c); }).find("agents must be >= 12"), std::string::npos);
  c.agents = 20;
  c.pool = 0;
  EXPECT_NE(relsim::test::input_error([&] { run_contention(c); }).find("pool = 0"), std::string::npos);
  EXPECT_NE(relsim::test::input_error([] { parse_agent_kind("clever"); }).find("naive or careful"), std::string::npos);
}

// long-short: 20 agents over 4 tenants, pool 2, so agents 0..7 stream 30 s
// (two a tenant, as many as its connections) beside twelve whose tasks
// take 2 s, three tasks each. Sharing the pool, a short task waits for a
// long stream to end; a connection per task never waits. The fleet's
// simulation of the same scenario predicts both; waits have a floor (live
// timers never fire early), so the naive wait's bound is one-sided here and
// its agreement with the simulation is asserted in Release alone.
TEST(Contention, LongShortNaiveWaitsBehindLongStreamsAndCarefulNever) {
  ContentionConfig c = config(Scenario::long_short, AgentKind::naive, 0);
  const ContentionScores naive = run_contention(c);
  EXPECT_EQ(naive.success.k, 60);
  EXPECT_EQ(naive.success.n, 60);
  ASSERT_TRUE(naive.pool_wait_p99);
  EXPECT_GT(*naive.pool_wait_p99, 20.0);
  ASSERT_EQ(naive.predictions.size(), 2u);
  EXPECT_EQ(predicted(naive, "task success, the fleet's simulation"), 1.0);
  const Prediction& wait = naive.predictions[1];
  EXPECT_EQ(wait.what, "pool wait p99 (model s), the fleet's simulation");
  EXPECT_GT(wait.value, 20.0);
  if (!relsim::test::kSanitized) {
    EXPECT_TRUE(wait.agrees) << wait.measured << " vs " << wait.value;
  }
  c.agent = AgentKind::careful;
  const ContentionScores careful = run_contention(c);
  EXPECT_EQ(careful.success.k, 60);
  EXPECT_EQ(careful.pool_wait_p99, 0.0);
  EXPECT_EQ(predicted(careful, "pool wait p99 (model s), the fleet's simulation"), 0.0);
}

// mixed: the six scenarios in turn; the merged scores are the sums of each
// scenario's, and the log names each line's scenario.
TEST(Contention, MixedRunsTheSixInTurnAndKeepsEachOnesScores) {
  const std::filesystem::path log = relsim::test::scratch("contention-mixed") / "calls.jsonl";
  std::filesystem::create_directories(log.parent_path());
  ContentionConfig c = config(Scenario::mixed, AgentKind::naive, 0);
  c.agents = 12;
  c.tenants = 2;
  c.deadline_s = 1.0;
  const ContentionScores s = run_contention(c, log.string());
  ASSERT_EQ(s.by_scenario.size(), 6u);
  std::int64_t done = 0, agents = 0, collisions = 0;
  for (const ContentionScores& one : s.by_scenario) {
    done += one.success.k;
    agents += one.success.n;
    collisions += one.collisions;
  }
  EXPECT_EQ(s.success.k, done);
  EXPECT_EQ(s.success.n, agents);
  EXPECT_EQ(s.collisions, collisions);
  EXPECT_EQ(s.by_scenario[5].config.scenario, Scenario::long_short);
  EXPECT_EQ(s.by_scenario[5].success.n, 36);  // its tasks: 12 agents x 3
  EXPECT_EQ(s.pool_wait_p99, s.by_scenario[5].pool_wait_p99);
  EXPECT_GT(s.wrong_tenant_hits.k, 0);  // the naive agent leaks in probe-pairs
  std::ifstream in(log);
  std::set<std::string> named;
  for (std::string line; std::getline(in, line);) named.insert(nlohmann::json::parse(line).at("scenario"));
  EXPECT_EQ(named, (std::set<std::string>{"interleaved", "probe-pairs", "crash-mid-write", "out-of-order", "burst"}));
}

}  // namespace
}  // namespace relsim::contention
