// The fleet's event simulation (fleet/fleet.hpp). Known values come from
// outside it: the exact engine (one agent, or many without shared limits, is
// the single-agent model), and small scenarios whose every event can be
// worked out by hand (in the comments).
#include <gtest/gtest.h>

#include <cmath>

#include "relsim/exact/exact.hpp"
#include "relsim/fleet/fleet.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "support/input_error.hpp"
#include "support/models.hpp"

namespace relsim::fleet {
namespace {

// Agents that share nothing: no quota, capacity, pool or throttle.
Scenario independent_agents(std::int64_t agents, std::int64_t tasks_per_agent) {
  Scenario s;
  s.agents = agents;
  s.tasks_per_agent = tasks_per_agent;
  s.duration = 1e6;
  return s;
}

FleetResult run_scenario(const Scenario& s, int replicates = 1, int threads = 1) {
  RunConfig c;
  c.replicates = replicates;
  c.threads = threads;
  c.bin_seconds = s.duration;
  return run_fleet(s, c, true);
}

struct FleetPoint {
  Model model;
  Policy policy;
  FaultWeights kinds;
};

// With nothing shared, every task is the single-agent model's: its success
// must fall inside a 99.9% interval of the exact engine's value.
TEST(Fleet, AgentsThatShareNothingAreTheSingleAgentModel) {
  FaultWeights mixed = parse_fault_weights("cut=1,stall=1,http_529=1,http_500=1,reset=1");
  const std::vector<FleetPoint> points = {
      {Model{.p = 0.1, .q = 0.1}, Policy{.n = 5, .r = 2, .kind = PolicyKind::simple},
       FaultWeights::in_stream_uniform()},
      {Model{.p = 0.05, .q = 0.6}, Policy{.n = 10, .r = 3, .kind = PolicyKind::simple},
       FaultWeights::in_stream_uniform()},
      {Model{.p = 0.1, .q = 0.5}, Policy{.n = 4, .r = 2, .kind = PolicyKind::layered}, mixed},
      {Model{.p = 0.2, .q = 0.7}, Policy{.n = 3, .r = 2, .B = 4, .kind = PolicyKind::budgeted}, mixed},
  };
  for (const FleetPoint& pt : points) {
    ExactOptions options;
    options.kinds = pt.kinds;
    const double exact = exact_matrix(pt.model, pt.policy, options).success;
    for (const std::int64_t agents : {std::int64_t{1}, std::int64_t{40}}) {
      Scenario s = independent_agents(agents, 20'000 / agents);
      s.model = pt.model;
      s.policy = pt.policy;
      s.kinds = pt.kinds;
      const FleetResult r = run_scenario(s);
      const Interval ci = binomial_interval(IntervalKind::wilson, r.successes, r.tasks, 0.999);
      SCOPED_TRACE(testing::Message() << describe(pt.policy) << ", p = " << pt.model.p << ", q = " << pt.model.q
                                      << ", agents = " << agents << ": " << r.successes << "/" << r.tasks
                                      << ", exact " << exact);
      EXPECT_EQ(r.tasks, 20'000);
      EXPECT_TRUE(ci.covers(exact));
      EXPECT_EQ(r.r429 + r.r529 + r.timeouts + r.denied + r.wasted, 0);
    }
  }
}

// With prices and nothing shared, a task's cost is the single-agent model's:
// the fleet's mean cost per task within 5 standard errors of exact's mean
// (the standard deviation from exact's own cost distribution), and a done
// task's within 5 of exact's E[cost | done]. The fleet bills as it runs
// (draws.cpp's per-task chain, the reply drawn as the stream starts); exact
// by its cost walk.
TEST(Fleet, PricesBillEachTaskAsTheSingleAgentModelDoes) {
  Billing billing;
  billing.input_tokens = 20000;
  billing.output_tokens = 800;
  billing.price_in = 3;
  billing.price_out = 15;
  const std::vector<FleetPoint> points = {
      {Model{.p = 0.1, .q = 0.5}, Policy{.n = 4, .r = 2, .kind = PolicyKind::layered},
       parse_fault_weights("cut=1,no_stop=1,http_529=1,http_500=1")},
      {Model{.p = 0.2, .q = 0.7}, Policy{.n = 3, .r = 2, .kind = PolicyKind::simple},
       FaultWeights::in_stream_uniform()},
  };
  for (const FleetPoint& pt : points) {
    ExactOptions options;
    options.kinds = pt.kinds;
    options.billing = billing;
    const ExactResult e = exact_matrix(pt.model, pt.policy, options);
    ASSERT_TRUE(e.cost && e.cost->complete);
    double squares = 0.0, done_squares = 0.0;
    for (const CostBin& b : e.cost->bins) {
      squares += b.probability * (b.usd - e.cost->mean) * (b.usd - e.cost->mean);
      if (b.outcome == Outcome::done) done_squares += b.probability * (b.usd - e.cost->mean_done) * (b.usd - e.cost->mean_done);
    }
    Scenario s = independent_agents(40, 500);
    s.model = pt.model;
    s.policy = pt.policy;
    s.kinds = pt.kinds;
    s.billing = billing;
    const FleetResult r = run_scenario(s);
    const double se = std::sqrt(squares / static_cast<double>(r.tasks));
    const double se_done = std::sqrt(done_squares / e.success / static_cast<double>(r.successes));
    SCOPED_TRACE(testing::Message() << describe(pt.policy) << ": fleet " << r.cost_mean() << " (done "
                                    << r.cost_mean_done() << "), exact " << e.cost->mean << " (done "
                                    << e.cost->mean_done << "), se " << se);
    EXPECT_LT(std::abs(r.cost_mean() - e.cost->mean), 5.0 * se);
    EXPECT_LT(std::abs(r.cost_mean_done() - e.cost->mean_done), 5.0 * se_done);
    EXPECT_EQ(r.cost_wasted_nano, 0);
    EXPECT_NEAR(r.cost_per_done(), r.cost_mean() / r.success_rate(), 1e-12);
  }
}

TEST(Fleet, SameCountsForAnyThreadCount) {
  Scenario s;
  s.agents = 200;
  s.tenants = 3;
  s.start = parse_start("poisson:30");
  s.duration = 60;
  s.quota = 300;
  s.capacity = 25;
  s.queue = 20;
  s.header_timeout = 2;
  s.pool = 10;
  s.throttle = parse_throttle("grpc:10,0.1");
  s.model = Model{.p = 0.1, .q = 0.5};
  s.policy = Policy{.n = 3, .r = 2, .kind = PolicyKind::layered};
  const FleetResult one = run_scenario(s, 4, 1), two = run_scenario(s, 4, 2);
  EXPECT_GT(one.r429 + one.r529 + one.timeouts, 0);  // the limits were reached
  EXPECT_EQ(one.tasks, two.tasks);
  EXPECT_EQ(one.successes, two.successes);
  EXPECT_EQ(one.requests, two.requests);
  EXPECT_EQ(one.events, two.events);
  EXPECT_EQ(one.latency, two.latency);
  EXPECT_EQ(one.pool_wait, two.pool_wait);
  EXPECT_EQ(one.outcomes, two.outcomes);
  // And each replicate differs from the others: four replicates are not one four times.
  const FleetResult single = run_scenario(s, 1, 1);
  EXPECT_NE(single.requests * 4, one.requests);
}

// Every request is answered exactly once, and every task ends once.
TEST(Fleet, CountsAddUp) {
  Scenario s;
  s.agents = 100;
  s.start = parse_start("poisson:40");
  s.duration = 30;
  s.capacity = 20;
  s.queue = 30;
  s.header_timeout = 1.5;
  s.quota = 1500;
  s.model = Model{.p = 0.05, .q = 0.3};
  s.policy = Policy{.n = 2, .r = 2, .kind = PolicyKind::layered};
  const FleetResult r = run_scenario(s, 2, 2);
  std::int64_t ended = 0, exogenous_bad = 0;
  for (const std::int64_t c : r.outcomes) ended += c;
  EXPECT_EQ(ended, r.tasks);
  // Answers: good + 429 + 529 + timeouts + exogenous faults = requests.
  exogenous_bad = r.requests - r.good - r.r429 - r.r529 - r.timeouts;
  EXPECT_GE(exogenous_bad, 0);
  EXPECT_LE(r.wasted, r.timeouts);
  std::int64_t latency = 0, waits = 0;
  for (const std::int64_t c : r.latency) latency += c;
  for (const std::int64_t c : r.pool_wait) waits += c;
  EXPECT_EQ(latency, r.tasks);
  EXPECT_EQ(waits, r.requests);
}

// One stream, a queue of 10, a 0.5 s header timeout, three agents at t = 0,
// no faults, no retries: A is served over [0, 1]; B and C wait, give up at
// 0.5 s (env_error:slow_headers), and the provider then serves them for
// nobody over [1, 2] and [2, 3].
TEST(Fleet, AGivenUpRequestIsStillServed) {
  Scenario s;
  s.agents = 3;
  s.start = parse_start("coordinated:0");
  s.capacity = 1;
  s.queue = 10;
  s.header_timeout = 0.5;
  s.policy = Policy{.n = 1, .r = 0, .kind = PolicyKind::simple};
  const FleetResult r = run_scenario(s);
  EXPECT_EQ(r.tasks, 3);
  EXPECT_EQ(r.successes, 1);
  EXPECT_EQ(r.timeouts, 2);
  EXPECT_EQ(r.wasted, 2);
  EXPECT_EQ(r.outcomes[static_cast<std::size_t>(index_of({Outcome::env_error, FaultKind::slow_headers}))], 2);
  EXPECT_NEAR(r.latency_quantile(0.5), 0.5, 0.005);
  EXPECT_NEAR(r.latency_quantile(0.99), 1.0, 0.01);
}

// A pool of one connection, ten agents at t = 0, 1 s streams: the k-th
// request waits k seconds (k = 0..9), so the waits' p99 is 9 s and the
// median task ends after 5 s.
TEST(Fleet, APoolOfOneServesInTurn) {
  Scenario s;
  s.agents = 10;
  s.start = parse_start("coordinated:0");
  s.pool = 1;
  s.policy = Policy{.n = 1, .r = 0, .kind = PolicyKind::simple};
  const FleetResult r = run_scenario(s);
  EXPECT_EQ(r.successes, 10);
  for (int k = 1; k <= 9; ++k) EXPECT_EQ(r.pool_wait[static_cast<std::size_t>(latency_bin(k))], 1) << k;
  EXPECT_NEAR(r.pool_wait_quantile(0.99), 9.0, 0.05);
  EXPECT_NEAR(r.latency_quantile(0.5), 5.0, 0.03);
  // One connection per task: nobody waits.
  s.pool = 0;
  s.pool_per_task = true;
  EXPECT_EQ(run_scenario(s).pool_wait_quantile(0.99), 0.0);
}

// Two long agents (30 s streams) and eight short ones (1 s) at t = 0 over a
// pool of two: the long ones take both connections, so the short requests
// wait 30, 30, 31, 31, 32, 32, 33, 33 s; their p99 is 33 s. A connection per
// task: no wait.
TEST(Fleet, LongStreamsBlockTheShortOnesInASmallPool) {
  Scenario s;
  s.agents = 10;
  s.long_agents = 2;
  s.long_seconds = 30;
  s.start = parse_start("coordinated:0");
  s.pool = 2;
  s.policy = Policy{.n = 1, .r = 0, .kind = PolicyKind::simple};
  FleetResult r = run_scenario(s);
  EXPECT_EQ(r.successes, 10);
  EXPECT_NEAR(r.short_pool_wait_quantile(0.99), 33.0, 0.2);
  EXPECT_NEAR(r.short_pool_wait_quantile(0.25), 30.0, 0.2);
  EXPECT_EQ(r.pool_wait[0], 2);  // the long agents' two requests did not wait
  s.pool = 0;
  s.pool_per_task = true;
  r = run_scenario(s);
  EXPECT_EQ(r.short_pool_wait_quantile(0.99), 0.0);
}

// Every request bad, cut only, one agent. gRPC 10, 0.1: the tokens go
// 9, 8, 7, 6, 5 after five failures, and at 5 (not above 5) no retry: five
// requests. AWS: 500 tokens pay 100 retries of 5: 101 requests.
TEST(Fleet, ThrottlesStopRetriesWhereTheirRulesSay) {
  Scenario s;
  s.agents = 1;
  s.model = Model{.p = 1.0, .q = 1.0};
  s.kinds = parse_fault_weights("cut=1");
  s.backoff = parse_backoff("none");
  s.policy = Policy{.n = 1, .r = 500, .kind = PolicyKind::simple};
  s.throttle = parse_throttle("grpc:10,0.1");
  FleetResult r = run_scenario(s);
  EXPECT_EQ(r.requests, 5);
  EXPECT_EQ(r.denied, 1);
  EXPECT_EQ(r.outcomes[static_cast<std::size_t>(index_of({Outcome::env_error, FaultKind::cut}))], 1);
  s.throttle = parse_throttle("aws");
  r = run_scenario(s);
  EXPECT_EQ(r.requests, 101);
  EXPECT_EQ(r.denied, 1);
  // A timeout retry costs 10: 50 retries.
  s.kinds = parse_fault_weights("stall=1");
  EXPECT_EQ(run_scenario(s).requests, 51);
  // A budget's minimum lets one agent retry as its policy says: 501 requests.
  s.throttle = parse_throttle("budget:0.2,3");
  r = run_scenario(s);
  EXPECT_EQ(r.requests, 501);
  EXPECT_EQ(r.denied, 0);
}

// During an outage no stream starts. Without a queue every request is 529:
// four requests of a call with three retries, all 529. With a queue, a
// request sent at 0 waits to the outage's end at 10 s and is then served
// over [10, 11]; with a 4 s header timeout it is given up at 4 s instead,
// its retry (1 s later) at 9 s, and the third (at 10 s) is served at once.
TEST(Fleet, AnOutageServesNothingUntilItEnds) {
  Scenario s;
  s.agents = 1;
  s.start = parse_start("coordinated:0");
  s.trigger = parse_trigger("outage:0,10");
  s.backoff = parse_backoff("list:1");
  s.policy = Policy{.n = 1, .r = 3, .kind = PolicyKind::simple};
  FleetResult r = run_scenario(s);
  EXPECT_EQ(r.requests, 4);
  EXPECT_EQ(r.r529, 4);
  EXPECT_EQ(r.successes, 0);
  s.queue = 5;
  r = run_scenario(s);
  EXPECT_EQ(r.requests, 1);
  EXPECT_EQ(r.successes, 1);
  EXPECT_NEAR(r.latency_quantile(0.5), 11.0, 0.06);
  s.header_timeout = 4;
  r = run_scenario(s);
  EXPECT_EQ(r.requests, 3);
  EXPECT_EQ(r.timeouts, 2);
  EXPECT_EQ(r.wasted, 2);
  EXPECT_EQ(r.successes, 1);
  EXPECT_NEAR(r.latency_quantile(0.5), 11.0, 0.06);
}

// A bad stream breaks where the mock breaks it (stream_break_share), not at
// the end of its request_seconds: one agent, every served request bad
// (p = q = 1), one kind, 8 s streams, a 1 s wait, r = 1: the task ends
// after two broken streams and the wait between them. In the Messages API a
// cut breaks after 3 of 8 event gaps (3 s), an overloaded after 2 (2 s), a
// no_stop after 7 (7 s), a stall never (8 s); in the OpenAI dialect a cut
// after 2 of 5 (3.2 s).
TEST(Fleet, ABadStreamBreaksWhereTheMockBreaksIt) {
  const auto latency = [](const char* kind, Dialect dialect) {
    Scenario s;
    s.agents = 1;
    s.start = parse_start("coordinated:0");
    s.model = Model{1.0, 1.0};
    s.kinds = parse_fault_weights(std::string(kind) + "=1");
    s.dialect = dialect;
    s.request_seconds = 8.0;
    s.backoff = parse_backoff("list:1");
    s.policy = Policy{.n = 1, .r = 1, .kind = PolicyKind::simple};
    const FleetResult r = run_scenario(s);
    EXPECT_EQ(r.requests, 2) << kind;
    EXPECT_EQ(r.successes, 0) << kind;
    return r.latency_quantile(0.5);
  };
  EXPECT_NEAR(latency("cut", Dialect::anthropic), 3.0 + 1.0 + 3.0, 0.07);
  EXPECT_NEAR(latency("overloaded", Dialect::anthropic), 2.0 + 1.0 + 2.0, 0.05);
  EXPECT_NEAR(latency("no_stop", Dialect::anthropic), 7.0 + 1.0 + 7.0, 0.15);
  EXPECT_NEAR(latency("stall", Dialect::anthropic), 8.0 + 1.0 + 8.0, 0.17);
  EXPECT_NEAR(latency("cut", Dialect::openai), 3.2 + 1.0 + 3.2, 0.07);
}

// A quota of 30 per minute and 50 agents at once, no faults, one request each
// when it gets through: the bucket lets the first 30 through; the rest get
// 429 with a retry-after of at most 2 s, and since 0.5 tokens come per
// second, the 20 others need at least 40 s between them to pass. The HTTP
// layer alone retries a 429 (s = 60 of them, enough for 40 s of 2 s waits).
TEST(Fleet, AQuotaAnswers429UntilItsBucketRefills) {
  Scenario s;
  s.agents = 50;
  s.quota = 30;
  s.policy = Policy{.n = 1, .r = 0, .s = 60, .kind = PolicyKind::layered};
  s.duration = 1000;
  const FleetResult r = run_scenario(s);
  EXPECT_EQ(r.good, 50);
  EXPECT_EQ(r.successes, 50);
  EXPECT_GE(r.r429, 20);
  EXPECT_EQ(r.requests, r.good + r.r429);
  EXPECT_GE(r.latency_quantile(0.99), 39.0);
}

TEST(Fleet, BadRunConfigsAreRefused) {
  Scenario s;
  RunConfig c;
  c.replicates = 0;
  EXPECT_NE(test::input_error([&] { run_fleet(s, c); }).find("replicates"), std::string::npos);
  c.replicates = 1;
  c.bin_seconds = 0;
  EXPECT_NE(test::input_error([&] { run_fleet(s, c); }).find("bin-seconds"), std::string::npos);
}

TEST(FleetHistogram, BinsAreOnePercentWideFromOneMillisecond) {
  EXPECT_EQ(latency_bin(0.0), 0);
  EXPECT_EQ(latency_bin(0.0009), 0);
  EXPECT_EQ(latency_bin(0.001), 1);
  for (const double x : {0.0123, 0.5, 1.0, 9.0, 3600.0}) {
    const int b = latency_bin(x);
    EXPECT_LE(latency_bin_low(b), x * (1 + 1e-12));
    EXPECT_GT(latency_bin_high(b), x);
    EXPECT_LT(latency_bin_high(b) / latency_bin_low(b), 1.0101);
  }
  std::vector<std::int64_t> h(kLatencyBins, 0);
  h[static_cast<std::size_t>(latency_bin(1.0))] = 99;
  h[static_cast<std::size_t>(latency_bin(100.0))] = 1;
  EXPECT_NEAR(histogram_quantile(h, 0.5), 1.0, 0.01);
  EXPECT_NEAR(histogram_quantile(h, 0.99), 1.0, 0.01);
  EXPECT_NEAR(histogram_quantile(h, 0.995), 100.0, 1.0);
  EXPECT_TRUE(std::isnan(histogram_quantile(std::vector<std::int64_t>(kLatencyBins, 0), 0.5)));
}

}  // namespace
}  // namespace relsim::fleet
