// A fleet scenario's spellings and checks (fleet/scenario.hpp): every form
// of --start, --throttle and --trigger parses back from its to_string, every
// bad spelling is one line that quotes it, and validate() names the field
// that is out of range.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "relsim/fleet/scenario.hpp"
#include "support/input_error.hpp"

namespace relsim::fleet {
namespace {

using relsim::test::input_error;

using relsim::test::expect_mentions;

void expect_same(const Start& a, const Start& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.window, b.window);
  EXPECT_EQ(a.rate, b.rate);
}

void expect_same(const Throttle& a, const Throttle& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.max_tokens, b.max_tokens);
  EXPECT_EQ(a.token_ratio, b.token_ratio);
  EXPECT_EQ(a.ratio, b.ratio);
  EXPECT_EQ(a.min_retries, b.min_retries);
}

void expect_same(const Trigger& a, const Trigger& b) {
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.length, b.length);
}

TEST(FleetStart, EveryFormParsesBackFromItsString) {
  for (const std::string spec : {"coordinated", "coordinated:0.5", "coordinated:0", "coordinated:3600",
                                 "poisson:20", "poisson:0.1", "poisson:10000000"}) {
    SCOPED_TRACE(spec);
    const Start start = parse_start(spec);
    EXPECT_EQ(to_string(start), spec);
    expect_same(parse_start(to_string(start)), start);
  }
}

TEST(FleetStart, FormsGiveTheirNumbers) {
  const Start plain = parse_start("coordinated");
  EXPECT_EQ(plain.kind, Start::Kind::coordinated);
  EXPECT_EQ(plain.window, 0.1);
  EXPECT_EQ(parse_start("coordinated:0.5").window, 0.5);
  const Start poisson = parse_start("poisson:20");
  EXPECT_EQ(poisson.kind, Start::Kind::poisson);
  EXPECT_EQ(poisson.rate, 20.0);
  // A window that is not the default keeps its digits through to_string.
  Start odd;
  odd.window = 0.1 + 0.2;
  expect_same(parse_start(to_string(odd)), odd);
}

TEST(FleetThrottle, EveryFormParsesBackFromItsString) {
  for (const std::string spec : {"none", "grpc:10,0.1", "grpc:1000000,1000000", "aws", "budget:0.2",
                                 "budget:0.1,5", "budget:1,0"}) {
    SCOPED_TRACE(spec);
    const Throttle throttle = parse_throttle(spec);
    EXPECT_EQ(to_string(throttle), spec);
    expect_same(parse_throttle(to_string(throttle)), throttle);
  }
}

TEST(FleetThrottle, FormsGiveTheirNumbers) {
  EXPECT_EQ(parse_throttle("none").kind, Throttle::Kind::none);
  EXPECT_EQ(parse_throttle("aws").kind, Throttle::Kind::aws);
  const Throttle grpc = parse_throttle("grpc:10,0.1");
  EXPECT_EQ(grpc.kind, Throttle::Kind::grpc);
  EXPECT_EQ(grpc.max_tokens, 10.0);
  EXPECT_EQ(grpc.token_ratio, 0.1);
  const Throttle budget = parse_throttle("budget:0.2");
  EXPECT_EQ(budget.kind, Throttle::Kind::budget);
  EXPECT_EQ(budget.ratio, 0.2);
  EXPECT_EQ(budget.min_retries, 3);  // Envoy's default
  EXPECT_EQ(parse_throttle("budget:0.1,5").min_retries, 5);
}

TEST(FleetTrigger, EveryFormParsesBackFromItsString) {
  for (const std::string spec : {"none", "outage:60,30", "outage:0,0.5", "outage:10000000,10000000"}) {
    SCOPED_TRACE(spec);
    const Trigger trigger = parse_trigger(spec);
    EXPECT_EQ(to_string(trigger), spec);
    expect_same(parse_trigger(to_string(trigger)), trigger);
  }
  const Trigger outage = parse_trigger("outage:60,30");
  EXPECT_TRUE(outage.active());
  EXPECT_EQ(outage.start, 60.0);
  EXPECT_EQ(outage.length, 30.0);
  EXPECT_FALSE(parse_trigger("none").active());
}

// Each bad spelling is one line that quotes it as given.
void expect_refused(const std::function<void(const std::string&)>& parse, const std::vector<std::string>& specs) {
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    expect_mentions(input_error([&] { parse(spec); }), {"'" + spec + "'"});
  }
}

TEST(FleetStart, BadSpellingsAreRefusedByName) {
  expect_refused([](const std::string& s) { parse_start(s); },
                 {"", "coordinated:x", "coordinated:", "coordinated:-1", "coordinated:3601", "coordinated:1,2",
                  "coordinated:nan", "poisson", "poisson:", "poisson:0", "poisson:-1", "poisson:1e8", "poisson:inf",
                  "poisson:20 ", "Poisson:20", "closed"});
}

TEST(FleetStart, ARangeErrorNamesTheNumberAndItsRange) {
  expect_mentions(input_error([] { parse_start("poisson:0"); }), {"RATE = 0", "(0, 10000000]"});
  expect_mentions(input_error([] { parse_start("coordinated:5000"); }), {"WINDOW = 5000", "[0, 3600]"});
  // A spelling that does not parse lists the accepted forms.
  expect_mentions(input_error([] { parse_start("coordinated:x"); }), {"coordinated:WINDOW", "poisson:RATE"});
}

TEST(FleetThrottle, BadSpellingsAreRefusedByName) {
  expect_refused([](const std::string& s) { parse_throttle(s); },
                 {"", "storm:1", "storm", "grpc", "grpc:10", "grpc:10,0.1,1", "grpc:0,0.1", "grpc:-1,0.1",
                  "grpc:10,0", "grpc:10,11", "grpc:2000000,1", "grpc:x,0.1", "aws:1", "aws:", "none:0", "budget",
                  "budget:", "budget:0", "budget:1.5", "budget:-0.1", "budget:0.2,-1", "budget:0.2,1000001",
                  "budget:0.2,2.5", "budget:0.2,3,4", "budget:0.2,99999999999999999999"});
}

TEST(FleetThrottle, ARangeErrorNamesTheNumberAndItsRange) {
  expect_mentions(input_error([] { parse_throttle("grpc:0,0.1"); }), {"MAX = 0", "(0, 1000000]"});
  expect_mentions(input_error([] { parse_throttle("grpc:10,11"); }), {"RATIO = 11", "(0, MAX = 10]"});
  expect_mentions(input_error([] { parse_throttle("budget:1.5"); }), {"RATIO = 1.5", "(0, 1]"});
  expect_mentions(input_error([] { parse_throttle("budget:0.2,-1"); }), {"MIN = -1", "[0, 1000000]"});
  expect_mentions(input_error([] { parse_throttle("grpc:10"); }), {"grpc:MAX,RATIO", "aws", "budget:RATIO[,MIN]"});
}

TEST(FleetTrigger, BadSpellingsAreRefusedByName) {
  expect_refused([](const std::string& s) { parse_trigger(s); },
                 {"", "outage", "outage:10", "outage:10,0", "outage:10,-5", "outage:-1,10", "outage:10,20,30",
                  "outage:x,10", "outage:20000000,10", "outage:0,20000000", "none:1", "storm:1"});
  expect_mentions(input_error([] { parse_trigger("outage:10,0"); }), {"LENGTH = 0", "(0, 10000000]"});
  expect_mentions(input_error([] { parse_trigger("outage:10"); }), {"outage:START,LENGTH"});
}

TEST(FleetValidate, TheDefaultScenarioIsValid) {
  EXPECT_NO_THROW(validate(Scenario{}));
  EXPECT_NO_THROW(validate(Scenario{}, true));
}

// The message of validate() for the default scenario changed by `change`.
std::string refusal(const std::function<void(Scenario&)>& change, bool force = false) {
  Scenario s;
  change(s);
  return input_error([&] { validate(s, force); });
}

TEST(FleetValidate, OutOfRangeAgentsAndTasksAreNamed) {
  expect_mentions(refusal([](Scenario& s) { s.agents = 0; }), {"agents = 0", "[1, 1000000]"});
  expect_mentions(refusal([](Scenario& s) { s.agents = kMaxAgents + 1; }), {"agents = 1000001"});
  expect_mentions(refusal([](Scenario& s) { s.tenants = 0; }), {"tenants = 0"});
  expect_mentions(refusal([](Scenario& s) {
                    s.agents = 2;
                    s.tenants = 3;
                  }),
                  {"tenants = 3", "agents = 2"});
  expect_mentions(refusal([](Scenario& s) { s.tasks_per_agent = 0; }), {"tasks-per-agent = 0"});
  expect_mentions(refusal([](Scenario& s) { s.tasks_per_agent = kMaxTasksPerAgent + 1; }), {"tasks-per-agent"});
  expect_mentions(refusal([](Scenario& s) { s.start.window = -1; }), {"start", "WINDOW = -1"});
  expect_mentions(refusal([](Scenario& s) { s.start.kind = Start::Kind::poisson; }), {"start", "RATE = 0"});
  expect_mentions(refusal([](Scenario& s) { s.duration = 0; }), {"duration = 0"});
  expect_mentions(refusal([](Scenario& s) { s.duration = std::nan(""); }), {"duration = nan"});
}

TEST(FleetValidate, ALongDurationNeedsForce) {
  expect_mentions(refusal([](Scenario& s) { s.duration = 1e5; }), {"duration = 100000", "86400", "--force",
                                                                    "10000000"});
  Scenario day;
  day.duration = kMaxDuration;
  EXPECT_NO_THROW(validate(day));
  Scenario longer;
  longer.duration = 1e5;
  EXPECT_NO_THROW(validate(longer, true));
  expect_mentions(refusal([](Scenario& s) { s.duration = 2e7; }, true), {"duration = 20000000", "10000000"});
}

TEST(FleetValidate, OutOfRangeProviderAndClientAreNamed) {
  expect_mentions(refusal([](Scenario& s) { s.quota = -1; }), {"quota = -1"});
  expect_mentions(refusal([](Scenario& s) { s.quota = 2e9; }), {"quota = 2000000000"});
  expect_mentions(refusal([](Scenario& s) { s.capacity = -1; }), {"capacity = -1"});
  expect_mentions(refusal([](Scenario& s) { s.capacity = kMaxCapacity + 1; }), {"capacity = 100000001"});
  expect_mentions(refusal([](Scenario& s) { s.queue = -1; }), {"queue = -1"});
  expect_mentions(refusal([](Scenario& s) { s.pool = -1; }), {"pool = -1"});
  expect_mentions(refusal([](Scenario& s) { s.header_timeout = -1; }), {"header-timeout = -1"});
  expect_mentions(refusal([](Scenario& s) { s.request_seconds = 0; }), {"request-seconds = 0"});
  expect_mentions(refusal([](Scenario& s) { s.reject_seconds = -0.5; }), {"reject-seconds = -0.5"});
  expect_mentions(refusal([](Scenario& s) { s.trigger = Trigger{-5, 10}; }), {"trigger", "START = -5"});
  expect_mentions(refusal([](Scenario& s) { s.trigger = Trigger{5, -10}; }), {"trigger", "LENGTH = -10"});
  Throttle grpc;
  grpc.kind = Throttle::Kind::grpc;
  grpc.token_ratio = 20;
  expect_mentions(refusal([&](Scenario& s) { s.throttle = grpc; }), {"throttle", "RATIO = 20"});
  Throttle budget;
  budget.kind = Throttle::Kind::budget;
  budget.min_retries = -1;
  expect_mentions(refusal([&](Scenario& s) { s.throttle = budget; }), {"throttle", "MIN = -1"});
}

TEST(FleetValidate, ZeroMeansNoLimit) {
  Scenario s;
  s.quota = 0;
  s.capacity = 0;
  s.queue = 0;
  s.pool = 0;
  s.header_timeout = 0;
  s.reject_seconds = 0;
  s.trigger = Trigger{};
  EXPECT_NO_THROW(validate(s));
}

TEST(FleetValidate, TheSingleAgentModelIsCheckedToo) {
  expect_mentions(refusal([](Scenario& s) { s.model.p = 1.2; }), {"p = 1.2"});
  expect_mentions(refusal([](Scenario& s) { s.policy.n = 0; }), {"n = 0"});
  expect_mentions(refusal([](Scenario& s) { s.kinds = FaultWeights{}; }), {"total"});
  expect_mentions(refusal([](Scenario& s) { s.backoff.jitter = 2; }), {"backoff jitter = 2"});
  expect_mentions(refusal([](Scenario& s) { s.backoff.kind = Backoff::Kind::list; }), {"backoff list is empty"});
}

TEST(FleetValidate, SilentStepsAndTheContinuousScopeAreRefused) {
  expect_mentions(refusal([](Scenario& s) { s.model.b = 2; }), {"b = 2", "silent steps"});
  expect_mentions(refusal([](Scenario& s) { s.model.g = 1; }), {"g = 1", "silent steps"});
  expect_mentions(refusal([](Scenario& s) { s.model.chain = ChainScope::continuous; }),
                  {"chain = continuous", "fresh"});
}

}  // namespace
}  // namespace relsim::fleet
