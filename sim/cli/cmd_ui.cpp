// relsim ui: the browser workbench (ui/ui_server.hpp) on 127.0.0.1 until
// SIGINT or SIGTERM. Its API runs relsim's own commands in-process through
// run_command, so every number on the page is one the command line prints.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include <fmt/format.h>

#include "relsim/cli/cli.hpp"
#include "relsim/ui/assets.hpp"
#include "relsim/ui/ui_server.hpp"
#include "cli/commands.hpp"
#include "cli/stop_signals.hpp"

extern char** environ;

namespace relsim::cli {
namespace {

struct UiArgs {
  ui::UiConfig config;
  bool open = false;
};

// Starts `xdg-open URL` with its stdout on /dev/null (ours carries the
// banner a caller may read); returns its pid, or -1 with a line on stderr
// saying to open the URL by hand.
pid_t open_in_browser(const std::string& url) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  std::string arg0 = "xdg-open", arg1 = url;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = -1;
  // posix_spawnp looks xdg-open up on PATH, and fails when it is not there.
  if (posix_spawnp(&pid, "xdg-open", &actions, nullptr, argv, environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  if (pid < 0) std::cerr << fmt::format("relsim ui: no xdg-open to start a browser: open {} yourself\n", url);
  return pid;
}

int run_ui(const UiArgs& a) {
  ui::validate(a.config);
  if (!ui::assets_built()) {
    std::cerr << "relsim ui: this relsim was built without node and npm, so it has no page: install nodejs and npm "
                 "(scripts/install-deps.sh) and rebuild\n";
    return kExitInput;
  }
  StopSignals signals;  // before the server's threads start
  ui::UiServer server(a.config, ui::CommandRunner(run_command));
  out() << fmt::format("relsim ui: listening on {}", server.url()) << std::endl;
  const pid_t opener = a.open ? open_in_browser(server.url()) : -1;
  signals.wait();
  server.stop();  // running commands are cancelled at their next progress report
  if (opener > 0) ::waitpid(opener, nullptr, WNOHANG);
  return 0;
}

}  // namespace

Runner add_ui(CLI::App& app) {
  auto args = std::make_shared<UiArgs>();
  auto* cmd = app.add_subcommand(
      "ui",
      "serve the browser workbench on 127.0.0.1 until SIGINT/SIGTERM: the burst simulator, the fault lab (the oracle\n"
      "  next to a live run against the mock server), the policies side by side and the audit of a request log;\n"
      "  its API answers with the commands' own JSON (docs/ui.md)");
  cmd->add_option("--port", args->config.port, "port on 127.0.0.1, in [0, 65535]; 0 picks a free one")
      ->capture_default_str();
  cmd->add_flag("--open", args->open, "open the page in a browser (xdg-open)");
  cmd->add_option("--threads", args->config.threads, "threads running commands, in [1, 64]")->capture_default_str();
  return [args] { return run_ui(*args); };
}

}  // namespace relsim::cli
