// relsim live in time mode and relsim serve --outage, end to end (label
// live, each test alone: the waits are wall-clock waits). The checks are
// counts and bounds: the success count inside its 99.99% interval around the
// exact value, every retry's wait inside its window, no task that departs
// from the policy's rules; and one run whose wait window is made too tight
// to hold, to show the check fails when a wait is off. Bad input: one line,
// exit 2.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include <nlohmann/json.hpp>

#include "support/raw_client.hpp"
#include "support/run.hpp"

namespace {

using relsim::test::run_relsim;

relsim::test::RunOptions within(double seconds) {
  relsim::test::RunOptions o;
  o.timeout = seconds;
  return o;
}

nlohmann::json run_json(const std::string& args, int want_code) {
  const relsim::test::RunResult r = run_relsim(args, within(240));
  EXPECT_EQ(r.code, want_code) << args << "\n" << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

TEST(LiveTimeMode, ARunOfTwoHundredTasksMatchesTheExactValueAndTheBackoff) {
  const auto j = run_json(
      "live --t-good 2 --t-bad 1 --time-scale 0.05 --tasks 200 --n 2 --r 2 --s 2 --policy layered "
      "--task-spacing 1.5 --wait-tolerance 0.2 --seed 5 --json",
      0);
  EXPECT_EQ(j["mode"], "time");
  EXPECT_EQ(j["tasks"], 200);
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["covered"], true) << j.dump();
  EXPECT_LE(j["ci_low"].get<double>(), j["exact"].get<double>());
  EXPECT_GE(j["ci_high"].get<double>(), j["exact"].get<double>());
  // A third of the time bad, two calls: tasks both fail and retry.
  EXPECT_GT(j["exact"].get<double>(), 0.3);
  EXPECT_LT(j["exact"].get<double>(), 0.99);
  EXPECT_GT(j["bad_requests"].get<int>(), 50);
  EXPECT_GT(j["waits"]["checked"].get<int>(), 50);
  EXPECT_EQ(j["waits"]["outside"], 0) << j["problems"].dump();
  EXPECT_EQ(j["mismatches"], 0) << j["problems"].dump();
  EXPECT_EQ(j["off_schedule"], 0);
  EXPECT_EQ(j["late_starts"], 0);
  EXPECT_GT(j["bad_intervals"].get<int>(), 30);
  EXPECT_NEAR(j["bad_time"].get<double>(), 1.0 / 3.0, 0.15);
  // The exact value is relsim exact's for the model the run stands for: a
  // stall and a slow header take the client's idle and header timeouts
  // (0.2 s of wall time at scale 0.05: 4 model seconds), other requests 0 s.
  const auto e = run_json(
      "exact --t-good 2 --t-bad 1 --r 2 --n 2 --s 2 --policy layered --fault-seconds stall=4,slow_headers=4 --json", 0);
  EXPECT_NEAR(j["exact"].get<double>(), e["success"].get<double>(), 1e-12);
  EXPECT_NEAR(j["exact_mean_seconds"].get<double>(), e["mean_seconds"].get<double>(), 1e-9);
}

// --backoff and --think-seconds drive the client: the waits of a fixed list,
// 0.2 s then 0.4 s of wall time, are held to windows of +-0.15 s, which
// neither the SDK default (0.025 s then 0.05 s for these two retries) nor the
// list's other entry would meet; and the steps between calls last the think time (a
// client that did not pause would make them 25 ms shorter than the model's,
// and the mean step residual negative).
TEST(LiveTimeMode, TheBackoffListAndThinkTimeDriveTheClientsWaits) {
  const auto j = run_json(
      "live --t-good 2 --t-bad 1 --time-scale 0.05 --tasks 80 --n 2 --r 3 --policy simple "
      "--backoff list:4,8 --think-seconds 0.5 --task-spacing 1.5 --wait-tolerance 0.15 --seed 8 --json",
      0);
  EXPECT_EQ(j["backoff"], "list:4,8");
  EXPECT_EQ(j["think_seconds"], 0.5);
  EXPECT_EQ(j["passed"], true) << j["problems"].dump();
  EXPECT_GT(j["waits"]["checked"].get<int>(), 10);
  EXPECT_EQ(j["waits"]["outside"], 0);
  EXPECT_GE(j["waits"]["min_margin"].get<double>(), -0.09);
  EXPECT_LE(j["waits"]["max_excess"].get<double>(), 0.09);
  EXPECT_GT(j["waits"]["mean_step_residual"].get<double>(), -0.005);
}

// With no tolerance a wait of a fixed list is late by the loopback latency:
// the wait check must say so, and the run exit 1.
TEST(LiveTimeMode, AWaitOutsideItsWindowFailsTheRun) {
  const auto j = run_json(
      "live --t-good 2 --t-bad 1 --time-scale 0.05 --tasks 40 --n 2 --r 3 --policy simple "
      "--backoff list:2 --task-spacing 1.5 --wait-tolerance 0 --seed 8 --json",
      1);
  EXPECT_GT(j["waits"]["checked"].get<int>(), 5);
  EXPECT_GT(j["waits"]["outside"].get<int>(), 0);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["mismatches"], 0);
}

// One worker for tasks released 75 ms apart, each taking at least two calls
// and some of them a 0.2 s timeout or two: the later tasks wait for the
// worker, so the check counts late starts and fails the run. (A worker's
// first task is never counted: it waits only for the client's threads.)
TEST(LiveTimeMode, TooFewWorkersMakeLateStartsThatFailTheRun) {
  const auto j = run_json(
      "live --t-good 2 --t-bad 1 --time-scale 0.05 --tasks 40 --n 2 --r 2 --s 2 --policy layered "
      "--task-spacing 1.5 --concurrency 1 --seed 5 --json",
      1);
  EXPECT_GT(j["late_starts"].get<int>(), 0);
  EXPECT_LT(j["late_starts"].get<int>(), 40);
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["mismatches"], 0);
}

void expect_one_line_error(const std::string& args, const std::string& needle) {
  const relsim::test::RunResult r = run_relsim(args, within(30));
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
  EXPECT_EQ(r.out, "") << args;
  ASSERT_FALSE(r.err.empty()) << args;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << args << ": " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << args << ": " << r.err;
}

TEST(LiveTimeMode, BadInputIsOneLineAndExitTwo) {
  expect_one_line_error("live --t-good 0 --t-bad 1 --n 2 --r 2", "0");
  expect_one_line_error("live --t-good 2 --t-bad -1 --n 2 --r 2", "-1");
  expect_one_line_error("live --t-good 2 --n 2 --r 2", "--t-bad");
  expect_one_line_error("live --t-good 2 --t-bad 1 --n 2 --r 2 --p 0.3", "--p");
  expect_one_line_error("live --t-good 2 --t-bad 1 --n 2 --r 2 --fault cut", "--fault");
  expect_one_line_error("live --t-good 2 --t-bad 1 --n 2 --r 2 --chain continuous", "--chain");
  expect_one_line_error("live --t-good 2 --t-bad 1 --n 2 --r 2 --task-timeout 0.5", "task-timeout");
  expect_one_line_error("live --t-good 2 --t-bad 1 --n 2 --r 2 --backoff list:1,-2", "-2");
  expect_one_line_error("live --t-good 2 --t-bad 1 --n 2 --r 2 --task-spacing 0", "spacing");
  expect_one_line_error("live --p 0.3 --n 2 --r 2 --task-spacing 3", "--task-spacing");
  expect_one_line_error("live --t-good 2 --t-bad 1 --n 2 --r 2 --time-scale 0.0001", "wall seconds");
}

TEST(ServeOutage, BadInputIsOneLineAndExitTwo) {
  expect_one_line_error("serve --port 0 --outage 0,1", "t_good = 0");
  expect_one_line_error("serve --port 0 --outage 2", "is not T_GOOD,T_BAD");
  expect_one_line_error("serve --port 0 --outage 2,1,3", "is not T_GOOD,T_BAD");
  expect_one_line_error("serve --port 0 --outage 2,x", "t_bad = 'x'");
  expect_one_line_error("serve --port 0 --outage 2,1 --time-scale 0", "time-scale = 0");
  expect_one_line_error("serve --port 0 --outage 2,1 --kinds cut=-1", "-1");
  expect_one_line_error("serve --port 0 --outage-seed 3", "--outage");
  expect_one_line_error("serve --port 0 --kinds cut=1", "--outage");
}

// relsim serve --outage as a harness sees it: the banner, then the schedule
// at GET /control/outage, and the server stopping cleanly on SIGTERM.
TEST(ServeOutage, ServesTheScheduleOverHttp) {
  relsim::test::Background serve({relsim::test::relsim_exe(), "serve", "--port", "0", "--outage", "2,1",
                                  "--outage-seed", "4", "--kinds", "http_529=1", "--time-scale", "0.01"});
  const int port = relsim::test::port_from_banner(serve.read_line());
  ASSERT_GT(port, 0);
  relsim::test::RawClient c(port);
  c.send("GET /control/outage HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
  c.drain();
  ASSERT_EQ(c.buf.rfind("HTTP/1.1 200 OK", 0), 0u) << c.buf;
  const auto j = nlohmann::json::parse(c.buf.substr(c.buf.find("\r\n\r\n") + 4));
  EXPECT_EQ(j["t_good"], 2.0);
  EXPECT_EQ(j["t_bad"], 1.0);
  EXPECT_EQ(j["seed"], 4);
  EXPECT_EQ(j["kinds"], "http_529=1");
  EXPECT_EQ(j["time_scale"], 0.01);
  EXPECT_GT(j["now"].get<double>(), 0.0);
  EXPECT_TRUE(j["bad"].is_array());
  EXPECT_EQ(serve.stop(SIGTERM), 0);
}

}  // namespace
