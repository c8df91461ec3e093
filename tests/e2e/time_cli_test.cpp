// Time mode on the command line (docs/time.md): exact, simulate and sweep
// with --t-good and --t-bad. The values they are checked against come from
// elsewhere: the discrete engine (a two-state chain observed every D seconds
// is Gilbert's chain with q = p + (1 - p) exp(-(1/t_good + 1/t_bad) D)), the
// exact engine for the simulator and the sweep, and sums of the printed
// distributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"
#include "support/run_json.hpp"

namespace {

namespace fs = std::filesystem;
using relsim::test::RunResult;

using relsim::test::json_of;
using relsim::test::run_relsim;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TimeCli, ExactJsonHasTheTimeKeys) {
  const auto j = json_of("exact --t-good 3600 --t-bad 120 --r 2 --n 2 --backoff list:1,2,4 --json");
  for (const char* key : {"t_good", "t_bad", "r", "n", "chain", "p", "request_seconds", "fault_seconds",
                          "think_seconds", "backoff", "retry_after", "success", "mean_requests", "requests",
                          "mean_seconds", "seconds_quantiles", "seconds_complete", "seconds"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["backoff"], "list:1,2,4");
  EXPECT_DOUBLE_EQ(j["p"].get<double>(), 120.0 / 3720.0);
  ASSERT_TRUE(j["seconds_quantiles"].is_object());
  for (const char* q : {"p50", "p90", "p99"}) EXPECT_TRUE(j["seconds_quantiles"].contains(q)) << q;
  EXPECT_FALSE(j.contains("seconds_quantiles_note"));
}

TEST(TimeCli, JitteredWaitsHaveNoExactQuantilesAndSaySo) {
  const auto j = json_of("exact --t-good 3600 --t-bad 120 --r 2 --n 2 --json");  // sdk: jitter 0.25
  EXPECT_TRUE(j["seconds_quantiles"].is_null());
  ASSERT_TRUE(j.contains("seconds_quantiles_note"));
  EXPECT_NE(j["seconds_quantiles_note"].get<std::string>().find("relsim simulate"), std::string::npos);
  EXPECT_GT(j["mean_seconds"].get<double>(), 0.0);
}

// Requests D seconds apart with no waits see the chain every D seconds: the
// discrete engine's answer for (p, q), and wall time = requests x D.
TEST(TimeCli, ExactMatchesTheDiscreteChainObservedEveryStep) {
  const double t_good = 50.0, t_bad = 10.0, d = 4.0;
  const double p = t_bad / (t_good + t_bad);
  const double q = p + (1.0 - p) * std::exp(-(1.0 / t_good + 1.0 / t_bad) * d);
  for (const char* policy : {"--policy simple", "--policy layered --s 2 --kinds cut=1,http_529=1"}) {
    SCOPED_TRACE(policy);
    const auto timed = json_of(fmt::format("exact --t-good {} --t-bad {} --request-seconds {} --backoff none --r 2 "
                                           "--n 3 {} --json",
                                           t_good, t_bad, d, policy));
    const auto discrete = json_of(fmt::format("exact --p {:.17g} --q {:.17g} --r 2 --n 3 {} --json", p, q, policy));
    EXPECT_NEAR(timed["success"].get<double>(), discrete["success"].get<double>(), 1e-12);
    EXPECT_NEAR(timed["mean_requests"].get<double>(), discrete["mean_requests"].get<double>(), 1e-12);
    EXPECT_NEAR(timed["mean_seconds"].get<double>(), d * discrete["mean_requests"].get<double>(), 1e-9);
  }
}

TEST(TimeCli, CsvFilesHoldTheDistributionsThatSumToOne) {
  const fs::path dir = relsim::test::scratch("time_cli_test");
  const std::string requests = (dir / "requests.csv").string(), seconds = (dir / "seconds.csv").string();
  const RunResult r = run_relsim("exact --t-good 600 --t-bad 60 --r 2 --n 2 --backoff exp:1,30,0 --request-seconds 2 "
                                 "--csv " + requests + " --seconds-csv " + seconds);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto req = lines_of(relsim::test::slurp(requests));
  const auto sec = lines_of(relsim::test::slurp(seconds));
  ASSERT_GE(req.size(), 2u);
  ASSERT_GE(sec.size(), 2u);
  EXPECT_EQ(req[0], "requests,outcome,probability");
  EXPECT_EQ(sec[0], "seconds,outcome,probability");
  for (const auto* table : {&req, &sec}) {
    double total = 0.0;
    for (std::size_t i = 1; i < table->size(); ++i) total += std::stod((*table)[i].substr((*table)[i].rfind(',') + 1));
    EXPECT_NEAR(total, 1.0, 1e-12);
  }
  // The CSV on stdout is the file's text.
  const RunResult out = run_relsim("exact --t-good 600 --t-bad 60 --r 2 --n 2 --backoff exp:1,30,0 --request-seconds 2 "
                                   "--seconds-csv -");
  EXPECT_EQ(out.out, relsim::test::slurp(seconds));
}

TEST(TimeCli, AFailedCsvRunWritesNoFile) {
  const fs::path dir = relsim::test::scratch("time_cli_test");
  const fs::path requests = dir / "never.csv";
  // sdk waits are jittered: no exact seconds distribution, so neither file is written.
  const RunResult r = run_relsim("exact --t-good 600 --t-bad 60 --r 2 --n 2 --csv " + requests.string() +
                                 " --seconds-csv " + (dir / "never_seconds.csv").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(fs::exists(requests));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(TimeCli, SimulateCoversTheExactSuccessAndMean) {
  const auto j = json_of("simulate --t-good 60 --t-bad 30 --r 3 --n 3 --policy layered --s 2 --backoff list:1,2,4 "
                         "--request-seconds 0.5 --tasks 20000 --seed 3 --confidence 0.9999 --json");
  EXPECT_TRUE(j["covered"].get<bool>());
  EXPECT_TRUE(j["mean_seconds_covered"].get<bool>());
  const double mean = j["mean_seconds"].get<double>();
  EXPECT_LE(j["mean_seconds_ci"][0].get<double>(), mean);
  EXPECT_GE(j["mean_seconds_ci"][1].get<double>(), mean);
  ASSERT_TRUE(j["seconds_quantiles"].is_object());
  // The exact quantiles (fixed waits) lie in the simulated quantiles' intervals.
  const auto exact = json_of("exact --t-good 60 --t-bad 30 --r 3 --n 3 --policy layered --s 2 --backoff list:1,2,4 "
                             "--request-seconds 0.5 --json");
  for (const char* q : {"p50", "p90", "p99"}) {
    const double x = exact["seconds_quantiles"][q].get<double>();
    EXPECT_LE(j["seconds_quantiles_ci"][q][0].get<double>(), x) << q;
    EXPECT_GE(j["seconds_quantiles_ci"][q][1].get<double>(), x) << q;
  }
}

// A sweep line without its last ten fields (the request columns, always last).
std::string without_request_columns(const std::string& line) {
  std::size_t cut = line.size();
  for (int i = 0; i < 10; ++i) cut = line.rfind(',', cut - 1);
  return line.substr(0, cut);
}

// The rows of simple points keep today's bytes when the policy axes are added
// (the policy columns go before the request columns, which stay last).
TEST(TimeCli, SweepPolicyAxisKeepsTheSimpleRows) {
  const RunResult plain = run_relsim("sweep --p 0.2,0.3 --q 0.8 --r 1,2 --n 2 --tasks 500");
  const RunResult grown =
      run_relsim("sweep --p 0.2,0.3 --q 0.8 --r 1,2 --n 2 --tasks 500 --policy simple,layered --s 1,2");
  ASSERT_EQ(plain.code, 0);
  ASSERT_EQ(grown.code, 0);
  const auto before = lines_of(plain.out), after = lines_of(grown.out);
  EXPECT_EQ(without_request_columns(after[0]), without_request_columns(before[0]) + ",policy,s,B");
  ASSERT_EQ(after.size(), 1 + 4 * 3u);  // simple once, layered for s = 1 and 2
  std::size_t simple_rows = 0;
  for (std::size_t i = 1; i < after.size(); ++i) {
    const std::string head = without_request_columns(after[i]), suffix = ",simple,,";
    if (head.size() < suffix.size() || head.compare(head.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string row = head.substr(0, head.size() - suffix.size()) + after[i].substr(head.size());
    EXPECT_NE(std::find(before.begin(), before.end(), row), before.end()) << row;
    ++simple_rows;
  }
  EXPECT_EQ(simple_rows, 4u);
}

// A sweep over --t-bad and --backoff: each row's exact columns are what
// relsim exact prints for that point.
TEST(TimeCli, SweepRowsMatchExact) {
  const RunResult r = run_relsim("sweep --t-good 600 --t-bad 30,120 --r 2 --n 2 --backoff sdk,list:1,2,4");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rows = lines_of(r.out);
  ASSERT_EQ(rows.size(), 5u);
  const std::string header = rows[0];
  EXPECT_EQ(header.rfind("p,q,r,n,b,g,chain,p0,independent,exact,mean_requests,tasks,successes,rate,ci_low,ci_high,"
                         "covered,seed,policy,s,B,t_good,t_bad,request_seconds,think_seconds,backoff,retry_after,"
                         "mean_seconds,p50_seconds,p90_seconds,p99_seconds",
                         0),
            0u);
  const char* points[] = {"--t-bad 30 --backoff sdk", "--t-bad 30 --backoff list:1,2,4", "--t-bad 120 --backoff sdk",
                          "--t-bad 120 --backoff list:1,2,4"};
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(points[i]);
    const auto j = json_of(std::string("exact --t-good 600 --r 2 --n 2 --json ") + points[i]);
    EXPECT_NE(rows[i + 1].find(fmt::format(",{:.17g},{:.17g},", j["success"].get<double>(),
                                           j["mean_requests"].get<double>())),
              std::string::npos)
        << rows[i + 1];
    EXPECT_NE(rows[i + 1].find(fmt::format(",{:.17g}", j["mean_seconds"].get<double>())), std::string::npos);
  }
}

TEST(TimeCli, BadTimeInputIsOneLineAndExitTwo) {
  for (const char* args :
       {"exact --t-good 0 --t-bad 120 --r 2 --n 2", "exact --t-good -1 --t-bad 120 --r 2 --n 2",
        "exact --t-good 3600 --t-bad 120 --r 2 --n 2 --backoff list:1,-2",
        "exact --t-good 3600 --t-bad 120 --r 2 --n 2 --backoff exp:0.5,8,1.5",
        "exact --t-good 3600 --t-bad 120 --r 2 --n 2 --fault-seconds stall=abc",
        "exact --p 0.3 --t-good 3600 --t-bad 120 --r 2 --n 2", "exact --t-good 3600 --r 2 --n 2",
        "exact --p 0.3 --r 2 --n 2 --backoff sdk", "simulate --t-good 3600 --t-bad 120 --r 2 --n 2 --g 1",
        "sweep --t-good 3600 --t-bad 120 --r 2 --n 2 --b 1", "sweep --p 0.3 --r 2 --n 2 --think-seconds 1",
        "sweep --t-good 3600 --t-bad 120 --r 2 --n 2 --backoff sdk,bogus",
        "sweep --p 0.3 --r 2 --n 2 --policy simple,simple"}) {
    SCOPED_TRACE(args);
    relsim::test::expect_input_error_result(run_relsim(args));
  }
}

}  // namespace
