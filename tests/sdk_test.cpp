// The official Anthropic TypeScript SDK (npm @anthropic-ai/sdk, installed
// into the build folder on first run) pointed at `relsim serve`: a healthy
// stream, persistent 529 with its retry counts, an in-stream error event and
// a cut stream. Skipped when Node.js, npm or the registry is unavailable.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

namespace {

std::string capture(const std::string& cmd, int* status) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe.get())) out += buf.data();
  *status = pclose(pipe.release());
  return out;
}

TEST(OfficialSdk, StreamsRetriesAndErrorsAgainstTheMockServer) {
  namespace fs = std::filesystem;
  int status = 0;
  capture("node --version >/dev/null 2>&1 && npm --version >/dev/null 2>&1", &status);
  if (status != 0) GTEST_SKIP() << "node or npm is not installed";
  const fs::path dir = fs::path(RELSIM_EXE).parent_path() / "sdk";
  fs::create_directories(dir);
  if (!fs::exists(dir / "node_modules/@anthropic-ai/sdk/package.json")) {
    const std::string out = capture("cd '" + dir.string() +
                                        "' && timeout 300 npm install --no-audit --no-fund --loglevel=error "
                                        "@anthropic-ai/sdk@^0 2>&1 || timeout 300 npm install --no-audit --no-fund "
                                        "--loglevel=error @anthropic-ai/sdk 2>&1",
                                    &status);
    if (!fs::exists(dir / "node_modules/@anthropic-ai/sdk/package.json"))
      GTEST_SKIP() << "npm could not install @anthropic-ai/sdk: " << out;
  }
  fs::copy_file(fs::path(RELSIM_SOURCE_DIR) / "tests/sdk/check_sdk.mjs", dir / "check_sdk.mjs",
                fs::copy_options::overwrite_existing);

  // relsim serve on a free port; its first line names the address.
  int out_pipe[2];
  ASSERT_EQ(pipe(out_pipe), 0);
  const pid_t server = fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    close(out_pipe[0]);
    execl(RELSIM_EXE, RELSIM_EXE, "serve", "--port", "0", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out_pipe[1]);
  FILE* from_server = fdopen(out_pipe[0], "r");
  std::array<char, 256> line{};
  ASSERT_NE(std::fgets(line.data(), static_cast<int>(line.size()), from_server), nullptr);
  const std::string text = line.data();
  const auto colon = text.rfind(':');
  ASSERT_NE(colon, std::string::npos) << text;
  const std::string port = text.substr(colon + 1, text.find_first_not_of("0123456789", colon + 1) - colon - 1);

  const std::string result =
      capture("cd '" + dir.string() + "' && timeout 120 node check_sdk.mjs " + port + " 2>&1", &status);
  kill(server, SIGTERM);
  int server_status = 0;
  waitpid(server, &server_status, 0);
  fclose(from_server);
  EXPECT_EQ(status, 0) << result;
  EXPECT_NE(result.find("\"ok\":true"), std::string::npos) << result;
  EXPECT_TRUE(WIFEXITED(server_status) && WEXITSTATUS(server_status) == 0);
}

}  // namespace
