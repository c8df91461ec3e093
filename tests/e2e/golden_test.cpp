// Golden outputs (data/golden/cases.txt): exact, simulate, sweep, plan,
// oracle, check and a few input errors for the reference experiment and a
// policy mix, compared byte for byte with what relsim printed when they were
// pinned. Any change of output shows here; regenerate only on purpose, with
// RELSIM_UPDATE_GOLDEN=1 (scripts/update_golden.sh), and say why in the commit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using relsim::test::run_relsim;

struct Case {
  std::string name;
  int code = 0;
  std::string args;
};

// Names a case in gtest's messages (instead of a dump of its bytes).
void PrintTo(const Case& c, std::ostream* os) { *os << c.name << ": relsim " << c.args; }

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

fs::path golden_dir() { return fs::path(relsim::test::source_dir()) / "data/golden"; }

std::string replace_all(const std::string& s, const std::string& from, const std::string& to) {
  std::string out;
  std::size_t start = 0;
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, start)) {
    out.append(s, start, at - start).append(to);
    start = at + from.size();
  }
  return out.append(s, start, std::string::npos);
}

std::vector<Case> load_cases() {
  std::vector<Case> cases;
  std::ifstream in(golden_dir() / "cases.txt");
  for (std::string line; std::getline(in, line);) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    const auto bar1 = line.find('|');
    const auto bar2 = line.find('|', bar1 + 1);
    if (bar1 == std::string::npos || bar2 == std::string::npos) continue;
    Case c{trim(line.substr(0, bar1)), std::stoi(trim(line.substr(bar1 + 1, bar2 - bar1 - 1))),
           trim(line.substr(bar2 + 1))};
    // Relative to the repository, where relsim runs: outputs that name their
    // input file then read the same in any clone.
    c.args = replace_all(c.args, "{golden}", "data/golden");
    c.args = replace_all(c.args, "{data}", "data");
    cases.push_back(c);
  }
  return cases;
}

using relsim::test::slurp;

// The one value that may differ between machines: which Monte Carlo kernel
// ran (simulate --json's "kernel": scalar, avx2 or avx512, by CPU). Every
// kernel gives the same numbers, so only its name is masked.
std::string kernel_masked(const std::string& out) {
  static const std::regex kernel(R"re("kernel": "(scalar|avx2|avx512)")re");
  return std::regex_replace(out, kernel, "\"kernel\": \"(this CPU's)\"");
}

class Golden : public testing::TestWithParam<Case> {};

TEST_P(Golden, OutputIsByteIdentical) {
  const Case& c = GetParam();
  SCOPED_TRACE("relsim " + c.args);
  relsim::test::RunOptions in_repo;
  in_repo.cwd = relsim::test::source_dir();
  const auto run = run_relsim(c.args, in_repo);
  const fs::path out = golden_dir() / (c.name + ".out");
  const fs::path err = golden_dir() / (c.name + ".err");
  if (const char* update = std::getenv("RELSIM_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    ASSERT_EQ(run.code, c.code) << run.err;
    std::ofstream(out, std::ios::binary) << run.out;
    if (c.code != 0) std::ofstream(err, std::ios::binary) << run.err;
    GTEST_SKIP() << "golden output rewritten: " << out;
  }
  ASSERT_TRUE(fs::exists(out)) << "missing " << out << " (run scripts/update_golden.sh)";
  EXPECT_EQ(run.code, c.code) << run.err;
  EXPECT_EQ(kernel_masked(run.out), kernel_masked(slurp(out)));
  if (c.code != 0) {
    EXPECT_EQ(run.err, slurp(err));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, testing::ValuesIn(load_cases()),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(GoldenCases, AreListedAndEachHasItsOutput) {
  const auto cases = load_cases();
  ASSERT_GE(cases.size(), 30u);
  for (const auto& c : cases) EXPECT_TRUE(fs::exists(golden_dir() / (c.name + ".out"))) << c.name;
}

}  // namespace
