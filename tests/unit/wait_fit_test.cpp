// The backoff family a log's waits say (wait_fit.hpp; docs/audit.md, Waits):
// waits drawn here from schedules written out by hand (the frameworks' own
// formulas, a seeded generator, a client delay of a few milliseconds), and
// the fit must name the schedule that drew them; the retry-after a 429's
// retry waited, told apart from the backoff or said not to be.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "relsim/audit/wait_fit.hpp"

namespace relsim {
namespace {

// Seconds before retry k (k = 0, 1, ...) given a uniform u in [0, 1).
using Schedule = std::function<double(int k, double u)>;

// `per_k` HTTP-layer retries at each retry number 0..largest, after `after`,
// each waiting schedule(k, U) plus an exponential client delay of mean 4 ms.
std::vector<ObservedRetry> draw(const Schedule& schedule, int largest, int per_k, std::uint64_t seed,
                                FaultKind after = FaultKind::http_529) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::exponential_distribution<double> delay(1.0 / 0.004);
  std::vector<ObservedRetry> out;
  for (int i = 0; i < per_k; ++i)
    for (int k = 0; k <= largest; ++k) {
      ObservedRetry r;
      r.task = i;
      r.request = k + 1;
      r.from = {k, 0, k + 1};
      r.to = {k + 1, 0, k + 2};
      r.after = after;
      r.waited = schedule(k, u(gen)) + delay(gen);
      out.push_back(r);
    }
  return out;
}

WaitFit fit(const std::vector<ObservedRetry>& retries, RetryAfterSent sent = {}) {
  AuditOptions options;
  return fit_retries(retries, sent, options, true);
}

TEST(WaitFit, NamesTheSdksOwnSchedule) {
  // The official SDKs: min(0.5 2^k, 8) (1 - U/4), retries 0 to 4.
  const auto w = fit(draw([](int k, double u) { return std::min(0.5 * std::ldexp(1.0, k), 8.0) * (1 - u / 4); }, 4,
                          20, 1));
  EXPECT_EQ(to_string(w.best.backoff), "sdk");
  EXPECT_EQ(w.best.parameters, 0);
  EXPECT_EQ(w.outside, 0);
  EXPECT_EQ(w.retries, 100);
  EXPECT_LE(w.best.delay, 0.02);
}

TEST(WaitFit, NamesLangChainsOnePlusUTimesTwoToTheK) {
  // p-retry with randomize: round((1 + U) 1000 2^k) ms, no cap.
  const auto w = fit(draw([](int k, double u) { return std::round((1 + u) * 1000 * std::ldexp(1.0, k)) / 1000; }, 5,
                          6, 2));
  EXPECT_EQ(to_string(w.best.backoff), to_string(parse_backoff("exp:2,1000000000,0.5")));
  EXPECT_EQ(describe_backoff(w.best.backoff), "(1 + U) 1 s 2^k, no cap");
  EXPECT_EQ(w.outside, 0);
}

TEST(WaitFit, NamesTheAiSdksTwoSecondsDoublingWithoutJitter) {
  const auto w = fit(draw([](int k, double) { return 2.0 * std::ldexp(1.0, k); }, 1, 10, 3));
  EXPECT_EQ(to_string(w.best.backoff), to_string(parse_backoff("exp:2,1000000000,0")));
  EXPECT_EQ(w.best.parameters, 1);
  EXPECT_EQ(w.outside, 0);
}

TEST(WaitFit, NamesFullJitterAndACap) {
  // U min(1 2^k, 4): full jitter, capped from retry 2 on.
  const auto w = fit(draw([](int k, double u) { return std::min(std::ldexp(1.0, k), 4.0) * (1 - u); }, 4, 40, 4));
  EXPECT_EQ(to_string(w.best.backoff), to_string(parse_backoff("exp:1,4,1")));
  EXPECT_EQ(w.best.parameters, 3);
}

TEST(WaitFit, FallsBackToAListForWaitsThatDoNotDouble) {
  const double waits[] = {0.1, 0.7, 0.3};
  const auto w = fit(draw([&](int k, double) { return waits[k]; }, 2, 8, 5));
  ASSERT_EQ(w.best.backoff.kind, Backoff::Kind::list);
  EXPECT_EQ(to_string(w.best.backoff), "list:0.1,0.7,0.3");
  EXPECT_EQ(w.outside, 0);
}

TEST(WaitFit, AnOutlierStaysAnOutlier) {
  auto retries = draw([](int k, double u) { return std::min(0.5 * std::ldexp(1.0, k), 8.0) * (1 - u / 4); }, 2, 20, 6);
  retries[7].waited = 30.0;  // a client paused by something else
  const auto w = fit(retries);
  EXPECT_EQ(to_string(w.best.backoff), "sdk");
  EXPECT_EQ(w.outside, 1);
}

TEST(WaitFit, GivenScheduleIsScoredNotReplaced) {
  const auto retries = draw([](int k, double) { return 2.0 * std::ldexp(1.0, k); }, 1, 4, 7);
  AuditOptions options;
  const auto w = fit_retries(retries, {}, options, false);
  EXPECT_FALSE(w.fitted);
  EXPECT_EQ(to_string(w.best.backoff), "sdk");
  EXPECT_EQ(w.outside, 8);  // 2 s and 4 s are past the SDK's 0.5 s and 1 s plus 0.5 s
}

// A 429's retries: the Vercel AI SDK waits retry-after (here 0 s), its
// backoff (2 s) otherwise; the other retries fix the backoff first.
TEST(WaitFit, ReadsThatA429sRetryWaitedRetryAfter) {
  auto retries = draw([](int k, double) { return 2.0 * std::ldexp(1.0, k); }, 1, 6, 8);
  const auto after_429 = draw([](int, double) { return 0.0; }, 0, 5, 9, FaultKind::http_429);
  retries.insert(retries.end(), after_429.begin(), after_429.end());
  const auto w = fit(retries, {0.0, std::nullopt});
  EXPECT_EQ(to_string(w.best.backoff), to_string(parse_backoff("exp:2,1000000000,0")));
  EXPECT_EQ(w.retry_after.retries, 5);
  EXPECT_EQ(w.retry_after.retry_after, 5);
  EXPECT_EQ(w.retry_after.backoff, 0);
  EXPECT_EQ(w.retry_after.use, RetryAfterUse::retry_after);
  EXPECT_TRUE(w.retry_after.told_apart);
  EXPECT_EQ(w.outside, 0);
}

TEST(WaitFit, ReadsThatA429sRetryIgnoredRetryAfter) {
  // The Anthropic SDK takes retry-after 0 as no answer and waits its backoff;
  // 3 s is sent as retry-after-ms, which this client does not read either.
  auto retries = draw([](int k, double u) { return std::min(0.5 * std::ldexp(1.0, k), 8.0) * (1 - u / 4); }, 1, 10, 10);
  const auto after_429 = draw([](int, double u) { return 0.5 * (1 - u / 4); }, 0, 6, 11, FaultKind::http_429);
  retries.insert(retries.end(), after_429.begin(), after_429.end());
  const auto w = fit(retries, {0.0, 3.0});
  EXPECT_EQ(w.retry_after.use, RetryAfterUse::backoff);
  EXPECT_EQ(w.retry_after.retry_after_ms, 0);
  EXPECT_EQ(w.outside, 0);
}

TEST(WaitFit, ReadsRetryAfterMsBeforeRetryAfter) {
  auto retries = draw([](int k, double u) { return std::min(0.5 * std::ldexp(1.0, k), 8.0) * (1 - u / 4); }, 1, 10, 12);
  const auto after_429 = draw([](int, double) { return 2.5; }, 0, 4, 13, FaultKind::http_429);
  retries.insert(retries.end(), after_429.begin(), after_429.end());
  const auto w = fit(retries, {4.0, 2.5});
  EXPECT_EQ(w.retry_after.use, RetryAfterUse::retry_after_ms);
  EXPECT_EQ(w.retry_after.retry_after_ms, 4);
  EXPECT_EQ(w.retry_after.retry_after, 0);
  ASSERT_TRUE(w.retry_after.wait);
  EXPECT_DOUBLE_EQ(*w.retry_after.wait, 2.5);
}

TEST(WaitFit, ReadsTheBackoffWhenRetryAfterFallsInsideItsWindow) {
  // A retry-after of 0.45 s lies inside the SDK's first window [0.375, 0.5]:
  // a client that waits its jittered backoff is still read as doing so.
  auto retries = draw([](int k, double u) { return std::min(0.5 * std::ldexp(1.0, k), 8.0) * (1 - u / 4); }, 1, 10, 14);
  const auto after_429 = draw([](int, double u) { return 0.5 * (1 - u / 4); }, 0, 8, 15, FaultKind::http_429);
  retries.insert(retries.end(), after_429.begin(), after_429.end());
  const auto w = fit(retries, {0.45, std::nullopt});
  EXPECT_EQ(w.retry_after.use, RetryAfterUse::backoff);
  EXPECT_GE(w.retry_after.backoff, 6);
}

}  // namespace
}  // namespace relsim
