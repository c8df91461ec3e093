#include "support/input_error_cli.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "relsim/cli/cli.hpp"
#include "support/sanitized.hpp"

namespace relsim::test {

void expect_input_error_result(const RunResult& r, const std::string& part) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("relsim: error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << "wanted '" << part << "' in: " << r.err;
}

namespace {

// Under sanitizers a relsim process costs about 0.15 s of CPU before main
// (ASan's and UBSan's start-up; a Release one 0.02 s), and the refusals are
// most of the e2e label's processes: there the case runs in-process
// (run_command: the very App, parsing and checks of the command line), and
// its message is checked as the command line prints it, "relsim: error: "
// and one line. The Release run checks the process's own stdout, stderr and
// exit code. The commands that serve until a signal (serve, ui, proxy,
// tools serve, bughunt serve) keep their process: they take the signals
// over (cli/stop_signals.hpp), which a test process must not have done to
// it, and run_command refuses two of them.
bool serves(const std::vector<std::string>& args) {
  const std::string& command = args.front();
  return command == "serve" || command == "ui" || command == "proxy" || command == "tools" || command == "bughunt";
}

RunResult refused(const std::vector<std::string>& args) {
  if (!kSanitized || args.empty() || serves(args)) return run_relsim(args);
  const ui::CommandResult r = run_command(args);
  RunResult out;
  out.code = r.code;
  out.out = r.out;
  if (r.code != 0) out.err = "relsim: error: " + r.err + "\n";
  return out;
}

}  // namespace

void expect_input_error(const std::vector<std::string>& args, const std::string& part) {
  std::string line = "relsim";
  for (const std::string& a : args) line += " " + a;
  SCOPED_TRACE(line);
  expect_input_error_result(refused(args), part);
}

void expect_input_error(const std::string& args, const std::string& part) {
  expect_input_error(split_args(args), part);
}

}  // namespace relsim::test
