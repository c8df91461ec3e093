// The official Anthropic TypeScript SDK (npm @anthropic-ai/sdk) pointed at
// `relsim serve`: a healthy stream, persistent 529 with its retry counts, an
// in-stream error event and a cut stream (tests/sdk/check_sdk.mjs).
//
// The SDK's version is pinned by tests/sdk/package.json and package-lock.json.
// They and check_sdk.mjs are copied into the build folder (BUILD/sdk), where
// `npm ci` installs exactly the locked packages when node_modules is missing
// or the lock changed since the last install (a copy of the lock installed
// last is kept there), so a run with the SDK in place needs no network.
// Skipped when node or npm is missing or npm ci fails (a failure under
// CI=true).
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using relsim::test::find_program;

using relsim::test::slurp;

using relsim::test::tail;

TEST(OfficialSdk, StreamsRetriesAndErrorsAgainstTheMockServer) {
  if (find_program("node").empty()) RELSIM_SKIP_OR_FAIL("node is not on PATH (scripts/install-deps.sh installs nodejs)");
  if (find_program("npm").empty()) RELSIM_SKIP_OR_FAIL("npm is not on PATH (scripts/install-deps.sh installs it)");

  const fs::path src = fs::path(relsim::test::source_dir()) / "tests/sdk";
  const fs::path dir = fs::path(relsim::test::relsim_exe()).parent_path() / "sdk";
  fs::create_directories(dir);
  for (const char* file : {"package.json", "package-lock.json", "check_sdk.mjs"})
    fs::copy_file(src / file, dir / file, fs::copy_options::overwrite_existing);

  const fs::path installed_lock = dir / "installed-package-lock.json";  // the lock node_modules holds
  const fs::path sdk_package = dir / "node_modules/@anthropic-ai/sdk/package.json";
  if (!fs::exists(sdk_package) || !fs::exists(installed_lock) ||
      slurp(installed_lock) != slurp(dir / "package-lock.json")) {
    fs::remove(installed_lock);
    relsim::test::RunOptions options;
    options.cwd = dir.string();
    options.timeout = 300;
    // No install scripts: the SDK and its dependencies need none.
    const relsim::test::RunResult ci = relsim::test::run_program(
        {"npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"}, options);
    if (ci.code != 0 || !fs::exists(sdk_package))
      RELSIM_SKIP_OR_FAIL("npm ci could not install the pinned @anthropic-ai/sdk in " << dir.string() << " (exit "
                                                                                     << ci.code << "):\n"
                                                                                     << tail(ci.out + ci.err));
    fs::copy_file(dir / "package-lock.json", installed_lock, fs::copy_options::overwrite_existing);
  }
  const std::string version = nlohmann::json::parse(slurp(sdk_package)).value("version", "?");
  RecordProperty("sdk_version", version);
  std::cout << "@anthropic-ai/sdk " << version << " (" << dir.string() << ")\n";

  // relsim serve on a free port; its first line names the address.
  relsim::test::Background serve({relsim::test::relsim_exe(), "serve", "--port", "0"});
  const std::string banner = serve.read_line(10);
  const int port = relsim::test::port_from_banner(banner);
  ASSERT_GT(port, 0) << banner;

  relsim::test::RunOptions options;
  options.cwd = dir.string();
  options.timeout = 120;
  const relsim::test::RunResult check = relsim::test::run_program({"node", "check_sdk.mjs", std::to_string(port)}, options);
  const std::string result = check.out + check.err;
  EXPECT_EQ(check.code, 0) << "@anthropic-ai/sdk " << version << ": " << result;
  EXPECT_NE(result.find("\"ok\":true"), std::string::npos) << result;
  const int server_code = serve.stop(SIGTERM);
  EXPECT_FALSE(serve.signaled());
  EXPECT_EQ(server_code, 0);
}

}  // namespace
