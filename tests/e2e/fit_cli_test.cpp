// relsim fit end to end (docs/fit.md): a plan drawn by relsim at p = 0.3,
// q = 0.8 is fitted back inside its intervals; --json has exactly the
// documented keys; bad input is one line on stderr, exit 2, empty stdout.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/ctmc_log.hpp"
#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

using relsim::test::run_relsim;
using relsim::test::RunResult;

std::string plan_file() {
  static const std::string path = [] {
    const std::string out = (relsim::test::scratch("fit_cli_test") / "plan.jsonl").string();
    const RunResult r = run_relsim({"plan", "--p", "0.3", "--q", "0.8", "--r", "3", "--n", "4", "--policy", "layered",
                                    "--max-requests", "12", "--tasks", "2000", "--seed", "3", "--out", out});
    EXPECT_EQ(r.code, 0) << r.err;
    return out;
  }();
  return path;
}

TEST(FitCli, RecoversPAndQFromARelsimPlan) {
  const RunResult r = run_relsim({"fit", plan_file(), "--json", "--predict", "policy=layered,s=2,r=3,n=10"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"records", "tasks", "skipped", "p", "q", "p0", "p_ci", "q_ci",
                                            "independence_p_value", "order2_p_value", "runs_p_value", "verdict",
                                            "run_lengths", "kinds", "predictions", "seconds", "exact_command"}));
  EXPECT_TRUE(j["seconds"].is_null());  // a plan orders requests by index: no start times
  EXPECT_EQ(j["tasks"], 2000);
  EXPECT_LE(j["p_ci"][0].get<double>(), 0.3);
  EXPECT_GE(j["p_ci"][1].get<double>(), 0.3);
  EXPECT_LE(j["q_ci"][0].get<double>(), 0.8);
  EXPECT_GE(j["q_ci"][1].get<double>(), 0.8);
  EXPECT_LT(j["independence_p_value"].get<double>(), 1e-10);
  // The runs test's view, for the workbench: at each length the runs at risk (never more at a longer
  // length), those that ended, and the fitted law's (1 - q) of those at risk.
  const double q = j["q"].get<double>();
  std::int64_t previous = std::numeric_limits<std::int64_t>::max();
  for (const auto& row : j["run_lengths"]["bad"]) {
    const std::int64_t at_risk = row["at_risk"].get<std::int64_t>();
    EXPECT_LE(row["ended"].get<std::int64_t>(), at_risk);
    EXPECT_LE(at_risk, previous);
    EXPECT_NEAR(row["expected"].get<double>(), double(at_risk) * (1.0 - q), 1e-9);
    previous = at_risk;
  }
  EXPECT_EQ(j["run_lengths"]["bad"][0]["length"], 1);
  EXPECT_NE(j["verdict"].get<std::string>().find("faults are bursty"), std::string::npos) << j["verdict"];
  EXPECT_EQ(j["exact_command"].get<std::string>().rfind("relsim exact --p 0.", 0), 0u) << j["exact_command"];
  ASSERT_EQ(j["predictions"].size(), 1u);
  const auto& pr = j["predictions"][0];
  EXPECT_LE(pr["success_band"][0].get<double>(), pr["success"].get<double>());
  EXPECT_GE(pr["success_band"][1].get<double>(), pr["success"].get<double>());
}

TEST(FitCli, HumanOutputSaysWhatWasReadAndTheVerdict) {
  const RunResult r = run_relsim({"fit", plan_file(), "--predict", "policy=simple,r=2,n=3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("records, 2000 tasks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: faults are bursty: q = 0.8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("profile-likelihood region"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("relsim exact --p "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tc qdisc add dev IF root netem loss gemodel "), std::string::npos) << r.out;
}

// With start times, the fit in seconds: a log of the tests' own sampler
// (support/ctmc_log.hpp) at t_good = 300 s, t_bad = 60 s fitted back inside
// its intervals, printed with the ready options.
TEST(FitCli, FitsTheChainInSecondsFromStartTimes) {
  std::string csv = "task,time,outcome\n";
  relsim::test::draw_ctmc_log({300, 60, 400, 10, 5, 40, 9}, [&](int task, double seconds, bool bad) {
    csv += "t" + std::to_string(task) + "," + std::to_string(1.7e9 + seconds) + "," + (bad ? "http_529" : "ok") + "\n";
  });
  const std::string path = relsim::test::write_temp("fit_cli_test", "timed.csv", csv).string();
  const RunResult r = run_relsim({"fit", path, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto s = nlohmann::json::parse(r.out)["seconds"];
  ASSERT_TRUE(s["identified"].get<bool>()) << s.dump();
  EXPECT_EQ(s["gaps"].get<int>(), 400 * 9);
  EXPECT_LE(s["t_good_ci"][0].get<double>(), 300);
  EXPECT_GE(s["t_good_ci"][1].get<double>(), 300);
  EXPECT_LE(s["t_bad_ci"][0].get<double>(), 60);
  EXPECT_GE(s["t_bad_ci"][1].get<double>(), 60);
  const RunResult text = run_relsim({"fit", path});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("  t_bad  = "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  --t-good "), std::string::npos) << text.out;
}

TEST(FitCli, NoFaultsSaysQIsNotIdentified) {
  const auto path = relsim::test::write_temp("fit_cli_test", "clean.csv",
                                             "task,request,outcome\na,0,ok\na,1,ok\nb,0,ok\nb,1,ok\n");
  const RunResult r = run_relsim({"fit", path.string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(j["p"], 0.0);
  EXPECT_TRUE(j["q"].is_null());
  EXPECT_TRUE(j["q_ci"].is_null());
  EXPECT_GT(j["p_ci"][1].get<double>(), 0.0);
}

TEST(FitCli, BadInputIsOneLineAndExitTwo) {
  const auto out_of_order = relsim::test::write_temp("fit_cli_test", "order.csv",
                                                     "task,request,outcome\na,1,ok\na,0,ok\n");
  const std::vector<std::vector<std::string>> cases = {
      {"fit", "/nonexistent/log.csv"},
      {"fit", out_of_order.string()},
      {"fit", plan_file(), "--predict", "policy=layered,r=3"},
      {"fit", plan_file(), "--predict", "policy=layered,r=3,n=10,x=2"},
      {"fit", plan_file(), "--hidden", "0"},
      {"fit", plan_file(), "--format", "xml"},
  };
  for (const auto& args : cases) {
    relsim::test::expect_input_error(args);
  }
}

// Per-call records (the SDK retrying up to 2 times inside each) drawn from p = 0.3, q = 0.8.
TEST(FitCli, SdkRetriesFitsPerCallOutcomesByTheirExactLikelihood) {
  std::mt19937_64 rng(14);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::string csv = "task,request,outcome\n";
  for (int t = 0; t < 1000; ++t) {
    int previous = -1;
    for (int c = 0; c < 10; ++c) {
      int bad_run = 0;
      for (;;) {
        const double bad = previous < 0 ? 0.3 : previous == 1 ? 0.8 : 0.3 * 0.2 / 0.7;
        previous = u(rng) < bad ? 1 : 0;
        if (previous == 0 || ++bad_run == 3) break;
      }
      csv += std::to_string(t) + "," + std::to_string(c) + (previous ? ",cut\n" : ",ok\n");
    }
  }
  const auto path = relsim::test::write_temp("fit_cli_test", "calls.csv", csv).string();
  const RunResult r = run_relsim({"fit", path, "--sdk-retries", "2", "--json", "--predict", "policy=simple,r=2,n=3"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(j["sdk_retries"], 2);
  EXPECT_EQ(j["records"], 10000);
  EXPECT_LE(j["p_ci"][0].get<double>(), 0.3);
  EXPECT_GE(j["p_ci"][1].get<double>(), 0.3);
  EXPECT_LE(j["q_ci"][0].get<double>(), 0.8);
  EXPECT_GE(j["q_ci"][1].get<double>(), 0.8);
  EXPECT_TRUE(j["order2_p_value"].is_null());
  EXPECT_TRUE(j["runs_p_value"].is_null());
  EXPECT_LT(j["independence_p_value"].get<double>(), 1e-6);
  ASSERT_EQ(j["predictions"].size(), 1u);
  const RunResult text = run_relsim({"fit", path, "--sdk-retries", "2"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("fitted by the exact likelihood of per-call outcomes with 2 hidden SDK retries per call "
                          "(transfer-matrix forward pass)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("does not apply to per-call outcomes"), std::string::npos) << text.out;
  const RunResult plain = run_relsim({"fit", path, "--json"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("sdk_retries"));
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("if_sdk_retries"));  // a CSV row is a request
  for (const char* bad : {"101", "-1", "x"}) {
    const RunResult e = run_relsim({"fit", path, "--sdk-retries", bad});
    EXPECT_EQ(e.code, 2) << bad << ": " << e.err;
    EXPECT_TRUE(e.out.empty()) << e.out;
  }
}

// OTLP chat spans without HTTP children: per-call outcomes only, so the output suggests --sdk-retries,
// and the verdict line shows the estimate under the SDK's default beside the per-request one.
TEST(FitCli, PerCallOtlpSuggestsSdkRetries) {
  const std::string chat = R"({"key":"gen_ai.operation.name","value":{"stringValue":"chat"}})";
  std::string spans;
  for (int i = 0; i < 4; ++i)
    spans += std::string(i ? "," : "") + R"({"traceId":"t1","spanId":"s)" + std::to_string(i) +
             R"(","parentSpanId":"","name":"x","kind":3,"startTimeUnixNano":")" + std::to_string(100 + i) +
             R"(","endTimeUnixNano":"1","status":)" + (i == 1 ? R"({"code":2})" : "{}") + R"(,"attributes":[)" + chat +
             "]}";
  const auto path = relsim::test::write_temp(
      "fit_cli_test", "chat.jsonl",
      R"({"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"s"},"spans":[)" + spans +
          "]}]}]}\n");
  const RunResult r = run_relsim({"fit", path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("give --sdk-retries S"), std::string::npos) << r.out;
  const auto verdict = r.out.find("\nverdict: ");
  ASSERT_NE(verdict, std::string::npos) << r.out;
  const std::string line = r.out.substr(verdict + 1, r.out.find('\n', verdict + 1) - verdict - 1);
  EXPECT_NE(line.find("the SDK's retries hidden inside it, and nothing here shows them: under --sdk-retries 2 (the "
                      "SDK's default) p = "),
            std::string::npos)
      << line;
  // The same numbers as the flag gives.
  const auto shown = nlohmann::json::parse(run_relsim({"fit", path.string(), "--json"}).out)["if_sdk_retries"];
  const auto flagged = nlohmann::json::parse(run_relsim({"fit", path.string(), "--sdk-retries", "2", "--json"}).out);
  ASSERT_TRUE(shown.is_object());
  EXPECT_EQ(shown["sdk_retries"], 2);
  EXPECT_EQ(shown["p"], flagged["p"]);
  EXPECT_EQ(shown["p_ci"], flagged["p_ci"]);
  EXPECT_FALSE(flagged.contains("if_sdk_retries"));
  const RunResult with = run_relsim({"fit", path.string(), "--sdk-retries", "3"});
  ASSERT_EQ(with.code, 0) << with.err;
  EXPECT_EQ(with.out.find("give --sdk-retries S"), std::string::npos) << with.out;
}

}  // namespace
