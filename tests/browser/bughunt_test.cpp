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

TEST(BugHunt, TheSevenScenariosInChromiumAreTheOraclesTable) {
  const std::string chromium = find_program("chromium");
  if (chromium.empty()) RELSIM_SKIP_OR_FAIL("chromium is not on PATH (scripts/install-deps.sh installs Debian's chromium)");
  const fs::path src = fs::path(relsim::test::source_dir()) / "examples/bughunt";
  const fs::path dir = fs::path(relsim::test::relsim_exe()).parent_path() / "bughunt";
  if (const std::string why = relsim::test::npm_install(
          src, dir, {"package.json", "package-lock.json", "testers.mjs", "scenarios.mjs"}, "playwright-core");
      !why.empty())
    RELSIM_SKIP_OR_FAIL(why);

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

}  // namespace
