// The live client's rules without a socket (client.hpp): the HTTP layer's
// retry rules as a table, the backoff and its bounds, the configuration's
// ranges and the request it sends. The same client against the mock server
// over loopback is tests/live/client_test.cpp.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/client/client.hpp"

namespace relsim {
namespace {

// ---- The HTTP layer's rules -------------------------------------------------

struct RetryCase {
  int status;
  std::optional<std::string> should_retry, retry_after_ms, retry_after;
  bool retry;
  std::optional<double> server_wait;  // seconds; none: the backoff
};

TEST(HttpRetry, FollowsTheSdkDecisionTable) {
  const std::optional<std::string> none;
  const std::vector<RetryCase> table = {
      {408, none, none, none, true, std::nullopt},
      {409, none, none, none, true, std::nullopt},
      {429, none, none, none, true, std::nullopt},
      {500, none, none, none, true, std::nullopt},
      {502, none, none, none, true, std::nullopt},
      {503, none, none, none, true, std::nullopt},
      {529, "true", none, none, true, std::nullopt},
      {599, none, none, none, true, std::nullopt},
      {400, none, none, none, false, std::nullopt},
      {401, none, none, none, false, std::nullopt},
      {404, none, none, none, false, std::nullopt},
      {413, none, none, none, false, std::nullopt},
      // x-should-retry overrides the status, both ways; other values do not.
      {400, "true", none, none, true, std::nullopt},
      {529, "false", none, none, false, std::nullopt},
      {429, "false", none, "5", false, 5.0},
      {500, "yes", none, none, true, std::nullopt},
      {404, "TRUE", none, none, false, std::nullopt},
      // retry-after-ms first, else retry-after in seconds, only inside (0, 60) s.
      {429, none, "1500", none, true, 1.5},
      {429, none, none, "2", true, 2.0},
      {429, none, "250", "9", true, 0.25},
      {429, none, "x", "3", true, 3.0},
      {429, none, "0", "3", true, std::nullopt},  // a parsed 0 is the server's answer: no wait of its own
      {429, none, none, "0", true, std::nullopt},
      {429, none, none, "60", true, std::nullopt},
      {429, none, none, "59.5", true, 59.5},
      {429, none, none, "-1", true, std::nullopt},
      {429, none, none, "soon", true, std::nullopt},
      {429, none, none, "Wed, 21 Oct 2015 07:28:00 GMT", true, std::nullopt},
      {503, none, "60000", none, true, std::nullopt},
      {503, none, " 750 ", none, true, 0.75},
  };
  for (const RetryCase& c : table) {
    const RetryHeaders h{c.should_retry, c.retry_after_ms, c.retry_after};
    SCOPED_TRACE(testing::Message() << c.status << " x-should-retry=" << c.should_retry.value_or("-")
                                    << " retry-after-ms=" << c.retry_after_ms.value_or("-")
                                    << " retry-after=" << c.retry_after.value_or("-"));
    EXPECT_EQ(should_retry_status(c.status, c.should_retry), c.retry);
    EXPECT_EQ(server_retry_after(h), c.server_wait);
    ClientTiming t;
    for (const int k : {0, 3})
      EXPECT_DOUBLE_EQ(http_retry_wait(h, k, 0.5, t), c.server_wait ? *c.server_wait : t.backoff(k, 0.5));
  }
}

TEST(HttpRetry, ScalesTheServersWaitWithTheClock) {
  ClientTiming t;
  t.time_scale = 0.001;
  EXPECT_DOUBLE_EQ(http_retry_wait(RetryHeaders{std::nullopt, std::nullopt, "2"}, 0, 0.0, t), 0.002);
  EXPECT_DOUBLE_EQ(http_retry_wait(RetryHeaders{}, 0, 0.0, t), 0.0005);
}

TEST(HttpRetry, ClassifiesStatusesAsFaultKinds) {
  EXPECT_EQ(fault_kind_of_status(400), FaultKind::http_400);
  EXPECT_EQ(fault_kind_of_status(429), FaultKind::http_429);
  EXPECT_EQ(fault_kind_of_status(500), FaultKind::http_500);
  EXPECT_EQ(fault_kind_of_status(503), FaultKind::http_503);
  EXPECT_EQ(fault_kind_of_status(529), FaultKind::http_529);
  EXPECT_EQ(fault_kind_of_status(408), FaultKind::http_429);
  EXPECT_EQ(fault_kind_of_status(409), FaultKind::http_429);
  EXPECT_EQ(fault_kind_of_status(502), FaultKind::http_500);
  EXPECT_EQ(fault_kind_of_status(404), FaultKind::http_400);
}

TEST(Backoff, DoublesFromHalfASecondUpToEightSeconds) {
  ClientTiming t;
  const double expected[] = {0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0};
  for (int k = 0; k < 7; ++k) EXPECT_DOUBLE_EQ(t.backoff(k, 0.0), expected[k]) << "retry " << k;
  EXPECT_DOUBLE_EQ(t.backoff(0, 0.5), 0.5 * 0.875);
  EXPECT_DOUBLE_EQ(t.backoff(60, 0.0), 8.0);  // 2^60 does not overflow the cap
}

TEST(Backoff, StaysWithinThreeQuartersAndAllOfItsCapForEveryJitter) {
  ClientTiming t;
  t.time_scale = 0.001;
  for (std::int64_t task = 0; task < 50; ++task)
    for (std::int64_t k = 0; k < 20; ++k) {
      const double u = jitter(20261001, task, k);
      ASSERT_GE(u, 0.0);
      ASSERT_LT(u, 1.0);
      const int retry = static_cast<int>(k % 6);
      const double b = t.backoff(retry, u);
      EXPECT_GT(b, 0.75 * t.backoff_max(retry));
      EXPECT_LE(b, t.backoff_max(retry));
    }
}

TEST(Backoff, JitterIsAPureFunctionOfSeedTaskAndRetry) {
  EXPECT_EQ(jitter(1, 2, 3), jitter(1, 2, 3));
  EXPECT_NE(jitter(1, 2, 3), jitter(1, 2, 4));
  EXPECT_NE(jitter(1, 2, 3), jitter(1, 3, 3));
  EXPECT_NE(jitter(1, 2, 3), jitter(2, 2, 3));
  // Its own stream: not the chain's draw for the same counter.
  EXPECT_NE(jitter(1, 2, 3), rng::uniform(1, rng::Stream::chain, 2, 3));
}

TEST(ClientConfig, RefusesValuesOutOfRange) {
  ClientConfig c;
  c.port = 8080;
  EXPECT_NO_THROW(validate(c));
  auto bad = [&](auto change) {
    ClientConfig x = c;
    change(x);
    EXPECT_THROW(validate(x), InputError);
  };
  bad([](ClientConfig& x) { x.port = 0; });
  bad([](ClientConfig& x) { x.concurrency = 0; });
  bad([](ClientConfig& x) { x.threads = 0; });
  bad([](ClientConfig& x) { x.host.clear(); });
  bad([](ClientConfig& x) { x.timing.idle_timeout = 0.0; });
  bad([](ClientConfig& x) { x.policy.r = -1; });
  EXPECT_THROW(run_live(c, 0, -1), InputError);
}

TEST(ClientRequest, NamesTheTaskInPathBodyAndAnswer) {
  EXPECT_EQ(request_target(12), "/t/12/v1/messages");
  EXPECT_EQ(request_body(12, 1),
            R"({"model":"relsim-mock","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"task 12 call 1"}]})");
  EXPECT_EQ(expected_text(12), "Hello from task 12.");
}

}  // namespace
}  // namespace relsim
