// relsim proxy's bad input (docs/proxy.md, Options): each refused in one line
// naming the value and what is valid, exit 2, before anything listens.
#include <gtest/gtest.h>

#include <string>
#include <vector>

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
  // A plan with silent steps: the proxy cannot tell a retry from the next call.
  const auto silent = relsim::test::write_temp(
      "proxy_cli_plan", "silent.jsonl",
      R"({"relsim_plan": 1, "tasks": 1, "source": "generated", "b": 2, "g": 0})" "\n"
      R"({"task": 0, "requests": ["ok"]})" "\n");
  expect_input_error({"proxy", "--upstream", "http://h", "--port", "0", "--plan", silent.string()},
                     "the plan has b = 2");
}

TEST(ProxyCli, WhereTheFaultsComeFromIsOneSourceCheckedInOneLine) {
  using relsim::test::expect_input_error;
  const std::vector<std::string> base = {"proxy", "--upstream", "http://h", "--port", "0"};
  const auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  expect_input_error(base, "where the faults come from is missing");
  expect_input_error(with({"--p", "0.3", "--plan", proxy_plan()}), "two sources of faults");
  expect_input_error(with({"--t-good", "10", "--t-bad", "2", "--p", "0.3"}), "two sources of faults");
  expect_input_error(with({"--q", "0.8"}), "--q applies in chain mode only");
  expect_input_error(with({"--p", "0.3", "--q", "0.8", "--burst-mean", "5"}), "give --q or --burst-mean");
  expect_input_error(with({"--t-good", "10"}), "--t-good needs --t-bad");
  expect_input_error(with({"--plan", proxy_plan(), "--kinds", "cut=1"}), "--kinds does not apply with --plan");
  expect_input_error(with({"--plan", proxy_plan(), "--seed", "3"}), "--seed does not apply with --plan");
  expect_input_error(with({"--p", "1.2"}), "p = 1.2 is out of range");
  expect_input_error(with({"--p", "0.9", "--q", "0.1"}), "q = 0.1 is out of range for p = 0.9");
  expect_input_error(with({"--p", "0.3", "--burst-mean", "0.5"}), "burst");
  expect_input_error(with({"--p", "0.3", "--kinds", "cut=x"}), "weight of cut");
  expect_input_error(with({"--t-good", "10", "--t-bad", "0"}), "t_bad = 0 is out of range");
}

TEST(ProxyCli, AuditWithoutAPlanNeedsAChainModeLogAndItsCalls) {
  using relsim::test::expect_input_error;
  const auto plain = relsim::test::write_temp(
      "proxy_cli_audit", "plain.jsonl",
      R"({"relsim_log": 1, "port": 1, "plan_tasks": null, "retry_after": "0", "retry_after_ms": null})" "\n");
  expect_input_error({"audit", "--log", plain.string(), "--n", "2", "--infer"}, "give --plan");
  const auto chain = relsim::test::write_temp(
      "proxy_cli_audit", "chain.jsonl",
      R"({"relsim_log": 1, "port": 1, "plan_tasks": null, "retry_after": "0", "retry_after_ms": null, )"
      R"("chain": {"p": 0.3, "q": 0.8, "seed": 1, "kinds": "cut=1"}})" "\n");
  expect_input_error({"audit", "--log", chain.string(), "--infer"}, "give --n");
  const auto broken = relsim::test::write_temp(
      "proxy_cli_audit", "broken.jsonl",
      R"({"relsim_log": 1, "port": 1, "plan_tasks": null, "retry_after": "0", "retry_after_ms": null, )"
      R"("chain": {"p": 1.5, "q": 0.8, "seed": 1, "kinds": "cut=1"}})" "\n");
  expect_input_error({"audit", "--log", broken.string(), "--n", "2", "--infer"}, "p = 1.5 is out of range");
}

}  // namespace
