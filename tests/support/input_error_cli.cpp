#include "support/input_error_cli.hpp"

#include <algorithm>

#include <gtest/gtest.h>

namespace relsim::test {

void expect_input_error_result(const RunResult& r, const std::string& part) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("relsim: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << "wanted '" << part << "' in: " << r.err;
}

void expect_input_error(const std::vector<std::string>& args, const std::string& part) {
  std::string line = "relsim";
  for (const std::string& a : args) line += " " + a;
  SCOPED_TRACE(line);
  expect_input_error_result(run_relsim(args), part);
}

void expect_input_error(const std::string& args, const std::string& part) {
  expect_input_error(split_args(args), part);
}

}  // namespace relsim::test
