#pragma once
// For end-to-end tests of relsim commands that print one JSON document:
// the run and its stdout parsed, in one call. Header-only.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run.hpp"

namespace relsim::test {

// relsim with these space-separated arguments, its stdout parsed. A run that
// does not exit 0, or prints something else than JSON, fails the test (the
// message names the arguments and shows stderr or stdout); the JSON is then null.
inline nlohmann::json json_of(const std::string& args) {
  const RunResult r = run_relsim(args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  nlohmann::json j;
  EXPECT_NO_THROW(j = nlohmann::json::parse(r.out)) << args << "\n" << r.out;
  return j;
}

}  // namespace relsim::test
