// Option rules declared on the options (include/relsim/options/option_rules.hpp): which
// options go together, which need time mode and which it refuses. Each is
// refused while CLI11 parses, with the project's whole line, before any
// work; and the same options in the mode they belong to are taken (the
// positive controls: a rule that refused everything would fail them).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using relsim::test::expect_input_error;
using relsim::test::run_relsim;

const std::string kTime = "--t-good 10 --t-bad 1 --r 1 --n 2";
const std::string kDiscrete = "--p 0.1 --r 1 --n 2";

struct Refused {
  std::string args, line;
};

TEST(OptionRules, EachDeclaredRuleRefusesWithItsWholeLine) {
  const Refused cases[] = {
      {"live " + kTime + " --throttle 5",
       "--throttle does not apply to relsim live in time mode: the check compares the success rate with the exact "
       "value, which has no throttle"},
      {"live --hidden-chain fitted.json --step-seconds 1 --r 1 --n 2",
       "--hidden-chain does not apply to relsim live in time mode: the mock's outage mode has two states: give "
       "--t-good and --t-bad"},
      // Without --step-seconds too: the command's refusal comes before the
      // rules of the time options.
      {"live --hidden-chain fitted.json --r 1 --n 2",
       "--hidden-chain does not apply to relsim live in time mode: the mock's outage mode has two states: give "
       "--t-good and --t-bad"},
      {"live " + kTime + " --chain continuous",
       "--chain continuous does not apply to relsim live in time mode: tasks start --task-spacing apart, each on "
       "the stationary state (the fresh scope)"},
      {"live " + kDiscrete + " --task-spacing 3",
       "--task-spacing applies in time mode only: give the mean sojourns --t-good and --t-bad (seconds) too"},
      {"plan " + kTime + " --fault cut",
       "plan: --fault and --times script a plan; the time options (--t-good ...) generate one: give one or the "
       "other"},
      {"plan " + kTime + " --max-requests 5",
       "plan: --max-requests (a plan for auditing) is for the discrete model; drop it or the time options"},
      {"exact " + kTime + " --method enumerate",
       "method = 'enumerate': time mode (--t-good, --t-bad) uses --method matrix"},
      {"exact " + kDiscrete + " --solve s --target 0.9 --method both", "method = 'both': --solve uses --method matrix"},
      {"exact --p 0.1 --n 2 --solve s --target 0.9", "--r is required (only --solve r and --triage go without it)"},
      {"exact " + kDiscrete + " --solve r --target 0.9", "--solve r searches r: leave out --r"},
      {"exact --p 0.1 --triage naive --reloads 2", "--reloads: the naive tester never reloads; give --triage careful"},
      {"exact --triage careful --t-good 10 --t-bad 1", "--triage counts loads as chain steps: leave out the time options"},
      {"exact " + kDiscrete + " --seconds-csv never.csv",
       "--seconds-csv applies in time mode only: give --t-good and --t-bad"},
      {"exact " + kDiscrete + " --csv - --json",
       "--json and a CSV on stdout (-) both want stdout: give the CSV a file"},
      {"exact " + kTime + " --csv - --seconds-csv -",
       "--csv - and --seconds-csv - both want stdout: give one of them a file"},
      {"exact " + kDiscrete + " --tool-faults exec=0.1 --csv never.csv",
       "tool-faults = 'exec=0.1': the requests distribution is not computed with tool calls; leave out --csv"},
      {"exact " + kDiscrete + " --tool-faults exec=0.1 --method both",
       "method = 'both': tool calls (--tool-faults) run on the matrix engine only; use --method matrix"},
      {"exact " + kTime + " --tool-faults exec=0.1",
       "tool-faults = 'exec=0.1': time mode (--t-good, --t-bad) does not support tool calls yet; leave out "
       "--tool-faults or the time options"},
      {"simulate " + kDiscrete + " --harness naive",
       "harness = 'naive' needs --tool-faults: the harness runs the tool calls, and there are none without it"},
      {"tune --t-good 10 --t-bad 1 --n 2 --target 0.9 --backoff sdk",
       "--backoff does not apply to tune, which searches the backoff: use --bases, --caps, --jitters and --lists"},
      {"serve --port 0 --time-scale 2",
       "--time-scale applies in outage or provider mode only: give --outage, --quota or --capacity"},
      {"fit --sdk-retries 2 --hidden 2 never.log",
       "--hidden fits request sequences and --sdk-retries per-call outcomes: give one of them"},
      {"oracle never.jsonl --fault cut", "oracle: give a plan file or --fault KIND --times once|always, not both"},
      {"sweep " + kDiscrete + " --think-seconds 1",
       "--think-seconds applies in time mode only: give the mean sojourns --t-good and --t-bad (seconds) too"},
      {"sweep " + kTime + " --q 0.5",
       "--q does not apply in time mode (--t-good, --t-bad): bursts come from the mean sojourns --t-good and "
       "--t-bad"},
      {"exact " + kTime + " --step-seconds 1", "--step-seconds applies to --hidden-chain only"},
      {"exact " + kDiscrete + " --step-seconds 1",
       "--step-seconds applies in time mode only: give the mean sojourns --t-good and --t-bad (seconds) too"},
      {"bughunt run --p 0.1 --tester naive --reloads 2",
       "--reloads: the naive tester never reloads; give --tester careful"},
      // --p outside time mode: not REQUIRED in --help (time mode goes without), checked after parsing.
      {"exact --r 1 --n 2", "--p is required (or, for time mode, --t-good and --t-bad)"},
      {"simulate --r 1 --n 2", "--p is required (or, for time mode, --t-good and --t-bad)"},
      {"sweep --r 1 --n 2", "--p is required (or, for time mode, --t-good and --t-bad)"},
  };
  for (const Refused& c : cases) {
    SCOPED_TRACE(c.args);
    const auto r = run_relsim(c.args);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "relsim: error: " + c.line + "\n");
  }
}

TEST(OptionRules, TheSameOptionsInTheirOwnModeAreTaken) {
  const std::string seconds_csv = (relsim::test::scratch("option_rules") / "seconds.csv").string();
  const std::string taken[] = {
      "plan " + kTime + " --tasks 2",
      "plan " + kDiscrete + " --fault cut --times once --tasks 2",
      "plan " + kDiscrete + " --max-requests 5 --tasks 2",
      "exact " + kTime + " --backoff list:1,2 --seconds-csv " + seconds_csv,
      "exact " + kDiscrete + " --method both",
      "exact " + kDiscrete + " --tool-faults exec=0.1 --harness naive",
      "exact --p 0.1 --triage careful --reloads 2",
      "exact --p 0.1 --n 2 --solve r --target 0.5",
      "exact " + kDiscrete + " --csv - ",
      "sweep " + kTime + " --think-seconds 1",
  };
  for (const std::string& args : taken) {
    SCOPED_TRACE(args);
    const auto r = run_relsim(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
  }
  EXPECT_TRUE(fs::exists(seconds_csv));
}

// --help says what runs in each mode (issue 33: exact's --help called --p
// REQUIRED though time mode runs without it; live's listed --request-seconds
// and then refused it).
TEST(OptionRules, HelpIsTrueToEachMode) {
  for (const char* command : {"exact", "simulate", "sweep"}) {
    const auto help = run_relsim(std::string(command) + " --help");
    ASSERT_EQ(help.code, 0) << help.err;
    const auto line = help.out.substr(help.out.find("  --p "), help.out.find('\n', help.out.find("  --p ")) -
                                                                  help.out.find("  --p "));
    EXPECT_EQ(line.find("REQUIRED"), std::string::npos) << command << ": " << line;
    EXPECT_NE(line.find("required outside time mode"), std::string::npos) << command << ": " << line;
  }
  const auto live = run_relsim("live --help");
  for (const char* refused : {"--request-seconds", "--fault-seconds", "--hidden-chain"}) {
    const auto at = live.out.find(std::string("  ") + refused + " ");
    ASSERT_NE(at, std::string::npos) << refused;
    EXPECT_NE(live.out.substr(at, live.out.find('\n', at) - at).find("refused here"), std::string::npos) << refused;
  }
  // The positive control: time mode still runs without --p.
  EXPECT_EQ(run_relsim("exact " + kTime).code, 0);
}

TEST(OptionRules, ARefusedLineWritesNoFile) {
  const std::string csv = (relsim::test::scratch("option_rules") / "requests.csv").string();
  expect_input_error("exact " + kDiscrete + " --tool-faults exec=0.1 --csv " + csv, "leave out --csv");
  expect_input_error("exact " + kDiscrete + " --csv " + csv + " --seconds-csv " + csv, "--seconds-csv applies");
  EXPECT_FALSE(fs::exists(csv));
}

}  // namespace
