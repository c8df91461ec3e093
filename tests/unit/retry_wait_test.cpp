// The wait a client owes before a retry (client/retry_wait.hpp), the rule the
// audit and the live check in time mode both hold waits against: which layer
// retries, its retry number, the schedule's wait, retry-after for an
// http_429, all times the time scale. Expected values are written out by
// hand from the SDKs' schedule, min(0.5 2^k, 8) (1 - 0.25 U).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "relsim/core/policy.hpp"
#include "relsim/client/retry_wait.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

// The states a layered call with s = 2, r = 2 goes through on `faults`.
std::vector<CallState> states(const Policy& policy, const std::vector<FaultKind>& faults) {
  std::vector<CallState> out{CallState{}};
  for (const FaultKind f : faults) out.push_back(react(policy, out.back(), f).next);
  return out;
}

TEST(RetryWait, SdkScheduleTimesTheScaleForEachLayer) {
  ClientTiming t;
  t.time_scale = 0.1;
  // Two 529s (HTTP retries 0 and 1), then two cuts (stream retries 0 and
  // 1, each a fresh SDK call).
  const Policy p{.n = 1, .r = 2, .kind = PolicyKind::layered};
  const auto s = states(p, {FaultKind::http_529, FaultKind::http_529, FaultKind::cut, FaultKind::cut});
  const RetryWait w0 = retry_wait(t, 0.0, s[0], s[1], FaultKind::http_529);
  EXPECT_TRUE(w0.http);
  EXPECT_EQ(w0.retry, 0);
  EXPECT_DOUBLE_EQ(w0.max, 0.05);
  EXPECT_DOUBLE_EQ(w0.jitter, 0.25);
  EXPECT_DOUBLE_EQ(w0.shortest(), 0.0375);
  const RetryWait w1 = retry_wait(t, 0.0, s[1], s[2], FaultKind::http_529);
  EXPECT_TRUE(w1.http);
  EXPECT_EQ(w1.retry, 1);
  EXPECT_DOUBLE_EQ(w1.max, 0.1);
  const RetryWait w2 = retry_wait(t, 0.0, s[2], s[3], FaultKind::cut);  // in-stream: the loop's retry 0
  EXPECT_FALSE(w2.http);
  EXPECT_EQ(w2.retry, 0);
  EXPECT_DOUBLE_EQ(w2.max, 0.05);
  const RetryWait w3 = retry_wait(t, 0.0, s[3], s[4], FaultKind::cut);
  EXPECT_FALSE(w3.http);
  EXPECT_EQ(w3.retry, 1);
  EXPECT_DOUBLE_EQ(w3.max, 0.1);
}

TEST(RetryWait, RetryAfterReplacesTheBackoffOfAnHttp429Only) {
  ClientTiming t;
  t.time_scale = 0.5;
  const Policy p{.n = 1, .r = 2, .kind = PolicyKind::layered};
  const auto s = states(p, {FaultKind::http_429});
  const RetryWait honoured = retry_wait(t, 3.0, s[0], s[1], FaultKind::http_429);
  EXPECT_DOUBLE_EQ(honoured.max, 1.5);
  EXPECT_DOUBLE_EQ(honoured.jitter, 0.0);
  EXPECT_DOUBLE_EQ(honoured.shortest(), 1.5);
  EXPECT_DOUBLE_EQ(retry_wait(t, 3.0, s[0], s[1], FaultKind::http_529).max, 0.25);  // not a 429: backoff
  EXPECT_DOUBLE_EQ(retry_wait(t, 60.0, s[0], s[1], FaultKind::http_429).max, 0.25);  // 60 s is not honoured
}

TEST(RetryWait, ListAndCappedSchedules) {
  ClientTiming t;
  t.backoff_schedule = parse_backoff("list:1,5,30");
  Policy simple;
  simple.kind = PolicyKind::simple;
  simple.n = 1;
  simple.r = 5;
  auto s = states(simple, {FaultKind::cut, FaultKind::cut, FaultKind::cut, FaultKind::cut});
  const double want[] = {1.0, 5.0, 30.0, 30.0};
  for (int k = 0; k < 4; ++k) {
    const RetryWait w = retry_wait(t, 0.0, s[static_cast<std::size_t>(k)], s[static_cast<std::size_t>(k) + 1],
                                   FaultKind::cut);
    EXPECT_DOUBLE_EQ(w.max, want[k]) << k;
    EXPECT_EQ(w.jitter, 0.0);
    EXPECT_TRUE(w.accepts(want[k], 0.0, 0.0));
    EXPECT_FALSE(w.accepts(want[k] - 0.01, 0.0, 0.0));
  }
  t.backoff_schedule = Backoff::sdk();
  simple.r = 8;
  s = states(simple, std::vector<FaultKind>(8, FaultKind::cut));
  EXPECT_DOUBLE_EQ(retry_wait(t, 0.0, s[7], s[8], FaultKind::cut).max, 8.0);  // min(0.5 2^7, 8)
  EXPECT_TRUE(retry_wait(t, 0.0, s[7], s[8], FaultKind::cut).accepts(6.0 - 0.05, 0.05, 0.0));
  EXPECT_FALSE(retry_wait(t, 0.0, s[7], s[8], FaultKind::cut).accepts(5.9, 0.05, 0.5));
  EXPECT_FALSE(retry_wait(t, 0.0, s[7], s[8], FaultKind::cut).accepts(8.6, 0.05, 0.5));
}

// The generalised client clock keeps the SDK default bit for bit.
TEST(RetryWait, TheClientsDefaultBackoffIsTheSdkFormula) {
  ClientTiming t;
  t.time_scale = 0.01;
  for (int k = 0; k < 10; ++k)
    for (const double u : {0.0, 0.3, 0.999}) {
      const double old = std::min(0.5 * std::pow(2.0, k), 8.0) * 0.01 * (1.0 - 0.25 * u);
      EXPECT_EQ(t.backoff(k, u), old) << k << " " << u;
    }
}

}  // namespace
}  // namespace relsim
