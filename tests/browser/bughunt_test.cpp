// The BugHunt shop in a real browser (docs/bughunt.md): relsim bughunt serve,
// and the two testers of examples/bughunt/ (naive, careful with one reload)
// driving Debian's chromium with playwright-core, the faults injected with
// page.route. Every row of the chapter's seven scenarios must be what the
// oracle (exact/triage.hpp, judge) predicts from the row's loads: naive 4
// false bug reports, careful none, no missed bug.
// playwright-core is pinned by examples/bughunt/package-lock.json and
// installed with npm ci into BUILD/bughunt (support/npm_install.hpp); no
// browser is downloaded. Skipped when node, npm or chromium is missing (a
// failure under CI=true).
#include <gtest/gtest.h>

#include <signal.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "relsim/exact/triage.hpp"
#include "support/files.hpp"
#include "support/json_out.hpp"
#include "support/npm_install.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using relsim::AppVersion;
using relsim::Tester;
using relsim::test::find_program;
using relsim::test::tail;

using relsim::test::last_json_object;

const std::vector<std::string> kBughuntFiles = {"package.json", "package-lock.json", "browser.mjs",  "faults.mjs",
                                                "testers.mjs",  "scenarios.mjs",     "runs.mjs"};

// The BugHunt example installed into BUILD/bughunt; "" or why not.
std::string install_bughunt(fs::path& dir) {
  const fs::path src = fs::path(relsim::test::source_dir()) / "examples/bughunt";
  dir = fs::path(relsim::test::relsim_exe()).parent_path() / "bughunt";
  return relsim::test::npm_install(src, dir, kBughuntFiles, "playwright-core");
}

TEST(BugHunt, TheSevenScenariosInChromiumAreTheOraclesTable) {
  const std::string chromium = find_program("chromium");
  if (chromium.empty()) RELSIM_SKIP_OR_FAIL("chromium is not on PATH (scripts/install-deps.sh --tests installs Debian's chromium)");
  fs::path dir;
  if (const std::string why = install_bughunt(dir); !why.empty()) RELSIM_SKIP_OR_FAIL(why);

  relsim::test::Background shop({relsim::test::relsim_exe(), "bughunt", "serve", "--port", "0"});
  const int port = relsim::test::port_from_banner(shop.read_line(30));
  ASSERT_GT(port, 0) << "relsim bughunt serve printed no 'listening on' line";

  relsim::test::RunOptions options;
  options.cwd = dir.string();
  options.timeout = 300;
  options.new_process_group = true;  // a timeout then ends chromium's processes too
  options.env = {"RELSIM_CHROMIUM=" + chromium};
  const relsim::test::RunResult run = relsim::test::run_program({"node", "scenarios.mjs", std::to_string(port)}, options);
  std::cout << run.err;  // one line per scenario
  const nlohmann::json result = last_json_object(run.out);
  ASSERT_TRUE(result.contains("rows")) << "scenarios.mjs printed no JSON (exit " << run.code << "):\n"
                                       << tail(run.out + run.err);
  ASSERT_EQ(result["rows"].size(), 7u);

  int naive_false = 0, careful_false = 0, missed = 0;
  for (const auto& row : result["rows"]) {
    const std::string name = row["name"];
    const AppVersion version = relsim::parse_app_version(row["version"].get<std::string>());
    // The row's loads: all fail (always), the first fails (once), none fail.
    std::vector<bool> failed(3, false);
    if (row["times"] == "always") failed.assign(3, true);
    if (row["times"] == "once") failed[0] = true;
    const auto naive = relsim::judge(Tester::naive, 1, version, failed);
    const auto careful = relsim::judge(Tester::careful, 1, version, failed);
    EXPECT_EQ(row["naive"], std::string(relsim::to_string(naive.verdict))) << name;
    EXPECT_EQ(row["careful"], std::string(relsim::to_string(careful.verdict))) << name << ": " << row.dump();
    EXPECT_EQ(row["careful_loads"].get<int>(), careful.loads) << name;
    const bool healthy = version == AppVersion::healthy;
    naive_false += healthy && row["naive"] == "BUG";
    careful_false += healthy && row["careful"] == "BUG";
    missed += !healthy && (row["naive"] != "BUG" || row["careful"] != "BUG");
  }
  EXPECT_EQ(naive_false, 4);
  EXPECT_EQ(careful_false, 0);
  EXPECT_EQ(missed, 0);
  EXPECT_EQ(run.code, 0) << tail(run.out + run.err);

  EXPECT_EQ(shop.stop(SIGTERM), 0);
}

// relsim bughunt run: faults drawn from the chain, one per page load, in
// Chromium. Every run's verdict and load count must be the oracle's; the
// counts are then checked here from the plan the JSON lists (not from
// relsim's own tally), and the exact rates against the closed forms of a
// fresh chain with no reload delay: naive's false bug p, careful's ENV_ERROR
// p q^k.
struct ChainRun {
  std::string tester;
  int reloads;
  double p, q;
};

TEST(BugHunt, ChainDrawnFaultsInChromiumAreTheOraclesVerdictsRunByRun) {
  const std::string chromium = find_program("chromium");
  if (chromium.empty()) RELSIM_SKIP_OR_FAIL("chromium is not on PATH (scripts/install-deps.sh --tests installs Debian's chromium)");
  fs::path dir;
  if (const std::string why = install_bughunt(dir); !why.empty()) RELSIM_SKIP_OR_FAIL(why);

  constexpr int kRuns = 60;
  for (const ChainRun& c : {ChainRun{"naive", 0, 0.3, 0.7}, ChainRun{"careful", 2, 0.3, 0.7}}) {
    std::vector<std::string> args = {relsim::test::relsim_exe(), "bughunt", "run", "--tester", c.tester,
                                     "--p", std::to_string(c.p), "--q", std::to_string(c.q),
                                     "--runs", std::to_string(kRuns), "--workers", "1", "--seed", "20261202",
                                     "--driver", dir.string(), "--chromium", chromium, "--json"};
    if (c.tester == "careful") args.insert(args.end(), {"--reloads", std::to_string(c.reloads)});
    relsim::test::RunOptions options;
    options.timeout = 300;
    options.new_process_group = true;  // a timeout then ends chromium's processes too
    const relsim::test::RunResult run = relsim::test::run_program(args, options);
    ASSERT_EQ(run.code, 0) << c.tester << ":\n" << tail(run.out + run.err);
    const nlohmann::json j = nlohmann::json::parse(run.out);
    std::cout << c.tester << ": " << j["runs_per_second"].get<double>() << " runs/s, " << j["false_bugs"] << " false bugs, "
              << j["env_errors"] << " ENV_ERROR\n";
    EXPECT_EQ(j["runs"], kRuns);
    EXPECT_EQ(j["mismatches"], 0);
    ASSERT_EQ(j["per_run"].size(), static_cast<std::size_t>(kRuns));

    // From the plan: a run whose loads all failed is naive's BUG and
    // careful's ENV_ERROR (careful then made reloads + 1 loads).
    int all_failed = 0;
    for (const auto& r : j["per_run"]) {
      bool failed = true;
      for (const auto& f : r["faults"]) failed = failed && f != "ok";
      const std::size_t most = c.tester == "naive" ? 1u : static_cast<std::size_t>(c.reloads + 1);
      all_failed += failed && r["faults"].size() == most;
      EXPECT_EQ(r["verdict"], r["oracle"]) << r.dump();
      EXPECT_EQ(r["loads"], r["faults"].size()) << r.dump();
    }
    const double closed = c.tester == "naive" ? c.p : c.p * std::pow(c.q, c.reloads);
    if (c.tester == "naive") {
      EXPECT_EQ(j["false_bugs"], all_failed);
      EXPECT_EQ(j["env_errors"], 0);
      EXPECT_NEAR(j["exact"]["false_bug"].get<double>(), closed, 1e-12);
    } else {
      EXPECT_EQ(j["false_bugs"], 0);
      EXPECT_EQ(j["env_errors"], all_failed);
      EXPECT_NEAR(j["exact"]["env_error"].get<double>(), closed, 1e-12);
    }
    EXPECT_EQ(j["passes"], kRuns - all_failed);
    EXPECT_EQ(j["missed_bugs"], 0);
    // The seed is fixed, so this is one draw: it lies inside its 95% interval.
    const auto& failed_rate = j["wilson"][c.tester == "naive" ? "bug" : "env_error"];
    EXPECT_TRUE(failed_rate["exact_inside"].get<bool>()) << failed_rate.dump();
  }
}

}  // namespace
