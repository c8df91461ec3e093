// run_command (cli.hpp), the workbench's way to run a command: in-process,
// it prints the very bytes the relsim executable prints, maps errors to exit
// codes with the one-line message, runs on several threads at once, reports
// progress through its hook and stops when the hook throws Cancelled.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "relsim/cli/cli.hpp"
#include "relsim/core/error.hpp"
#include "support/run.hpp"

namespace {

using relsim::run_command;
using relsim::test::split_args;
using relsim::ui::CommandHooks;
using relsim::ui::CommandResult;

const std::string kReference = "--p 0.3 --q 0.8 --r 2 --n 2";

// run_command's output and the executable's, for the same arguments.
void expect_same_bytes(const std::string& line) {
  const std::vector<std::string> args = split_args(line);
  const CommandResult in_process = run_command(args);
  const relsim::test::RunResult exe = relsim::test::run_relsim(args);
  ASSERT_EQ(exe.code, 0) << exe.err;
  EXPECT_EQ(in_process.code, 0) << in_process.err;
  EXPECT_EQ(in_process.err, "");
  EXPECT_EQ(in_process.out, exe.out) << line;
}

TEST(RunCommand, ExactJsonIsTheExecutablesBytes) { expect_same_bytes("exact " + kReference + " --json"); }

TEST(RunCommand, SimulateJsonIsTheExecutablesBytesWith310Of400) {
  const std::string line = "simulate " + kReference + " --seed 20261001 --tasks 400 --json";
  expect_same_bytes(line);
  const auto j = nlohmann::json::parse(run_command(split_args(line)).out);
  EXPECT_EQ(j["successes"], 310);
  EXPECT_EQ(j["tasks"], 400);
}

TEST(RunCommand, SweepCsvIsTheExecutablesBytes) {
  expect_same_bytes("sweep --p 0.1,0.3 --q 0.5:0.9:0.2 --r 2 --n 2 --tasks 2000");
}

TEST(RunCommand, OutOfRangePIsCodeTwoWithTheCommandLinesMessage) {
  const std::vector<std::string> args = {"exact", "--p=1.2", "--r=2", "--n=2", "--json"};
  const CommandResult r = run_command(args);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("1.2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[0, 1]"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), std::string::npos) << r.err;
  // The executable prints the same line after "relsim: error: ".
  const relsim::test::RunResult exe = relsim::test::run_relsim(args);
  EXPECT_EQ(exe.code, 2);
  EXPECT_EQ(exe.err, "relsim: error: " + r.err + "\n");
}

TEST(RunCommand, UnknownOptionIsCodeTwo) {
  const CommandResult r = run_command({"exact", "--p=0.3", "--r=2", "--n=2", "--bogus=1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), std::string::npos) << r.err;
}

TEST(RunCommand, NoCommandAndUnknownCommandAreCodeTwo) {
  EXPECT_EQ(run_command({}).code, 2);
  EXPECT_EQ(run_command({"frobnicate"}).code, 2);
}

TEST(RunCommand, HelpIsCodeZeroWithTheHelpInOut) {
  const CommandResult r = run_command({"exact", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, relsim::test::run_relsim(std::vector<std::string>{"exact", "--help"}).out);
  EXPECT_NE(r.out.find("Usage: relsim exact"), std::string::npos) << r.out;
}

TEST(RunCommand, ServersThatRunUntilASignalAreRefused) {
  for (const char* name : {"serve", "ui"}) {
    const CommandResult r = run_command({name, "--port=0"});
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_NE(r.err.find("in-process"), std::string::npos) << r.err;
  }
}

TEST(RunCommand, TwoThreadsAtOnceGiveTheBytesOfOne) {
  const std::vector<std::string> sim = split_args("simulate " + kReference + " --policy naive --tasks 200000 --json");
  const std::vector<std::string> exact = split_args("exact " + kReference + " --policy layered --json");
  const CommandResult sim_alone = run_command(sim), exact_alone = run_command(exact);
  ASSERT_EQ(sim_alone.code, 0) << sim_alone.err;
  ASSERT_EQ(exact_alone.code, 0) << exact_alone.err;
  for (int round = 0; round < 3; ++round) {
    CommandResult a, b, c;
    std::thread t1([&] { a = run_command(sim); });
    std::thread t2([&] { b = run_command(sim); });
    std::thread t3([&] { c = run_command(exact); });
    t1.join();
    t2.join();
    t3.join();
    EXPECT_EQ(a.out, sim_alone.out);
    EXPECT_EQ(b.out, sim_alone.out);
    EXPECT_EQ(c.out, exact_alone.out);
  }
}

// The reports a hook saw, and the run's output.
struct Watched {
  CommandResult result;
  std::vector<std::pair<std::int64_t, std::int64_t>> reports;
};

Watched watch(const std::string& line) {
  Watched w;
  CommandHooks hooks;
  hooks.progress = [&w](std::int64_t done, std::int64_t total) { w.reports.emplace_back(done, total); };
  w.result = run_command(split_args(line), hooks);
  return w;
}

void expect_increasing_to(const Watched& w, std::int64_t total, const std::string& line) {
  ASSERT_FALSE(w.reports.empty()) << line;
  for (std::size_t i = 0; i < w.reports.size(); ++i) {
    EXPECT_EQ(w.reports[i].second, total) << line;
    if (i > 0) {
      EXPECT_GT(w.reports[i].first, w.reports[i - 1].first) << line;
    }
  }
  EXPECT_GT(w.reports.front().first, 0) << line;
  EXPECT_EQ(w.reports.back().first, total) << line;
}

TEST(RunCommandProgress, SimulateReportsIncreasingTasksUpToTheTotal) {
  const std::string line = "simulate " + kReference + " --tasks 100000 --json";
  const Watched w = watch(line);
  ASSERT_EQ(w.result.code, 0) << w.result.err;
  expect_increasing_to(w, 100000, line);
}

// On one thread, thread 0 runs every task: a report every
// kProgressTasks = 128 tasks, in every engine, and the bytes of a run no
// one watched.
TEST(RunCommandProgress, EveryEngineReportsOftenAndPrintsTheSameBytes) {
  const std::vector<std::string> lines = {
      "simulate " + kReference + " --tasks 100000 --threads 1 --json",
      "simulate " + kReference + " --chain continuous --lanes 4 --tasks 100000 --threads 1 --json",
      "simulate " + kReference + " --policy layered --s 2 --tasks 100000 --threads 1 --json",
      "simulate " + kReference + " --policy naive --chain continuous --tasks 100000 --threads 1 --json",
      "simulate --t-good 8 --t-bad 2 --r 2 --n 2 --tasks 20000 --threads 1 --json",
      "simulate --t-good 8 --t-bad 2 --r 2 --n 2 --chain continuous --lanes 3 --tasks 20000 --threads 1 --json"};
  for (const std::string& line : lines) {
    const Watched w = watch(line);
    ASSERT_EQ(w.result.code, 0) << line << ": " << w.result.err;
    const std::int64_t total = nlohmann::json::parse(w.result.out)["tasks"].get<std::int64_t>();
    expect_increasing_to(w, total, line);
    EXPECT_GE(w.reports.size(), static_cast<std::size_t>(total / 128)) << line;
    EXPECT_EQ(w.result.out, run_command(split_args(line)).out) << line;
  }
}

TEST(RunCommandProgress, SweepReportsPoints) {
  const std::string line = "sweep --p 0.1,0.2,0.3 --q 0.5,0.8 --r 2 --n 2 --tasks 1000";
  const Watched w = watch(line);
  ASSERT_EQ(w.result.code, 0) << w.result.err;
  expect_increasing_to(w, 6, line);
}

TEST(RunCommandProgress, AHookThatThrowsCancelledEndsTheCommandWith130) {
  CommandHooks hooks;
  int calls = 0;
  hooks.progress = [&calls](std::int64_t, std::int64_t) {
    ++calls;
    throw relsim::Cancelled("the client went away");
  };
  for (const std::string& line : std::vector<std::string>{"simulate " + kReference + " --tasks 1000000 --json",
                                                          "simulate " + kReference + " --policy naive --tasks 100000 --json",
                                                          "simulate --t-good 8 --t-bad 2 --r 2 --n 2 --tasks 100000 --json",
                                                          "sweep --p 0.1,0.2,0.3 --r 2 --n 2 --tasks 1000"}) {
    calls = 0;
    const CommandResult r = run_command(split_args(line), hooks);
    EXPECT_EQ(r.code, relsim::ui::kCommandCancelled) << line;
    EXPECT_EQ(r.code, 130);
    EXPECT_EQ(r.err, "cancelled");
    EXPECT_EQ(r.out, "") << line;
    EXPECT_EQ(calls, 1) << line;
  }
}

}  // namespace
