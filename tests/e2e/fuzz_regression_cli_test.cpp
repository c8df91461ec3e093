// A fuzzing finding (tests/unit/fuzz_regression_test.cpp has the rest) that
// needs the relsim executable: relsim oracle on a plan file.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

#include "support/run.hpp"

namespace relsim {
namespace {

// The oracle took n, r, s and B from a plan's header with get<T>(), which
// converts 2^40 to int silently (r = 0) and 1e300 to long long undefinedly.
TEST(FuzzRegression, OracleRefusesAPlanHeaderNumberOutOfRange) {
  const std::string dir = ::testing::TempDir();
  const auto run = [&](const std::string& name, const std::string& header) {
    const std::string plan = dir + "/relsim_fuzz_regression_" + name + ".plan";
    std::ofstream(plan, std::ios::binary) << header << "\n{\"task\": 0, \"requests\": [\"ok\"]}\n";
    const test::RunResult r = test::run_relsim({"oracle", plan});
    std::remove(plan.c_str());
    return std::pair{r.code, r.err};
  };
  const auto [ok, ok_err] = run("ok", R"({"relsim_plan": 1, "tasks": 1, "n": 1, "r": 1})");
  EXPECT_EQ(ok, 0) << ok_err;
  const auto [big_r, big_r_err] = run("big_r", R"({"relsim_plan": 1, "tasks": 1, "n": 1, "r": 1099511627776})");
  EXPECT_NE(big_r, 0);
  EXPECT_NE(big_r_err.find("\"r\" = 1099511627776 has the wrong type or is out of range"), std::string::npos) << big_r_err;
  const auto [real_n, real_n_err] = run("real_n", R"({"relsim_plan": 1, "tasks": 1, "n": 1e300, "r": 1})");
  EXPECT_NE(real_n, 0);
  EXPECT_NE(real_n_err.find("\"n\" = 1e+300 has the wrong type"), std::string::npos) << real_n_err;
}

}  // namespace
}  // namespace relsim
