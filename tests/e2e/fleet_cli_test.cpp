// relsim fleet end to end: the --json keys the docs promise, the --csv time
// series, the same bytes for any thread count, and bad input (zero or
// negative limits, throttles that do not parse, a long duration without
// --force) refused with one line on stderr, exit code 2 and no file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

using Captured = relsim::test::RunResult;

const std::string kLoaded =
    "fleet --agents 200 --tenants 2 --start poisson:20 --duration 60 --quota 300 --capacity 20 --queue 30 "
    "--header-timeout 2 --pool 15 --throttle aws --policy layered --p 0.05 --q 0.4 --r 2 --n 2 --replicates 3";

using relsim::test::run_relsim;

using relsim::test::expect_input_error;

TEST(FleetCli, JsonHasTheDocumentedKeys) {
  const Captured r = run_relsim(kLoaded + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"tasks", "successes", "success_rate", "ci_low", "ci_high", "requests", "rate_429",
                          "rate_529", "amplification", "latency_p50", "latency_p99", "pool_wait_p99", "seed"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_GT(j["tasks"].get<long long>(), 0);
  EXPECT_LE(j["ci_low"].get<double>(), j["success_rate"].get<double>());
  EXPECT_GE(j["ci_high"].get<double>(), j["success_rate"].get<double>());
  EXPECT_GE(j["amplification"].get<double>(), 1.0);
  EXPECT_EQ(j["seed"].get<std::uint64_t>(), 20261001u);
}

TEST(FleetCli, SameBytesForAnyThreadCount) {
  const Captured one = run_relsim(kLoaded + " --json --threads 1");
  const Captured two = run_relsim(kLoaded + " --json --threads 2");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out, two.out);
  const Captured table = run_relsim(kLoaded);
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("amplification"), std::string::npos) << table.out;
}

// The time series: one row per bin over the duration, and its counts add up
// to the totals (every request is sent, and every task ends, inside the
// duration here: tasks stop starting at 30 s and end long before 60 s).
TEST(FleetCli, CsvIsTheTimeSeriesOfTheTotals) {
  const auto dir = relsim::test::scratch("fleet_csv");
  const std::string csv = (dir / "series.csv").string();
  const Captured r = run_relsim(
      "fleet --agents 50 --start poisson:10 --duration 60 --bin-seconds 5 --capacity 8 --p 0.1 --r 2 --n 2 --json "
      "--csv " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::istringstream lines(relsim::test::slurp(csv));
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "t,sent,good,r429,r529,timeouts,started,finished,successes,goodput");
  int rows = 0;
  long long sent = 0, started = 0;
  while (std::getline(lines, line)) {
    ++rows;
    std::istringstream cells(line);
    std::string cell;
    std::vector<std::string> c;
    while (std::getline(cells, cell, ',')) c.push_back(cell);
    ASSERT_EQ(c.size(), 10u) << line;
    sent += std::stoll(c[1]);
    started += std::stoll(c[6]);
  }
  EXPECT_EQ(rows, 12);
  EXPECT_EQ(started, j["tasks"].get<long long>());
  EXPECT_LE(sent, j["requests"].get<long long>());
  EXPECT_GT(sent, 0);
}

TEST(FleetCli, BadInputIsOneLineAndExitTwo) {
  expect_input_error("fleet --quota 0", "quota");
  expect_input_error("fleet --series", "give --json too");
  expect_input_error("fleet --json --series --live", "--series with --live");
  expect_input_error("fleet --quota -5", "quota");
  expect_input_error("fleet --capacity 0", "capacity");
  expect_input_error("fleet --pool 0", "pool");
  expect_input_error("fleet --pool many", "pool");
  expect_input_error("fleet --throttle grpc:10", "grpc:10");
  expect_input_error("fleet --throttle storm", "storm");
  expect_input_error("fleet --start poisson:0", "poisson:0");
  expect_input_error("fleet --trigger outage:10", "outage:10");
  expect_input_error("fleet --duration 100000", "--force");
  expect_input_error("fleet --agents 0", "agents");
  expect_input_error("fleet --tenants 3 --agents 2", "tenants");
  expect_input_error("fleet --p 1.2", "1.2");
  expect_input_error("fleet --b 2", "b");
  expect_input_error("fleet --replicates 0", "replicates");
  // A bad run writes no time series.
  const auto dir = relsim::test::scratch("fleet_bad_csv");
  const std::string csv = (dir / "series.csv").string();
  expect_input_error("fleet --capacity 0 --csv " + csv, "capacity");
  EXPECT_FALSE(std::filesystem::exists(csv));
}

TEST(FleetCli, LiveRunsBesideTheSimulationWithTheSameKeys) {
  // No shared limits and one agent per tenant: the live counts are replicate
  // 0's, so the verdict does not rest on timing.
  const Captured r = run_relsim(
      "fleet --live --agents 6 --tenants 6 --tasks-per-agent 4 --n 2 --p 0.3 --q 0.8 --kinds cut=1,malformed=1 "
      "--policy layered --s 1 --time-scale 0.016 --replicates 5 --duration 3600 --json");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"tasks", "successes", "success_rate", "ci_low", "ci_high", "requests", "rate_429",
                          "rate_529", "amplification", "latency_p50", "latency_p99", "pool_wait_p99", "seed", "live",
                          "simulated", "agreement", "agrees"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["tasks"].get<long long>(), 24);
  EXPECT_EQ(j["simulated"]["replicates"].get<int>(), 5);
  EXPECT_EQ(j["simulated"]["tasks"].get<long long>(), 120);
  EXPECT_TRUE(j["live"]["log_agrees"].get<bool>());
  EXPECT_EQ(j["live"]["server_log"]["requests"], j["requests"]);
  for (const auto& f : j["agreement"])
    if (f["figure"] == "success_rate") { EXPECT_EQ(f["live"], f["replayed"]); }
  EXPECT_TRUE(j["agrees"].get<bool>());
}

// With prices: the simulation's JSON has the cost keys, and with nothing
// shared the live run bills exactly what its replayed replicate bills (the
// same draws, each answer the client saw billed by its kind).
TEST(FleetCli, PricesBillTheSimulationAndTheLiveRunAlike) {
  const std::string prices = " --input-tokens 20000 --output-tokens 800 --price-in 3 --price-out 15";
  const Captured sim = run_relsim(kLoaded + prices + " --json");
  ASSERT_EQ(sim.code, 0) << sim.err;
  const nlohmann::json s = nlohmann::json::parse(sim.out);
  for (const char* key : {"cost_mean", "cost_mean_done", "cost_per_done", "cost_wasted"}) EXPECT_TRUE(s.contains(key)) << key;
  // A stream served for a client that had gone is billed in full: an outage of 10 s, a queue, a 4 s header
  // timeout: two requests given up and served later for nobody (tests/unit/fleet_test.cpp counts them).
  const Captured gone = run_relsim("fleet --agents 1 --trigger outage:0,10 --queue 5 --header-timeout 4 --policy simple "
                                   "--r 3 --n 1 --backoff list:1 --json" + prices);
  ASSERT_EQ(gone.code, 0) << gone.err;
  const nlohmann::json g = nlohmann::json::parse(gone.out);
  EXPECT_EQ(g["wasted"], 2);
  EXPECT_NEAR(g["cost_wasted"].get<double>(), 2 * (20000.0 * 3 + 800.0 * 15) / 1e6, 1e-12);
  EXPECT_GT(s["cost_per_done"].get<double>(), s["cost_mean_done"].get<double>());
  EXPECT_EQ(s["scenario"]["billing"]["price_in"], 3);
  EXPECT_FALSE(nlohmann::json::parse(run_relsim(kLoaded + " --json").out).contains("cost_mean"));
  const Captured r = run_relsim(
      "fleet --live --agents 6 --tenants 6 --tasks-per-agent 4 --n 2 --p 0.3 --q 0.8 --kinds cut=1,malformed=1 "
      "--policy layered --s 1 --time-scale 0.016 --replicates 5 --duration 3600 --json" + prices);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& f : j["agreement"])
    if (f["figure"] == "cost_mean") {
      found = true;
      EXPECT_EQ(f["live"], f["replayed"]);
      EXPECT_GT(f["live"].get<double>(), 0.0);
    }
  EXPECT_TRUE(found) << j["agreement"].dump();
}

TEST(FleetCli, LiveBadInputIsOneLineAndExitTwo) {
  expect_input_error("fleet --live --start poisson:5", "coordinated start");
  expect_input_error("fleet --live --queue 5", "queue = 5");
  expect_input_error("fleet --live --header-timeout 5 --queue 0", "header-timeout");
  expect_input_error("fleet --live --trigger outage:10,5", "outage");
  expect_input_error("fleet --live --kinds http_529=1", "http_529");
  expect_input_error("fleet --live --agents 3000", "at most 2000");
  expect_input_error("fleet --live --time-scale 0", "time-scale = 0");
  expect_input_error("fleet --live --replicates 1", "at least 2");
  expect_input_error("fleet --time-scale 0.1", "--time-scale needs --live");
  expect_input_error("fleet --live --duration 1 --tasks-per-agent 10", "longer --duration");
  const auto dir = relsim::test::scratch("fleet_live_csv");
  const std::string csv = (dir / "series.csv").string();
  expect_input_error("fleet --live --csv " + csv, "--csv");
  EXPECT_FALSE(std::filesystem::exists(csv));
}

}  // namespace
