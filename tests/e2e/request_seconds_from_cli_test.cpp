// --request-seconds-from DIR on the command line (docs/time.md, "Durations
// from recordings"): a recording directory written here in the documented
// format (docs/replay.md), its kept durations drawn by exact and simulate,
// and what is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"
#include "support/run_json.hpp"

namespace request_seconds_from_cli_test {

namespace fs = std::filesystem;
using relsim::test::json_of;

// One exchange of the format, version 1: a stream whose last event arrived at end_ms.
std::string line(int status, const char* entry, double end_ms) {
  return fmt::format(
      R"({{"relsim_recording": 1, "dialect": "anthropic", "task": 0, "index": 0, "entry": "{}",)"
      R"( "request": {{"method": "POST", "path": "/v1/messages", "headers": [], "body": "{{}}"}},)"
      R"( "response": {{"status": {}, "headers": [["content-type", "text/event-stream"]], "headers_ms": 40,)"
      R"( "events": [{{"ms": 100, "text": "event: message_start\ndata: {{}}\n\n"}},)"
      R"( {{"ms": {}, "text": "event: message_stop\ndata: {{}}\n\n"}}], "complete": true, "end_ms": {}}}}})",
      entry, status, end_ms, end_ms);
}

std::string recordings() {
  const fs::path dir = relsim::test::scratch("request_seconds_from") / "rec";
  fs::create_directories(dir);
  relsim::test::write_temp("request_seconds_from", "rec/relsim-a.jsonl",
                           line(200, "ok", 500) + "\n" + line(200, "ok", 1500) + "\n" + line(200, "ok", 4000) +
                               "\n" + line(200, "cut", 50) + "\n" + line(529, "ok", 20) + "\n");
  return dir.string();
}

TEST(RequestSecondsFromCli, ExactAndSimulateDrawTheKeptDurations) {
  const std::string dir = recordings();
  const std::string model = "--t-good 60 --t-bad 20 --r 2 --n 2 --backoff list:1,2 --kinds cut=1";
  const auto e = json_of(fmt::format("exact {} --request-seconds-from {} --json", model, dir));
  ASSERT_TRUE(e.contains("request_seconds_from")) << e.dump();
  const auto& law = e["request_seconds_from"];
  EXPECT_EQ(law["count"], 3);
  EXPECT_EQ(law["source"], dir);
  EXPECT_DOUBLE_EQ(e["request_seconds"].get<double>(), 2.0);  // (0.5 + 1.5 + 4) / 3
  EXPECT_DOUBLE_EQ(law["max"].get<double>(), 4.0);
  EXPECT_TRUE(e["seconds_quantiles"].is_null());  // no exact distribution over drawn durations
  const auto s = json_of(fmt::format(
      "simulate {} --request-seconds-from {} --tasks 20000 --seed 5 --confidence 0.9999 --json", model, dir));
  const double exact_mean = e["mean_seconds"].get<double>();
  EXPECT_LE(s["mean_seconds_ci"][0].get<double>(), exact_mean) << s.dump();
  EXPECT_GE(s["mean_seconds_ci"][1].get<double>(), exact_mean) << s.dump();
  EXPECT_EQ(s["mean_seconds_covered"], true);
  EXPECT_EQ(s["request_seconds_from"]["count"], 3);
  // Fixed at the law's mean, the task is another one.
  const auto f = json_of(fmt::format("exact {} --request-seconds 2 --json", model));
  EXPECT_GT(std::abs(f["success"].get<double>() - e["success"].get<double>()), 1e-4) << f.dump();
  EXPECT_DOUBLE_EQ(law["first_event_mean"].get<double>(), 0.1);  // every event stream's first event at 100 ms
  EXPECT_DOUBLE_EQ(law["p50"].get<double>(), 1.5);                  // the smallest with half at or below it
}

TEST(RequestSecondsFromCli, WhatDoesNotFitIsRefused) {
  const std::string dir = recordings();
  relsim::test::expect_input_error(
      fmt::format("exact --t-good 60 --t-bad 20 --request-seconds 1 --request-seconds-from {}", dir),
      "--request-seconds-from and --request-seconds");
  relsim::test::expect_input_error(fmt::format("exact --p 0.1 --request-seconds-from {}", dir), "time mode");
  relsim::test::expect_input_error(std::vector<std::string>{"exact", "--t-good", "60", "--t-bad", "20", "--n", "2",
                                                            "--r", "1", "--request-seconds-from", ""},
                                   "request-seconds-from is empty");
  relsim::test::expect_input_error(
      fmt::format("live --t-good 60 --t-bad 20 --request-seconds-from {}", dir), "--request-seconds-from");
  const fs::path empty = relsim::test::scratch("request_seconds_from") / "empty";
  fs::create_directories(empty);
  relsim::test::write_temp("request_seconds_from", "empty/relsim-a.jsonl", line(503, "ok", 10) + "\n");
  relsim::test::expect_input_error(
      fmt::format("exact --t-good 60 --t-bad 20 --n 2 --r 1 --request-seconds-from {}", empty.string()), "none of its 1");
  relsim::test::write_temp("request_seconds_from", "empty/relsim-b.jsonl", "{\"relsim_recording\": 1, \"dial");
  relsim::test::expect_input_error(
      fmt::format("exact --t-good 60 --t-bad 20 --n 2 --r 1 --request-seconds-from {}", empty.string()), "relsim-b.jsonl:1");
}

}  // namespace request_seconds_from_cli_test
