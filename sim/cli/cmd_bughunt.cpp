// relsim bughunt: a testing agent's world (docs/bughunt.md). `serve` runs the
// synthetic shop (ui/shop.hpp) on 127.0.0.1 until SIGINT or SIGTERM, for the
// testers of examples/bughunt/ to drive in a browser.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/ui/ui_server.hpp"
#include "cli/commands.hpp"
#include "cli/stop_signals.hpp"

namespace relsim::cli {
namespace {

int run_serve(ui::UiConfig config) {
  config.site = ui::Site::shop;
  ui::validate(config);
  StopSignals signals;  // before the server's threads start
  // The shop runs no command: its routes are its page and its cart.
  ui::UiServer server(config, ui::CommandRunner([](const std::vector<std::string>&, const ui::CommandHooks&) {
                        return ui::CommandResult{kExitInput, "", "the shop runs no command"};
                      }));
  out() << fmt::format("relsim bughunt: listening on {}", server.url()) << std::endl;
  signals.wait();
  server.stop();
  return 0;
}

}  // namespace

Runner add_bughunt(CLI::App& app) {
  auto config = std::make_shared<ui::UiConfig>();
  config->threads = 1;
  auto* cmd = app.add_subcommand("bughunt",
                                 "a testing agent's world (docs/bughunt.md): environment faults against product bugs");
  // No require_subcommand: the runner names the one to give.
  auto* serve = cmd->add_subcommand(
      "serve",
      "serve the synthetic shop on 127.0.0.1 until SIGINT/SIGTERM: GET / (its page: the cart's total, 487.00; with\n"
      "  ?v=buggy it forgets the quantity and shows 288.00), /shop.js and /api/cart");
  serve->add_option("--port", config->port, "port on 127.0.0.1, in [0, 65535]; 0 picks a free one")
      ->capture_default_str();
  return [config, serve] {
    if (serve->parsed()) return run_serve(*config);
    throw InputError("relsim bughunt needs a subcommand: serve (relsim bughunt --help)");
  };
}

}  // namespace relsim::cli
