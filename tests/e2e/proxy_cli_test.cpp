// relsim proxy's bad input (docs/proxy.md, Options): each refused in one line
// naming the value and what is valid, exit 2, before anything listens.
#include <gtest/gtest.h>

#include <string>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

std::string proxy_plan() { return relsim::test::source_dir() + "/data/audit/plan.jsonl"; }

TEST(ProxyCli, BadOptionsAreRefusedInOneLine) {
  using relsim::test::expect_input_error;
  expect_input_error({"proxy", "--upstream", "ftp://x", "--port", "0", "--plan", proxy_plan()}, "does not start with http:// or https://");
  expect_input_error({"proxy", "--upstream", "https://localhost:1", "--port", "0", "--plan", proxy_plan(),
                      "--upstream-ca", relsim::test::source_dir() + "/README.md"},
                     "does not load");
  expect_input_error({"proxy", "--upstream", "http://localhost:1", "--port", "0", "--plan", proxy_plan(),
                      "--upstream-ca", relsim::test::source_dir() + "/README.md"},
                     "applies to an https:// upstream only");
  expect_input_error({"proxy", "--upstream", "http://h:70000", "--port", "0", "--plan", proxy_plan()},
                     "port outside [1, 65535]");
  expect_input_error({"proxy", "--upstream", "http://h/p?x=1", "--port", "0", "--plan", proxy_plan()}, "query");
  expect_input_error({"proxy", "--upstream", "http://h", "--port", "0", "--plan", proxy_plan(), "--task-header", "x task"},
                     "is not a header name");
  expect_input_error({"proxy", "--upstream", "http://h", "--port", "0", "--plan", proxy_plan(), "--upstream-timeout", "0"},
                     "[0.001, 3600]");
  expect_input_error({"proxy", "--upstream", "http://h", "--port", "0", "--plan", "/nonexistent/plan.jsonl"});
}

}  // namespace
