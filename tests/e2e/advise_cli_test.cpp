// relsim advise (docs/advise.md) against brute force: for logs drawn by the
// tests' own sampler (support/ctmc_log.hpp), the recommended maxRetries is
// the smallest s for which `relsim exact` in time mode with the SDK's backoff
// (layered, r = 0) reaches the target, found here by scanning exact one s at
// a time; the claimed success lies in its band, and so does exact's success
// at the sampler's true t_good and t_bad. Without timestamps the same holds
// in the discrete model, and the answer says it is in requests alone.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "support/ctmc_log.hpp"
#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run_json.hpp"

namespace {

using relsim::test::json_of;
using relsim::test::run_relsim;

// A CSV log (task, time or request, outcome); a bad request's kind cycles
// through `kinds`.
std::string write_advise_log(const std::string& name, const relsim::test::CtmcLog& log,
                      const std::vector<std::string>& kinds, bool with_time = true) {
  std::string text = with_time ? "task,time,outcome\n" : "task,request,outcome\n";
  std::size_t next = 0;
  int last = -1, index = 0;
  relsim::test::draw_ctmc_log(log, [&](int task, double seconds, bool bad) {
    index = task == last ? index + 1 : 0;
    last = task;
    const std::string outcome = bad ? kinds[next++ % kinds.size()] : "ok";
    text += with_time ? fmt::format("t{},{:.6f},{}\n", task, 1.7e9 + seconds, outcome)
                      : fmt::format("t{},{},{}\n", task, index, outcome);
  });
  return relsim::test::write_temp("advise", name, text).string();
}

// exact's success for the layered policy (r = 0 unless given) at `chain`.
double exact_success(const std::string& chain, int s, int n, const std::string& kinds, int r = 0) {
  const auto j = json_of(fmt::format("exact {} --policy layered --s {} --r {} --n {} --kinds {} --json", chain, s, r,
                                     n, kinds));
  return j.value("success", -1.0);
}

// The smallest s in [0, 100] whose success reaches the target, by exact.
int scan_exact(const std::string& chain, int n, const std::string& kinds, double target) {
  for (int s = 0; s <= 100; ++s)
    if (exact_success(chain, s, n, kinds) >= target) return s;
  return -1;
}

struct AdviseCase {
  relsim::test::CtmcLog log;
  std::vector<std::string> kinds;
  double target;
  int n;
};

TEST(AdviseCli, MaxRetriesIsTheSmallestThatExactFindsInTimeMode) {
  const AdviseCase cases[] = {
      {{300, 60, 300, 10, 5, 40, 11}, {"http_529"}, 0.99, 10},
      {{1800, 30, 300, 12, 5, 40, 12}, {"http_529", "http_500"}, 0.99, 20},
      {{600, 20, 300, 12, 2, 20, 13}, {"http_503", "reset"}, 0.995, 40},
  };
  int k = 0;
  for (const AdviseCase& c : cases) {
    SCOPED_TRACE(fmt::format("case {}", k));
    const std::string log = write_advise_log(fmt::format("timed{}.csv", k++), c.log, c.kinds);
    const auto a = json_of(fmt::format("advise {} --target {} --n {} --request-seconds 8 --json", log, c.target, c.n));
    ASSERT_TRUE(a.value("timed", false));
    const std::string kinds = a["kinds"].get<std::string>();
    const std::string chain = fmt::format("--t-good {:.17g} --t-bad {:.17g} --request-seconds 8 --backoff sdk",
                                          a["t_good"].get<double>(), a["t_bad"].get<double>());
    const int smallest = scan_exact(chain, c.n, kinds, c.target);
    ASSERT_GE(smallest, 0);
    EXPECT_EQ(a["max_retries"].get<int>(), smallest);
    EXPECT_EQ(a["stream_retries"].get<int>(), 0);
    EXPECT_TRUE(a["meets_target"].get<bool>());
    EXPECT_EQ(a["how"].get<std::string>(), smallest <= 10 ? "sdk" : "beyond_bound");
    const double success = a["success"].get<double>(), low = a["success_band"][0], high = a["success_band"][1];
    EXPECT_NEAR(success, exact_success(chain, smallest, c.n, kinds), 1e-12);
    EXPECT_LE(low, success);
    EXPECT_GE(high, success);
    // The truth's success at that setting lies in the band too.
    const double truth = exact_success(fmt::format("--t-good {} --t-bad {} --request-seconds 8 --backoff sdk",
                                                   c.log.t_good, c.log.t_bad),
                                       smallest, c.n, kinds);
    EXPECT_LE(low, truth);
    EXPECT_GE(high, truth);
    std::printf("advise case %d: maxRetries %d (%s), success %.6f band [%.6f, %.6f], at the truth %.6f\n", k - 1,
                smallest, a["how"].get<std::string>().c_str(), success, low, high, truth);
    // Seconds of done tasks and of all, and the keys the issue names.
    for (const char* key : {"p", "q", "p_ci", "q_ci", "model", "max_retries", "success", "success_band",
                            "meets_target", "mean_seconds_done", "p99_seconds_done", "requests_per_task", "snippets"})
      EXPECT_TRUE(a.contains(key)) << key;
    EXPECT_GT(a["mean_seconds_done"].get<double>(), 0.0);
    EXPECT_GE(a["p99_seconds_done"].get<double>(), a["mean_seconds_done"].get<double>());
    EXPECT_NE(a["snippets"]["typescript"].get<std::string>().find(fmt::format("maxRetries: {}", smallest)),
              std::string::npos);
    EXPECT_NE(a["snippets"]["python"].get<std::string>().find(fmt::format("max_retries={}", smallest)),
              std::string::npos);
  }
}

TEST(AdviseCli, WithoutTimestampsItAnswersInRequestsAndSaysSo) {
  const std::string log = write_advise_log("indexed.csv", {300, 60, 400, 10, 5, 40, 21}, {"http_529"}, false);
  const auto a = json_of("advise " + log + " --target 0.98 --n 5 --json");
  ASSERT_FALSE(a.value("timed", true));
  EXPECT_TRUE(a["mean_seconds_done"].is_null());
  const std::string chain = fmt::format("--p {:.17g} --q {:.17g}", a["p"].get<double>(), a["q"].get<double>());
  EXPECT_EQ(a["max_retries"].get<int>(), scan_exact(chain, 5, a["kinds"].get<std::string>(), 0.98));
  const auto text = run_relsim("advise " + log + " --target 0.98 --n 5");
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("no timestamps: answered in requests alone"), std::string::npos) << text.out;
}

TEST(AdviseCli, FaultsInsideTheStreamNeedTheAgentLoop) {
  const std::string log = write_advise_log("instream.csv", {300, 60, 300, 10, 5, 40, 31}, {"overloaded", "cut"});
  const auto a = json_of("advise " + log + " --target 0.95 --n 10 --request-seconds 8 --json");
  ASSERT_EQ(a["how"].get<std::string>(), "agent_loop");
  const int r = a["stream_retries"].get<int>();
  ASSERT_GT(r, 0);
  EXPECT_EQ(a["max_retries"].get<int>(), 2);
  const std::string chain = fmt::format("--t-good {:.17g} --t-bad {:.17g} --request-seconds 8 --backoff sdk",
                                        a["t_good"].get<double>(), a["t_bad"].get<double>());
  const std::string kinds = a["kinds"].get<std::string>();
  EXPECT_GE(exact_success(chain, 2, 10, kinds, r), 0.95);
  EXPECT_LT(exact_success(chain, 2, 10, kinds, r - 1), 0.95);
  EXPECT_NE(a["snippets"]["typescript"].get<std::string>().find("withResponse"), std::string::npos);
}

// With prices: each point's cost is exact's for the model line advise
// prints (which carries the prices), and where every fault is a 529 (refused
// before the model starts, never billed) a done task costs exactly its n
// good requests: n (I price_in + O price_out) / 1e6, whatever maxRetries.
// Retrying a broken stream in the agent loop bills the broken ones too.
TEST(AdviseCli, PricesGiveEachSettingsCost) {
  const std::string prices = "--input-tokens 20000 --output-tokens 800 --price-in 3 --price-out 15";
  const double request = (20000.0 * 3 + 800.0 * 15) / 1e6;
  const std::string log = write_advise_log("priced.csv", {300, 60, 300, 10, 5, 40, 11}, {"http_529"}, false);
  const auto a = json_of("advise " + log + " --target 0.98 --n 5 --json " + prices);
  ASSERT_TRUE(a.contains("cost_mean")) << a.dump();
  EXPECT_NEAR(a["cost_mean_done"].get<double>(), 5 * request, 1e-12);
  EXPECT_NEAR(a["cost_per_done"].get<double>(), a["cost_mean"].get<double>() / a["success"].get<double>(), 1e-12);
  const auto exact = json_of(fmt::format("exact --p {:.17g} --q {:.17g} --policy layered --s {} --r 0 --n 5 --kinds {} "
                                         "{} --json",
                                         a["p"].get<double>(), a["q"].get<double>(), a["max_retries"].get<int>(),
                                         a["kinds"].get<std::string>(), prices));
  EXPECT_NEAR(a["cost_mean"].get<double>(), exact["cost_mean"].get<double>(), 1e-12);
  // The model line advise prints (p and q to 6 digits) reproduces it to that precision.
  const auto printed = json_of("exact " + a["model"].get<std::string>() + " --json");
  EXPECT_NEAR(printed["cost_mean"].get<double>(), a["cost_mean"].get<double>(), 1e-6) << a["model"];
  EXPECT_EQ(a["billing"]["price_in"], 3);
  // Broken streams retried in the agent loop are billed: more per done task than the 529s' n requests.
  const std::string instream = write_advise_log("priced_instream.csv", {300, 60, 300, 10, 5, 40, 31}, {"cut"});
  const auto b = json_of("advise " + instream + " --target 0.95 --n 10 --request-seconds 8 --json " + prices);
  ASSERT_EQ(b["how"].get<std::string>(), "agent_loop");
  EXPECT_GT(b["cost_mean_done"].get<double>(), 10 * request);
  const auto text = run_relsim("advise " + instream + " --target 0.95 --n 10 --request-seconds 8 " + prices);
  EXPECT_NE(text.out.find("spent per done task"), std::string::npos) << text.out;
  // Without prices there is no cost, and --require names why.
  EXPECT_FALSE(json_of("advise " + log + " --target 0.98 --n 5 --json").contains("cost_mean"));
  const auto gated = run_relsim("advise " + log + " --target 0.98 --n 5 --require cost_mean<=1");
  EXPECT_NE(gated.err.find("no cost without prices"), std::string::npos) << gated.err;
}

TEST(AdviseCli, RequireGatesOnTheAdvice) {
  const std::string log = write_advise_log("require.csv", {300, 60, 300, 10, 5, 40, 11}, {"http_529"});
  const std::string run = "advise " + log + " --target 0.99 --n 10 --request-seconds 8";
  const auto plain = run_relsim(run);
  ASSERT_EQ(plain.code, 0) << plain.err;
  const auto held = run_relsim(run + " --require success>=0.99");
  EXPECT_EQ(held.code, 0) << held.err;
  EXPECT_EQ(held.out, plain.out);
  const auto missed = run_relsim(run + " --require max_retries<=5");
  EXPECT_EQ(missed.code, 1);
  EXPECT_NE(missed.err.find("relsim: threshold missed: max_retries<=5"), std::string::npos) << missed.err;
}

TEST(AdviseCli, BadInputIsOneLine) {
  const std::string log = write_advise_log("bad.csv", {300, 60, 20, 5, 5, 40, 1}, {"http_529"});
  relsim::test::expect_input_error("advise " + log + " --target 1.2 --n 10",
                                   "--target = 1.2 is out of range: it must be in (0, 1)");
  relsim::test::expect_input_error("advise " + log + " --target 0.9 --n 0",
                                   "--n = 0 is out of range: it must be in [1, 1000000]");
  relsim::test::expect_input_error("advise " + log + " --target 0.9 --n 3 --sdk java",
                                   "--sdk = 'java' is not valid: use typescript, python or both");
  relsim::test::expect_input_error("advise " + log + " --target 0.9 --n 3 --bound 101",
                                   "--bound = 101 is out of range: it must be in [0, 100]");
}

}  // namespace
