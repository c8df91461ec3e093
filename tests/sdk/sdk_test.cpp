// The official Anthropic TypeScript SDK (npm @anthropic-ai/sdk) pointed at
// `relsim serve`: a healthy stream, persistent 529 with its retry counts, an
// in-stream error event and a cut stream (tests/sdk/check_sdk.mjs); and
// the official OpenAI SDK (npm openai) against its dialect.
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
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/npm_install.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using relsim::test::find_program;

using relsim::test::slurp;

using relsim::test::tail;

TEST(OfficialSdk, StreamsRetriesAndErrorsAgainstTheMockServer) {
  const fs::path src = fs::path(relsim::test::source_dir()) / "tests/sdk";
  const fs::path dir = fs::path(relsim::test::relsim_exe()).parent_path() / "sdk";
  if (const std::string why =
          relsim::test::npm_install(src, dir, {"package.json", "package-lock.json", "check_sdk.mjs", "check_openai_sdk.mjs", "mock_control.mjs", "proxy_transparency.mjs"}, "@anthropic-ai/sdk");
      !why.empty())
    RELSIM_SKIP_OR_FAIL(why);
  const std::string version = relsim::test::npm_version(dir, "@anthropic-ai/sdk");
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

// relsim proxy's transparency (docs/proxy.md): 1,000 streams through the
// proxy, each byte for byte what the SDK gets from an identical upstream
// asked directly.
TEST(OfficialSdk, ThroughTheProxyEveryStreamIsTheUpstreamsByteForByte) {
  const fs::path src = fs::path(relsim::test::source_dir()) / "tests/sdk";
  const fs::path dir = fs::path(relsim::test::relsim_exe()).parent_path() / "sdk";
  if (const std::string why = relsim::test::npm_install(
          src, dir, {"package.json", "package-lock.json", "check_sdk.mjs", "check_openai_sdk.mjs", "mock_control.mjs", "proxy_transparency.mjs"}, "@anthropic-ai/sdk");
      !why.empty())
    RELSIM_SKIP_OR_FAIL(why);
  constexpr int kStreams = 1000;
  std::string list;
  for (int i = 0; i < kStreams; ++i) list += i ? ", \"ok\"" : "\"ok\"";
  const std::string plan_text = std::string(R"({"relsim_plan": 1, "tasks": 1, "source": "scripted", "n": 1, "b": 0, "g": 0})") +
                                "\n" + R"({"task": 0, "requests": [)" + list + "]}\n";
  const fs::path plan = relsim::test::write_temp("sdk_proxy", "plan.jsonl", plan_text);
  const auto start = [](const std::vector<std::string>& argv, int& port) {
    auto p = std::make_unique<relsim::test::Background>(argv);
    port = relsim::test::port_from_banner(p->read_line(10));
    return p;
  };
  int direct_port = 0, upstream_port = 0, proxy_port = 0;
  const std::string exe = relsim::test::relsim_exe();
  auto direct = start({exe, "serve", "--port", "0", "--plan", plan.string()}, direct_port);
  auto upstream = start({exe, "serve", "--port", "0", "--plan", plan.string()}, upstream_port);
  ASSERT_GT(direct_port, 0);
  ASSERT_GT(upstream_port, 0);
  auto proxy = start({exe, "proxy", "--port", "0", "--plan", plan.string(), "--upstream",
                      "http://127.0.0.1:" + std::to_string(upstream_port) + "/t/0"},
                     proxy_port);
  ASSERT_GT(proxy_port, 0);
  relsim::test::RunOptions options;
  options.cwd = dir.string();
  options.timeout = 300;
  const relsim::test::RunResult run = relsim::test::run_program(
      {"node", "proxy_transparency.mjs", std::to_string(direct_port), std::to_string(proxy_port), std::to_string(kStreams)},
      options);
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("\"identical\":1000"), std::string::npos) << run.out << run.err;
  std::cout << "through relsim proxy: " << run.out;
  for (auto* p : {proxy.get(), upstream.get(), direct.get()}) EXPECT_EQ(p->stop(SIGTERM), 0);
}

// The official OpenAI TypeScript SDK (npm openai, pinned beside the
// Anthropic one) against the mock's OpenAI dialect, POST
// /t/{task}/v1/chat/completions, streamed and whole: every fault kind, what
// the SDK retries and with which retry counts, and the three findings
// docs/audit.md reports for its users (tests/sdk/check_openai_sdk.mjs).
TEST(OfficialOpenAiSdk, EveryFaultKindInTheOpenAiDialectBehavesAsDocumented) {
  const fs::path src = fs::path(relsim::test::source_dir()) / "tests/sdk";
  const fs::path dir = fs::path(relsim::test::relsim_exe()).parent_path() / "sdk";
  if (const std::string why = relsim::test::npm_install(
          src, dir, {"package.json", "package-lock.json", "check_sdk.mjs", "check_openai_sdk.mjs", "mock_control.mjs", "proxy_transparency.mjs"},
          "openai");
      !why.empty())
    RELSIM_SKIP_OR_FAIL(why);
  const std::string version = relsim::test::npm_version(dir, "openai");
  RecordProperty("openai_sdk_version", version);
  std::cout << "openai " << version << " (" << dir.string() << ")\n";
  relsim::test::Background serve({relsim::test::relsim_exe(), "serve", "--port", "0"});
  const int port = relsim::test::port_from_banner(serve.read_line(10));
  ASSERT_GT(port, 0);
  relsim::test::RunOptions options;
  options.cwd = dir.string();
  options.timeout = 120;
  const relsim::test::RunResult check =
      relsim::test::run_program({"node", "check_openai_sdk.mjs", std::to_string(port)}, options);
  const std::string result = check.out + check.err;
  EXPECT_EQ(check.code, 0) << "openai " << version << ": " << result;
  EXPECT_NE(result.find("\"ok\":true"), std::string::npos) << result;
  std::cout << check.out;
  EXPECT_EQ(serve.stop(SIGTERM), 0);
}

}  // namespace
