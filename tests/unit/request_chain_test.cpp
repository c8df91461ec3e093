// The fault chain walked request by request (core/request_chain.hpp), as
// relsim proxy's chain mode walks it: over 10^6 draws its frequencies are
// Gilbert's law (docs/model.md: the first request bad with p, a bad one
// followed by a bad one with q, a good one by a bad one with
// p0 = p(1-q)/(1-p)) and the kinds' shares the weights; the same seed gives
// the same requests, another seed others; the chain's JSON goes and comes
// back; a log's chain draws the plan the audit uses.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>

#include "relsim/audit/audit.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/request_chain.hpp"

namespace relsim {
namespace {

RequestChainConfig config(double p, double q, std::string_view kinds = "cut=1,stall=3") {
  RequestChainConfig c;
  c.p = p;
  c.q = q;
  c.seed = 1234;
  c.kinds = parse_fault_weights(kinds);
  return c;
}

// |observed - expected| in standard errors of a proportion over n draws.
double z(double hits, double n, double expected) {
  return std::abs(hits / n - expected) / std::sqrt(expected * (1.0 - expected) / n);
}

TEST(RequestChain, ItsFrequenciesAreGilbertsLaw) {
  const double p = 0.3, q = 0.8, p0 = p * (1 - q) / (1 - p);
  const RequestChain chain(config(p, q));
  constexpr std::int64_t kTasks = 20'000, kEach = 50;
  double first_bad = 0, after_bad = 0, bad_after_bad = 0, after_good = 0, bad_after_good = 0, bad = 0;
  std::array<double, kFaultKinds> kinds{};
  for (std::int64_t t = 0; t < kTasks; ++t) {
    const auto r = chain.first(t, kEach);
    first_bad += r[0].has_value();
    for (std::size_t k = 0; k < r.size(); ++k) {
      if (r[k]) ++bad, ++kinds[static_cast<std::size_t>(*r[k])];
      if (k == 0) continue;
      (r[k - 1] ? after_bad : after_good) += 1;
      (r[k - 1] ? bad_after_bad : bad_after_good) += r[k].has_value();
    }
  }
  EXPECT_LT(z(first_bad, kTasks, p), 4.5);
  EXPECT_LT(z(bad_after_bad, after_bad, q), 4.5);
  EXPECT_LT(z(bad_after_good, after_good, p0), 4.5);
  // cut=1, stall=3: a quarter and three quarters; no other kind.
  EXPECT_LT(z(kinds[static_cast<std::size_t>(FaultKind::cut)], bad, 0.25), 4.5);
  EXPECT_EQ(kinds[static_cast<std::size_t>(FaultKind::cut)] + kinds[static_cast<std::size_t>(FaultKind::stall)], bad);
}

TEST(RequestChain, IndependentWhenQIsP) {
  const RequestChain chain(config(0.2, 0.2));
  double after_bad = 0, bad_after_bad = 0;
  for (std::int64_t t = 0; t < 5'000; ++t) {
    const auto r = chain.first(t, 100);
    for (std::size_t k = 1; k < r.size(); ++k)
      if (r[k - 1]) ++after_bad, bad_after_bad += r[k].has_value();
  }
  EXPECT_LT(z(bad_after_bad, after_bad, 0.2), 4.5);
}

TEST(RequestChain, TheSameSeedGivesTheSameRequestsAndStepByStepIsTheWhole) {
  const RequestChainConfig c = config(0.3, 0.8);
  const RequestChain a(c), b(c);
  RequestChainConfig other = c;
  other.seed = 1235;
  const RequestChain d(other);
  EXPECT_EQ(a.first(7, 500), b.first(7, 500));
  EXPECT_NE(a.first(7, 500), d.first(7, 500));
  EXPECT_NE(a.first(7, 500), a.first(8, 500));
  const auto whole = a.first(3, 200);
  bool previous = false;
  for (std::int64_t k = 0; k < 200; ++k) {
    const auto step = a.at(3, k, previous);
    ASSERT_EQ(step, whole[static_cast<std::size_t>(k)]) << k;
    previous = step.has_value();
  }
}

TEST(RequestChain, ItsJsonComesBackAndBadValuesAreRefused) {
  const RequestChainConfig c = config(0.25, 0.9, "http_529=2,cut=1");
  const RequestChainConfig back = request_chain_from_json(to_json(c), "here");
  EXPECT_EQ(back.p, c.p);
  EXPECT_EQ(back.q, c.q);
  EXPECT_EQ(back.seed, c.seed);
  EXPECT_EQ(to_string(back.kinds), to_string(c.kinds));
  EXPECT_THROW(RequestChain(config(1.2, 0.5)), InputError);
  EXPECT_THROW(RequestChain(config(0.9, 0.1)), InputError);  // q below (2p-1)/p
  Json j = to_json(c);
  j.erase("q");
  EXPECT_THROW(request_chain_from_json(j, "here"), InputError);
  j = to_json(c);
  j["seed"] = -1;
  EXPECT_THROW(request_chain_from_json(j, "here"), InputError);
  j = to_json(c);
  j["kinds"] = "cut=-1";
  EXPECT_THROW(request_chain_from_json(j, "here"), InputError);
}

TEST(RequestChain, TheLogsPlanIsItsRequests) {
  const RequestChainConfig c = config(0.3, 0.8);
  RequestLog log;
  log.where = "log.jsonl";
  log.header = Json{{"relsim_log", 1}};
  EXPECT_FALSE(plan_of_chain_log(log, 10));
  log.header["chain"] = to_json(c);
  RequestLine line;
  line.task = 5;
  line.index = 40;  // past the length asked for: the list reaches it
  log.requests.push_back(line);
  const auto drawn = plan_of_chain_log(log, 10);
  ASSERT_TRUE(drawn);
  ASSERT_EQ(drawn->tasks.size(), 6u);
  EXPECT_EQ(drawn->header["source"], "chain");
  EXPECT_TRUE(drawn->tasks[0].requests.empty());
  EXPECT_EQ(drawn->tasks[5].requests, RequestChain(c).first(5, 41));
  // Ids past what a plan holds are refused in a line, not allocated.
  log.requests[0].index = kMaxChainPlanRequests;
  EXPECT_THROW((void)plan_of_chain_log(log, 10), InputError);
  log.requests[0].index = 0;
  log.requests[0].task = kMaxPlanTasks;
  EXPECT_THROW((void)plan_of_chain_log(log, 10), InputError);
  log.requests[0].task = 5;
  EXPECT_THROW((void)plan_of_chain_log(log, kMaxChainPlanRequests + 1), InputError);
}

}  // namespace
}  // namespace relsim
