// Drawn request durations (TimeModel::request_law, --request-seconds-from,
// docs/time.md): the exact engine over a law of one entry is the engine
// with that fixed duration; over a wider law it meets the closed form of
// one call with one retry, written here from the two-state chain alone; the
// simulator, which draws a duration per request, lies inside its intervals;
// and the durations come from the recordings a replay keeps.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/formats/recorded_seconds.hpp"
#include "relsim/formats/recording.hpp"
#include "relsim/montecarlo/simulate_time.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "relsim/montecarlo/trace_time.hpp"
#include "support/files.hpp"

// Named, not anonymous: the unit tests build as unity batches.
namespace request_law_test {

using namespace relsim;

void use_law(TimeModel& t, std::vector<double> law) {
  double sum = 0.0;
  for (const double d : law) sum += d;
  t.request_seconds = sum / static_cast<double>(law.size());
  t.request_law = std::move(law);
}

struct LawPoint {
  const char* name;
  PolicyKind kind;
  std::int64_t n;
  int s, r;
  const char* backoff;
  const char* kinds;
  const char* fault_seconds;  // nullptr: every fault takes a request's seconds
  double think;
  ChainScope scope;
};

const LawPoint kLawPoints[] = {
    {"simple_sdk", PolicyKind::simple, 2, 0, 2, "sdk", "cut=1", nullptr, 0.0, ChainScope::fresh},
    {"layered_list", PolicyKind::layered, 3, 2, 1, "list:1,2", "cut=1,http_529=1,overloaded=1", "http_529=0.1", 0.5,
     ChainScope::fresh},
    {"naive_content", PolicyKind::naive, 2, 1, 1, "sdk", "max_tokens=1,cut=1,stall_first=1", "stall_first=20", 0.0,
     ChainScope::fresh},
    {"budgeted_continuous", PolicyKind::budgeted, 2, 2, 2, "exp:0.5,4,0.5", "http_500=1,cut=1", nullptr, 1.0,
     ChainScope::continuous},
};

TimeModel law_point_model(const LawPoint& pt) {
  TimeModel t;
  t.chain = two_state_time_chain(30.0, 10.0);
  t.scope = pt.scope;
  t.backoff = parse_backoff(pt.backoff);
  t.think_seconds = pt.think;
  if (pt.fault_seconds) t.fault_seconds = parse_fault_seconds(pt.fault_seconds, 0.0, 0.0);
  return t;
}

ExactResult exact_of(const TimeModel& t, const LawPoint& pt, const Policy& policy) {
  ExactOptions eo;
  eo.kinds = parse_fault_weights(pt.kinds);
  eo.done_seconds = true;
  return exact_time(t, policy, eo);
}

void expect_close(double a, double b, const char* what) {
  EXPECT_NEAR(a, b, 1e-12 * (1.0 + std::abs(b))) << what;
}

TEST(RequestLaw, OneEntryIsTheFixedDuration) {
  for (const LawPoint& pt : kLawPoints) {
    SCOPED_TRACE(pt.name);
    const Policy policy{.n = pt.n, .r = pt.r, .s = pt.s, .B = 4, .kind = pt.kind};
    TimeModel fixed = law_point_model(pt), drawn = fixed;
    fixed.request_seconds = 1.7;
    use_law(drawn, {1.7, 1.7, 1.7});
    const ExactResult a = exact_of(fixed, pt, policy), b = exact_of(drawn, pt, policy);
    expect_close(b.success, a.success, "success");
    for (int k = 0; k < kOutcomeClasses; ++k)
      expect_close(b.outcomes[static_cast<std::size_t>(k)], a.outcomes[static_cast<std::size_t>(k)], "outcome");
    expect_close(b.mean_requests, a.mean_requests, "mean requests");
    expect_close(b.mean_seconds, a.mean_seconds, "mean seconds");
    expect_close(b.mean_seconds_done, a.mean_seconds_done, "mean seconds done");
    EXPECT_FALSE(b.seconds_complete);  // no exact distribution over a drawn duration
  }
}

// One call, simple with r = 1, a cut as the only kind, a fixed wait W: the
// task is done when its first request is good, or its first is bad and the
// retry, D + W later, is good. In the two-state chain (rates a = 1/t_good,
// b = 1/t_bad, lambda = a + b, pi_g = t_good / (t_good + t_bad)) the chance
// of good t seconds after bad is pi_g (1 - e^{-lambda t}).
TEST(RequestLaw, MeetsTheClosedFormOfOneCallWithOneRetry) {
  const double t_good = 20.0, t_bad = 8.0, wait = 1.5;
  const std::vector<double> law = {0.2, 1.0, 3.5, 7.25, 12.0};
  TimeModel t;
  t.chain = two_state_time_chain(t_good, t_bad);
  t.backoff = parse_backoff("list:1.5");
  use_law(t, law);
  const Policy policy{.n = 1, .r = 1, .s = 0, .B = 0, .kind = PolicyKind::simple};
  ExactOptions eo;
  eo.kinds = parse_fault_weights("cut=1");
  eo.done_seconds = true;
  const ExactResult e = exact_time(t, policy, eo);

  const double lambda = 1.0 / t_good + 1.0 / t_bad, pi_g = t_good / (t_good + t_bad), pi_b = 1.0 - pi_g;
  const auto good_after_bad = [&](double s) { return pi_g * (1.0 - std::exp(-lambda * s)); };
  double m = 0.0, p_retry = 0.0, timed_retry = 0.0;  // E[D], E[g(D + W)], E[(D + W) g(D + W)]
  for (const double d : law) {
    m += d / 5.0;
    p_retry += good_after_bad(d + wait) / 5.0;
    timed_retry += (d + wait) * good_after_bad(d + wait) / 5.0;
  }
  const double done = pi_g + pi_b * p_retry;
  EXPECT_NEAR(e.success, done, 1e-12);
  EXPECT_NEAR(e.mean_seconds, m + pi_b * (wait + m), 1e-12);
  // A done task's time: D, or D1 + W + D2 (D2 independent of the retry's state).
  EXPECT_NEAR(e.mean_seconds_done, (pi_g * m + pi_b * (timed_retry + m * p_retry)) / done, 1e-12);
  // The same task with every duration fixed at the law's mean is another task.
  TimeModel mean_only = t;
  mean_only.request_law.clear();
  EXPECT_GT(std::abs(exact_time(mean_only, policy, eo).success - e.success), 1e-4);
}

TEST(RequestLaw, TheSimulatorDrawsInsideTheExactIntervals) {
  constexpr double kConfidence = 0.9999;
  for (const LawPoint& pt : kLawPoints) {
    SCOPED_TRACE(pt.name);
    const Policy policy{.n = pt.n, .r = pt.r, .s = pt.s, .B = 4, .kind = pt.kind};
    TimeModel t = law_point_model(pt);
    use_law(t, {0.1, 0.4, 0.4, 2.0, 6.0, 15.0});
    const ExactResult e = exact_of(t, pt, policy);
    SimConfig config;
    config.tasks = 100'000;
    config.threads = 2;
    config.lanes = 16;
    config.kinds = parse_fault_weights(pt.kinds);
    TimeSimOptions so;
    so.confidence = kConfidence;
    const TimeSimResult r = simulate_time(t, policy, config, so);
    const double design = pt.scope == ChainScope::fresh ? 1.0 : r.counts.design_effect();
    const Interval success =
        effective_interval(IntervalKind::wilson, r.counts.successes, r.counts.tasks, kConfidence, design);
    EXPECT_TRUE(success.covers(e.success))
        << fmt::format("simulated {} of {} [{}, {}], exact {}", r.counts.successes, r.counts.tasks, success.low,
                       success.high, e.success);
    EXPECT_TRUE(r.mean_interval.covers(e.mean_seconds))
        << fmt::format("mean seconds [{}, {}], exact {}", r.mean_interval.low, r.mean_interval.high, e.mean_seconds);
  }
}

// The done tasks' mean time against the simulator's done tasks
// (trace_time_tasks: the chain drawn event by event, each duration drawn,
// never exp(Qt)): with several calls, so the gap between calls (its
// duration-weighted step) and the retries' both count; and with the law's
// steps kept for another chain, which must not be used.
TEST(RequestLaw, DoneSecondsMatchTheSimulatorsDoneTasks) {
  const std::vector<double> law = {0.05, 0.3, 0.3, 1.5, 4.0, 9.0};
  const LawPoint& simple = kLawPoints[0];
  const LawPoint& layered = kLawPoints[1];
  for (const LawPoint* pt : {&simple, &layered}) {
    SCOPED_TRACE(pt->name);
    TimeModel t = law_point_model(*pt);
    t.chain = two_state_time_chain(12.0, 4.0);
    use_law(t, law);
    const Policy policy{.n = 3, .r = pt->r, .s = pt->s, .B = 4, .kind = pt->kind};
    const double exact = exact_of(t, *pt, policy).mean_seconds_done;
    // Steps kept for another chain are not the ones to use.
    TimeModel other = t;
    other.chain = two_state_time_chain(50.0, 1.0);
    with_law_steps(other);
    TimeModel stale = t;
    stale.law_steps = other.law_steps;
    EXPECT_EQ(exact_of(stale, *pt, policy).mean_seconds_done, exact);
    with_law_steps(t);
    EXPECT_NEAR(exact_of(t, *pt, policy).mean_seconds_done, exact, 1e-12 * exact);
    SimConfig config;
    config.tasks = 200'000;
    config.seed = 11;
    config.kinds = parse_fault_weights(pt->kinds);
    double n = 0, sum = 0, squares = 0;
    for (const TimeTaskTrace& task : trace_time_tasks(t, policy, config))
      if (task.outcome.outcome == Outcome::done) n += 1, sum += task.seconds, squares += task.seconds * task.seconds;
    const double mean = sum / n, sd = std::sqrt((squares - n * mean * mean) / (n - 1));
    EXPECT_NEAR(exact, mean, 4.0 * sd / std::sqrt(n)) << "simulated " << mean << " over " << n << " done tasks";
    // The same with the law's mean as a fixed duration is another figure.
    TimeModel fixed = t;
    fixed.request_law.clear();
    fixed.law_steps.reset();
    EXPECT_GT(std::abs(exact_of(fixed, *pt, policy).mean_seconds_done - exact), 8.0 * sd / std::sqrt(n));
  }
}

RecordedExchange recorded(int status, const char* entry, double end_ms, bool complete = true) {
  RecordedExchange x;
  x.entry = entry;
  x.method = "POST";
  x.path = "/v1/messages";
  x.request_body = R"({"model":"m","stream":true})";
  x.status = status;
  x.response_headers = {{"content-type", "text/event-stream"}};
  x.headers_ms = 50.0;
  x.set_event_stream(true);
  x.add_body("event: message_start\ndata: {}\n\n", 120.0);
  x.add_body("event: message_stop\ndata: {}\n\n", end_ms);
  x.finish(complete, end_ms);
  return x;
}

TEST(RequestLaw, DurationsComeFromTheRecordingsAReplayKeeps) {
  const std::filesystem::path dir = test::scratch("request_law") / "rec";
  std::filesystem::create_directories(dir);
  std::string lines;
  for (const RecordedExchange& x :
       {recorded(200, "ok", 800.0), recorded(200, "ok", 2500.0), recorded(200, "cut", 300.0),
        recorded(529, "ok", 400.0), recorded(200, "ok", 900.0, false)})
    lines += x.line() + "\n";
  test::write_temp("request_law", "rec/relsim-a.jsonl", lines);
  const RecordedSeconds got = read_recorded_seconds(dir.string());
  EXPECT_EQ(got.seconds, (std::vector<double>{0.8, 2.5}));
  EXPECT_EQ(got.first_seconds, (std::vector<double>{0.12, 0.12}));
  EXPECT_EQ(got.skipped, 3);
  // None to keep: refused, naming the directory.
  std::filesystem::create_directories(test::scratch("request_law") / "none");
  test::write_temp("request_law", "none/relsim-a.jsonl", recorded(503, "ok", 10.0).line() + "\n");
  try {
    (void)read_recorded_seconds((test::scratch("request_law") / "none").string());
    ADD_FAILURE() << "a directory with no whole 2xx answer was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("none of its 1 recorded exchanges"), std::string::npos) << e.what();
  }
  // A law entry out of range is refused by the time model's check.
  TimeModel t;
  t.chain = two_state_time_chain(30.0, 10.0);
  use_law(t, {1.0, -2.0});
  EXPECT_THROW(validate(t), InputError);
}

}  // namespace request_law_test
