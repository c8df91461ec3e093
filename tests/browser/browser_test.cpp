// The workbench (`relsim ui`) in a real browser: Debian's chromium package,
// headless, driven by playwright-core from npm (tests/browser/check_ui.mjs).
// The page's reference values (exact 0.763675, 310/400 in [0.7316, 0.8132],
// the lab's 9 and 3 requests), its URL state, exports, layout, keyboard and a
// console free of errors, each a named step of the script's JSON verdict.
//
// playwright-core's version is pinned by tests/browser/package.json and
// package-lock.json. They and check_ui.mjs are copied into the build folder
// (BUILD/browser), where `npm ci` installs exactly the locked package when
// node_modules is missing or the lock changed since the last install (a copy
// of the lock installed last is kept there), as tests/sdk does. playwright-core
// downloads no browser: the script launches the chromium found on PATH.
// Skipped when node, npm or chromium is missing or npm ci fails (a failure
// under CI=true). Screenshots go to BUILD/browser/out, never the sources
// (scripts/screenshots.sh writes docs/img/).
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/json_out.hpp"
#include "support/npm_install.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using relsim::test::find_program;
using relsim::test::slurp;
using relsim::test::tail;

// The script's verdict: the last line of its stdout that is a JSON object.
using relsim::test::last_json_object;

bool is_png(const fs::path& file) {
  const std::string bytes = fs::exists(file) ? slurp(file) : "";
  return bytes.size() > 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

// One check script of this folder run against a fresh `relsim ui --port 0`
// (its first line names the address; without node and npm at build time
// it has no page and refuses, exit 2): the script and harness.mjs copied
// beside playwright-core, run as `node SCRIPT PORT OUTDIR ARGS...` with
// RELSIM_CHROMIUM set, each of its steps an expectation. Skips (fails
// under CI=true) without chromium, or the programs in `needs`.
void run_check(const std::string& script, const std::vector<std::string>& files, const std::string& out,
               const std::vector<std::string>& args, std::vector<std::string> env,
               const std::vector<std::string>& needs = {}) {
  const std::string chromium = find_program("chromium");
  if (chromium.empty()) RELSIM_SKIP_OR_FAIL("chromium is not on PATH (scripts/install-deps.sh --tests installs Debian's chromium)");
  for (const std::string& program : needs)
    if (find_program(program).empty()) RELSIM_SKIP_OR_FAIL(program + " is not on PATH (scripts/install-deps.sh --tests)");

  const fs::path src = fs::path(relsim::test::source_dir()) / "tests/browser";
  const fs::path dir = fs::path(relsim::test::relsim_exe()).parent_path() / "browser";
  std::vector<std::string> copied = {"package.json", "package-lock.json", "harness.mjs", script};
  copied.insert(copied.end(), files.begin(), files.end());
  if (const std::string why = relsim::test::npm_install(src, dir, copied, "playwright-core"); !why.empty())
    RELSIM_SKIP_OR_FAIL(why);
  const std::string version = relsim::test::npm_version(dir, "playwright-core");
  ::testing::Test::RecordProperty("playwright_core_version", version);
  std::cout << "playwright-core " << version << ", " << chromium << " (" << dir.string() << ")\n";

  const fs::path outdir = dir / out;
  fs::remove_all(outdir);
  fs::create_directories(outdir);
  relsim::test::Background ui({relsim::test::relsim_exe(), "ui", "--port", "0"});
  const std::string banner = ui.read_line(30);
  const int port = relsim::test::port_from_banner(banner);
  ASSERT_GT(port, 0) << "relsim ui printed no 'listening on' line (its stderr is above): " << banner;

  relsim::test::RunOptions options;
  options.cwd = dir.string();
  options.timeout = 600;
  options.new_process_group = true;  // a timeout then ends chromium's processes too
  env.push_back("RELSIM_CHROMIUM=" + chromium);
  options.env = env;
  std::vector<std::string> command = {"node", script, std::to_string(port), outdir.string()};
  command.insert(command.end(), args.begin(), args.end());
  const relsim::test::RunResult check = relsim::test::run_program(command, options);
  std::cout << check.err;  // one line per step as it ended
  const nlohmann::json result = last_json_object(check.out);
  ASSERT_TRUE(result.is_object()) << script << " printed no JSON verdict (exit " << check.code << "):\n"
                                  << tail(check.out + check.err);
  for (const auto& step : result.value("steps", nlohmann::json::array()))
    EXPECT_TRUE(step.value("ok", false)) << step.value("name", "?") << ": " << step.value("detail", "");
  EXPECT_EQ(result.value("ok", false), true) << check.out;
  EXPECT_EQ(check.code, 0) << tail(check.out + check.err);

  const int server_code = ui.stop(SIGTERM);
  EXPECT_FALSE(ui.signaled());
  EXPECT_EQ(server_code, 0);
}

TEST(Workbench, ShowsTheReferenceValuesInChromium) {
  // The fit panel's log: a plan generated with p = 0.1, q = 0.6 (the
  // same command as scripts/screenshots.sh).
  const relsim::test::RunResult plan = relsim::test::run_relsim(
      {"plan", "--p", "0.1", "--q", "0.6", "--n", "20", "--tasks", "500", "--seed", "20261001", "--max-requests", "40"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  const fs::path fit_log = relsim::test::write_temp("browser-fit", "fit_log.jsonl", plan.out);
  run_check("check_ui.mjs", {}, "out", {},
            {"RELSIM_SOURCE_DIR=" + relsim::test::source_dir(), "RELSIM_FIT_LOG=" + fit_log.string()});
  if (HasFatalFailure() || IsSkipped()) return;
  const fs::path outdir = fs::path(relsim::test::relsim_exe()).parent_path() / "browser/out";
  for (const char* shot : {"ui-bursts.png", "ui-lab.png", "ui-policies.png", "ui-seconds.png", "ui-audit.png", "ui-fit.png",
                           "ui-tune.png", "ui-fleet.png", "ui-trend.png", "ui-explainer.png", "ui-narrow.png"})
    EXPECT_TRUE(is_png(outdir / shot)) << "expected the screenshot " << (outdir / shot).string();
}

// The explainer and its video (tests/browser/check_explainer.mjs): its
// counters against the simulator's JSON for the same seeds, keyboard play
// and seek, a fresh recording at 2 frames a second that ffprobe reads
// through, and the committed docs/media/explainer.mp4: every frame there,
// and its frame at 30.5 s the page at 30.5 s (a stale video fails here).
TEST(Workbench, ExplainerAndItsVideoShowTheEnginesCounters) {
  run_check("check_explainer.mjs", {"explainer_frames.mjs"}, "out-explainer", {relsim::test::source_dir()}, {},
            {"ffmpeg", "ffprobe"});
}

}  // namespace
