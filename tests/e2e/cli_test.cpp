// End to end: the relsim executable run (support/run.hpp), its stdout and
// stderr captured. Bad input is exactly one line on stderr that
// starts "relsim: error:", nothing on stdout, exit code 2; a missed check is
// exit code 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kKnownValues = std::string(RELSIM_SOURCE_DIR) + "/data/known_values.csv";

// This file's scratch folder (support/files.hpp).
const std::string kCliScratch = "cli_test";
using relsim::test::scratch;
using relsim::test::write_temp;

using Captured = relsim::test::RunResult;
using relsim::test::run_relsim;

using relsim::test::expect_input_error;

nlohmann::json parse_json(const std::string& text) {
  nlohmann::json j;
  EXPECT_NO_THROW(j = nlohmann::json::parse(text)) << text;
  return j;
}

TEST(Cli, ExactJsonHasEveryKeyAndTheReferenceValue) {
  const Captured r = run_relsim("exact --p 0.3 --q 0.8 --r 2 --n 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = parse_json(r.out);
  for (const char* key : {"p", "q", "r", "n", "b", "g", "chain", "p0", "independent", "success", "log10_success",
                          "env_error", "mean_requests", "max_requests", "method", "requests"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["p"], 0.3);
  EXPECT_EQ(j["q"], 0.8);
  EXPECT_EQ(j["r"], 2);
  EXPECT_EQ(j["n"], 2);
  EXPECT_EQ(j["b"], 0);
  EXPECT_EQ(j["g"], 0);
  EXPECT_EQ(j["chain"], "fresh");
  EXPECT_EQ(j["method"], "matrix");
  EXPECT_NEAR(j["p0"].get<double>(), 3.0 / 35.0, 1e-15);
  EXPECT_NEAR(j["independent"].get<double>(), 0.946729, 1e-15);
  EXPECT_NEAR(j["success"].get<double>(), 0.763675428571428, 1e-14);
  EXPECT_NEAR(j["env_error"].get<double>(), 1 - 0.763675428571428, 1e-14);
  EXPECT_NEAR(j["log10_success"].get<double>(), std::log10(0.763675428571428), 1e-14);
  EXPECT_EQ(j["max_requests"], 6);
  double total = 0.0;
  ASSERT_TRUE(j["requests"].is_array());
  for (const auto& bin : j["requests"]) {
    EXPECT_TRUE(bin["outcome"] == "done" || bin["outcome"] == "env_error") << bin;
    total += bin["probability"].get<double>();
  }
  EXPECT_NEAR(total, 1.0, 1e-12);
}

TEST(Cli, ExactJsonPrintsSuccessWith17SignificantDigits) {
  const Captured r = run_relsim("exact --p 0.3 --q 0.8 --r 2 --n 2 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("\"success\": ?([-+0-9.eE]+)"))) << r.out;
  const std::string text = m[1];
  std::string digits;
  for (char ch : text.substr(0, text.find_first_of("eE")))
    if (std::isdigit(static_cast<unsigned char>(ch))) digits += ch;
  digits.erase(0, digits.find_first_not_of('0'));
  EXPECT_EQ(digits.size(), 17u) << text;
  EXPECT_NEAR(std::stod(text), 0.763675428571428, 1e-15);
}

TEST(Cli, LogOfZeroSuccessIsNull) {
  const Captured r = run_relsim("exact --p 1 --q 1 --r 2 --n 3 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = parse_json(r.out);
  EXPECT_EQ(j["success"], 0.0);
  EXPECT_TRUE(j["log10_success"].is_null());
}

TEST(Cli, MethodBothAgreesTo1e12) {
  for (const char* extra : {"", " --chain continuous", " --b 2 --g 1", " --b 1 --g 3 --chain continuous"}) {
    const Captured r = run_relsim(std::string("exact --p 0.3 --q 0.8 --r 3 --n 4 --method both --json") + extra);
    ASSERT_EQ(r.code, 0) << extra << r.err;
    const auto j = parse_json(r.out);
    EXPECT_EQ(j["method"], "both");
    ASSERT_TRUE(j.contains("max_abs_diff")) << r.out;
    EXPECT_LT(j["max_abs_diff"].get<double>(), 1e-12) << extra;
    EXPECT_NEAR(j["enumerate_success"].get<double>(), j["success"].get<double>(), 1e-12) << extra;
  }
}

TEST(Cli, ContinuousChainReferenceValue) {
  const Captured r = run_relsim("exact --p 0.3 --q 0.8 --r 2 --n 2 --chain continuous --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NEAR(parse_json(r.out)["success"].get<double>(), 0.8121175185419421, 1e-12);
}

TEST(Cli, TableOutputShowsTheReferenceValue) {
  const Captured r = run_relsim("exact --p 0.3 --q 0.8 --r 2 --n 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("0.763675428571"), std::string::npos) << r.out;
}

TEST(Cli, InvalidPIsOneLineAndExitCode2) { expect_input_error("exact --p 1.2 --r 2 --n 2"); }
TEST(Cli, QBelowItsBoundIsOneLineAndExitCode2) {
  expect_input_error("exact --p 0.8 --q 0.1 --r 2 --n 2");
  const Captured r = run_relsim("exact --p 0.8 --q 0.1 --r 2 --n 2");
  EXPECT_NE(r.err.find("0.75"), std::string::npos) << r.err;
}
TEST(Cli, NZeroIsOneLineAndExitCode2) { expect_input_error("exact --p 0.3 --r 2 --n 0"); }
TEST(Cli, NegativeRIsOneLineAndExitCode2) { expect_input_error("exact --p 0.3 --r -1 --n 2"); }
TEST(Cli, NonNumericPIsOneLineAndExitCode2) { expect_input_error("exact --p abc --r 2 --n 2"); }
TEST(Cli, NaNPIsOneLineAndExitCode2) { expect_input_error("exact --p nan --r 2 --n 2"); }
TEST(Cli, EnumerationAboveDefaultLimitIsOneLineAndExitCode2) {
  expect_input_error("exact --p 0.3 --q 0.8 --r 2 --n 14 --method enumerate");
  expect_input_error("exact --p 0.3 --q 0.8 --r 2 --n 14 --method both");
}
TEST(Cli, UnknownMethodIsOneLineAndExitCode2) { expect_input_error("exact --p 0.3 --r 2 --n 2 --method magic"); }
TEST(Cli, UnknownChainIsOneLineAndExitCode2) { expect_input_error("exact --p 0.3 --r 2 --n 2 --chain warm"); }
TEST(Cli, MissingPIsOneLineAndExitCode2) { expect_input_error("exact --r 2 --n 2"); }
TEST(Cli, NegativeSilentStepsAreOneLineAndExitCode2) { expect_input_error("exact --p 0.3 --r 2 --n 2 --b -1"); }
TEST(Cli, UnknownSubcommandIsOneLineAndExitCode2) { expect_input_error("frobnicate --p 0.3"); }

TEST(Cli, CheckPassesOnTheKnownValuesFile) {
  const Captured r = run_relsim({"check", kKnownValues});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("0 missed"), std::string::npos) << r.out;
}

TEST(Cli, CheckPassesOnTheKnownValuesFileByEnumerationWhereShort) {
  // Enumeration of every short row (the long ones are for the matrix).
  std::ifstream in(kKnownValues);
  std::string line, text;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == 'p') {
      text += line + "\n";
      continue;
    }
    std::vector<std::string> f;
    std::stringstream s(line);
    for (std::string x; std::getline(s, x, ',');) f.push_back(x);
    if (std::stoll(f[3]) * (std::stoll(f[2]) + 1) <= 20) text += line + "\n";
  }
  const Captured r =
      run_relsim({"check", "--method", "enumerate", write_temp(kCliScratch, "short.csv", text).string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST(Cli, CheckWithAWrongValueExits1AndNamesTheLine) {
  const fs::path file = write_temp(kCliScratch, "wrong.csv",
                                   "# a comment\n"
                                   "p,q,r,n,b,g,chain,expected,tolerance,source\n"
                                   "0.3,0.3,2,2,0,0,fresh,0.946729,1e-12,reference experiment (docs/model.md)\n"
                                   "0.3,0.8,2,2,0,0,fresh,0.7636,1e-12,deliberately wrong\n");
  const Captured r = run_relsim({"check", file.string()});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(file.string() + ":4"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(file.string() + ":3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 missed"), std::string::npos) << r.out;
}

TEST(Cli, CheckJsonReportsTheMissedLine) {
  const fs::path file = write_temp(kCliScratch, "wrong_json.csv",
                                   "p,q,r,n,b,g,chain,expected,tolerance\n"
                                   "0.3,0.8,2,2,0,0,fresh,0.5,1e-12\n");
  const Captured r = run_relsim({"check", "--json", file.string()});
  EXPECT_EQ(r.code, 1);
  const auto j = parse_json(r.out);
  EXPECT_EQ(j["misses"], 1);
  EXPECT_EQ(j["results"][0]["line"], 2);
  EXPECT_EQ(j["results"][0]["ok"], false);
}

const std::string kHeader = "p,q,r,n,b,g,chain,expected,tolerance,source\n";

TEST(Cli, CheckMalformedCsvIsOneLineAndExitCode2) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"missing_column.csv", "p,q,r,n,b,chain,expected,tolerance\n0.3,0.3,2,2,0,fresh,0.946729,1e-12\n"},
      {"bad_number.csv", kHeader + "0.3,0.3x,2,2,0,0,fresh,0.946729,1e-12,x\n"},
      {"bad_integer.csv", kHeader + "0.3,0.3,2.5,2,0,0,fresh,0.946729,1e-12,x\n"},
      {"too_few_fields.csv", kHeader + "0.3,0.3,2,2,0,0,fresh,0.946729,1e-12\n"},
      {"too_many_fields.csv", kHeader + "0.3,0.3,2,2,0,0,fresh,0.946729,1e-12,x,y\n"},
      {"bad_chain.csv", kHeader + "0.3,0.3,2,2,0,0,warm,0.946729,1e-12,x\n"},
      {"invalid_q.csv", kHeader + "0.8,0.1,2,2,0,0,fresh,0.5,1e-12,x\n"},
      {"empty.csv", ""},
      {"only_comments.csv", "# nothing here\n\n"},
      {"header_only.csv", kHeader},
  };
  for (const auto& [name, text] : cases) {
    const fs::path file = write_temp(kCliScratch, name, text);
    expect_input_error({"check", file.string()});
    const Captured r = run_relsim({"check", file.string()});
    EXPECT_NE(r.err.find(name), std::string::npos) << "message does not name the file: " << r.err;
  }
}

TEST(Cli, CheckMalformedRowNamesItsLine) {
  const fs::path file = write_temp(kCliScratch, "line3.csv",
                                   "# comment\n" + kHeader + "0.3,0.3,2,2,0,0,fresh,0.946729,1e-12,ok\n" +
                                       "0.3,abc,2,2,0,0,fresh,0.946729,1e-12,bad\n");
  const Captured r = run_relsim({"check", file.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("line3.csv:4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("abc"), std::string::npos) << r.err;
}

TEST(Cli, CheckNonexistentFileIsOneLineAndExitCode2) {
  expect_input_error({"check", (scratch(kCliScratch) / "does_not_exist.csv").string()});
}

}  // namespace
