// The fleet run live (live/fleet_live.hpp): relsim's mock provider and
// client on loopback, time-scaled, replaying replicate 0's draws.
// - Where nothing depends on timing (no quota, no capacity; every tenant one
//   agent, so its throttle sees its answers in one order), the live counts
//   equal the simulated replicate's exactly.
// - With a quota and a pool shared by agents, the live run's success, 429
//   rate and amplification lie within the simulated replicates' spread, and
//   the server's log agrees with the client (labelled wallclock: the live
//   figures rest on the machine keeping time, which sanitizers stretch).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relsim/fleet/fleet.hpp"
#include "relsim/live/fleet_agreement.hpp"
#include "relsim/live/fleet_live.hpp"
#include "support/input_error.hpp"

namespace relsim {
namespace {

constexpr std::uint64_t kSeed = 20261202;

fleet::Scenario small_scenario() {
  fleet::Scenario s;
  s.agents = 12;
  s.tenants = 12;
  s.tasks_per_agent = 5;
  s.model = Model{0.3, 0.8, 0, 0};
  s.policy.kind = PolicyKind::layered;
  s.policy.n = 2;
  s.policy.r = 2;
  s.policy.s = 1;
  s.kinds = parse_fault_weights("cut=1,malformed=1,overloaded=1,no_stop=1");
  s.request_seconds = 1.0;
  s.duration = 3600.0;
  return s;
}

fleet::FleetResult replicate(const fleet::Scenario& s, int index) {
  fleet::RunConfig run;
  run.seed = kSeed;
  run.first_replicate = index;
  run.threads = 1;
  return fleet::run_fleet(s, run);
}

void expect_same_counts(const fleet::FleetResult& live, const fleet::FleetResult& sim) {
  EXPECT_EQ(live.tasks, sim.tasks);
  EXPECT_EQ(live.successes, sim.successes);
  EXPECT_EQ(live.requests, sim.requests);
  EXPECT_EQ(live.good, sim.good);
  EXPECT_EQ(live.r429, sim.r429);
  EXPECT_EQ(live.r529, sim.r529);
  EXPECT_EQ(live.denied, sim.denied);
  EXPECT_EQ(live.outcomes, sim.outcomes);
}

TEST(FleetLive, WithoutSharedLimitsTheLiveRunIsTheReplicateItReplays) {
  fleet::Scenario s = small_scenario();
  FleetLiveConfig c;
  c.time_scale = 0.016;  // 16 ms streams: 2 ms between events
  const FleetLiveResult live = run_fleet_live(s, kSeed, c);
  const fleet::FleetResult sim = replicate(s, 0);
  EXPECT_EQ(sim.tasks, 60);
  EXPECT_GT(sim.requests, sim.good);  // faults were retried
  expect_same_counts(live.counts, sim);
  EXPECT_TRUE(check_log(live, s).agrees) << check_log(live, s).problems.at(0);
  EXPECT_DOUBLE_EQ(live.stream_seconds, 1.0);
}

TEST(FleetLive, ATenantsThrottleSeesItsOneAgentsAnswersInOrder) {
  fleet::Scenario s = small_scenario();
  s.throttle = fleet::parse_throttle("grpc:4,0.5");
  s.pool = 1;  // one agent per tenant: its pool of one never makes it wait
  FleetLiveConfig c;
  c.time_scale = 0.016;
  c.client_threads = 2;
  const FleetLiveResult live = run_fleet_live(s, kSeed, c);
  const fleet::FleetResult sim = replicate(s, 0);
  EXPECT_GT(sim.denied, 0);
  expect_same_counts(live.counts, sim);
  EXPECT_TRUE(check_log(live, s).agrees);
  EXPECT_EQ(live.log.most_in_flight, 1);
}

TEST(FleetLive, TheReplayedDrawsAreTheSimulationsOwn) {
  // A different replicate draws differently, so the equality above is not
  // one of empty runs.
  fleet::Scenario s = small_scenario();
  FleetLiveConfig c;
  c.time_scale = 0.016;
  c.replicate = 3;
  const FleetLiveResult live = run_fleet_live(s, kSeed, c);
  const fleet::FleetResult three = replicate(s, 3), zero = replicate(s, 0);
  expect_same_counts(live.counts, three);
  EXPECT_NE(three.requests, zero.requests);
}

// 2,000 tasks: 50 agents over 2 tenants, 40 one-call tasks each, streams
// of 1 s; each tenant's 10 connections ask 600 requests a minute of a quota
// of 200, so the bucket (200 tokens, 3.3 a second back) is empty after
// about 30 s; bursty faults of their own.
fleet::Scenario storm(const std::string& throttle) {
  fleet::Scenario s;
  s.agents = 50;
  s.tenants = 2;
  s.tasks_per_agent = 40;
  s.quota = 200.0;
  s.pool = 10;
  s.throttle = fleet::parse_throttle(throttle);
  s.model = Model{0.05, 0.5, 0, 0};
  s.policy.kind = PolicyKind::layered;
  s.policy.n = 1;
  s.policy.r = 2;
  s.policy.s = 2;
  s.kinds = parse_fault_weights("cut=1,malformed=1,overloaded=1");
  s.duration = 3600.0;
  return s;
}

// A parameter is a throttle, and "@openai" for agents that speak OpenAI's
// chat completions (the provider's 429s and the streams in that dialect).
class FleetLiveStorm : public ::testing::TestWithParam<std::string> {};

TEST_P(FleetLiveStorm, AgreesWithTheSimulationAndTheServersLog) {
  const std::string param = GetParam();
  const std::size_t at = param.find('@');
  const fleet::Scenario s = storm(param.substr(0, at));
  FleetLiveConfig c;
  if (at != std::string::npos) c.dialect = parse_dialect(param.substr(at + 1));
  c.time_scale = 0.08;  // 80 ms streams
  const FleetLiveResult live = run_fleet_live(s, kSeed, c);
  std::vector<fleet::FleetResult> sims;
  for (int i = 0; i < 20; ++i) sims.push_back(replicate(s, i));
  EXPECT_EQ(live.counts.tasks, 2000);
  EXPECT_GT(live.counts.rate_429(), 0.5);
  if (s.throttle.kind != Throttle::Kind::none) {
    EXPECT_GT(live.counts.denied, 0);
  }
  const LogAgreement log = check_log(live, s);
  EXPECT_TRUE(log.agrees) << log.problems.at(0);
  EXPECT_LE(live.log.most_in_flight, 10);
  EXPECT_GT(live.log.most_in_flight, 1);  // the pool was shared
  for (const FigureAgreement& f : compare_figures(live.counts, sims, 0)) {
    RecordProperty(f.name, std::to_string(f.live) + " vs " + std::to_string(f.mean) + " sd " + std::to_string(f.sd));
    if (f.judged) {
      EXPECT_TRUE(f.agrees) << f.name << ": live " << f.live << ", simulated " << f.mean << " (sd " << f.sd
                            << ", allowed " << f.allowed << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Throttles, FleetLiveStorm, ::testing::Values("none", "grpc:10,0.1", "none@openai"),
                         [](const auto& info) {
                           return info.param == "none"          ? std::string("none")
                                  : info.param == "none@openai" ? std::string("none_openai")
                                                                : std::string("grpc");
                         });

TEST(FleetLive, LongStreamsBlockAPoolOfTenAndAPerTaskPoolFreesIt) {
  // Ten agents stream 30 s beside forty whose calls take 1 s, five tasks
  // each, one tenant. With ten connections the long streams hold them all
  // and a short call waits for a long one to end; a connection per task
  // never waits. (Waits have a floor, not a ceiling: timers never fire early.)
  fleet::Scenario s;
  s.agents = 50;
  s.long_agents = 10;
  s.long_seconds = 30.0;
  s.tasks_per_agent = 5;
  s.policy.n = 1;
  s.duration = 3600.0;
  FleetLiveConfig c;
  c.time_scale = 0.02;
  s.pool = 10;
  const FleetLiveResult ten = run_fleet_live(s, kSeed, c);
  EXPECT_EQ(ten.counts.successes, 250);
  EXPECT_GT(ten.counts.short_pool_wait_quantile(0.99), 20.0);
  EXPECT_EQ(ten.log.most_in_flight, 10);
  EXPECT_TRUE(check_log(ten, s).agrees);
  s.pool = 0;
  s.pool_per_task = true;
  const FleetLiveResult own = run_fleet_live(s, kSeed, c);
  EXPECT_EQ(own.counts.successes, 250);
  EXPECT_EQ(own.counts.short_pool_wait_quantile(0.99), 0.0);
  EXPECT_GT(own.log.most_in_flight, 10);
}

TEST(FleetLive, WhatTheLiveRunCannotPlayIsRefusedByName) {
  FleetLiveConfig c;
  fleet::Scenario s = small_scenario();
  s.queue = 5;
  EXPECT_EQ(test::input_error([&] { validate_live(s, c); }),
            "--live: queue = 5: the mock provider has no queue (past capacity it answers 529)");
  s = small_scenario();
  s.kinds = parse_fault_weights("cut=1,http_529=1");
  EXPECT_NE(test::input_error([&] { validate_live(s, c); }).find("http_529 sends no stream"),
            std::string::npos);
  s = small_scenario();
  s.start = fleet::parse_start("poisson:5");
  EXPECT_NE(test::input_error([&] { validate_live(s, c); }).find("coordinated start"), std::string::npos);
  s = small_scenario();
  c.time_scale = 0.001;  // a 1 s stream of 1 ms: under 1 ms per event
  EXPECT_NE(test::input_error([&] { validate_live(s, c); }).find("it must be in [8, 480000] ms"), std::string::npos);
  c.time_scale = 20.0;
  EXPECT_EQ(test::input_error([&] { validate_live(s, c); }),
            "time-scale = 20 is out of range: it must be in [0.001, 10] wall seconds per model second");
}

}  // namespace
}  // namespace relsim
