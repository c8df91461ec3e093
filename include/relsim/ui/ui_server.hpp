#pragma once
// The workbench's HTTP server (docs/ui.md): the page's assets and the JSON
// endpoints that run relsim's commands in-process. Binds 127.0.0.1 only.
//
//   GET  /                     the page (and /assets/...)
//   GET  /api/exact?QUERY      = relsim exact QUERY --json
//   GET  /api/simulate?QUERY   = relsim simulate QUERY --json
//   GET  /api/simulate/stream?QUERY  the same as server-sent events: progress, then result
//   GET  /api/oracle?QUERY     = relsim oracle QUERY --json --per-task (scripted: fault, times)
//   GET  /api/live?QUERY       = relsim live QUERY --json --timeline (scripted: fault, times)
//   GET  /api/sweep?QUERY      = relsim sweep QUERY (CSV)
//   POST /api/audit?QUERY      body {"plan": TEXT, "log": TEXT} = relsim audit --plan P --log L QUERY --json
//
// Bad input gets 400 with {"error": "..."} naming the value and its range.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "relsim/ui/command.hpp"

namespace relsim::tools {
class McpService;
}

namespace relsim::ui {

// What the server serves: the workbench (its page and API), the BugHunt
// shop (relsim/ui/shop.hpp), or the MCP tools server (POST /mcp,
// relsim/tools/mcp_service.hpp), with the same connection handling and
// guards.
enum class Site { workbench, shop, tools };

struct UiConfig {
  Site site = Site::workbench;
  int port = 0;     // 0: the kernel picks a free one; else in [1, 65535]
  int threads = 2;  // threads running commands, in [1, 64]
  std::size_t max_body_bytes = 64u * 1024u * 1024u;  // POST /api/audit
  std::size_t max_connections = 64;  // in [1, 10000]; over it, a new connection is closed at once
  // A request must arrive whole within read_timeout (from its first byte);
  // an idle keep-alive connection is closed after keep_alive_timeout; a
  // reply must be taken by the client within write_timeout. Each > 0.
  std::chrono::milliseconds read_timeout{10'000};
  std::chrono::milliseconds keep_alive_timeout{60'000};
  std::chrono::milliseconds write_timeout{30'000};
  std::shared_ptr<tools::McpService> tools;  // Site::tools: what answers POST /mcp
};
// Throws InputError naming the value and its valid range.
void validate(const UiConfig& config);

class UiServer {
 public:
  // Binds 127.0.0.1:config.port and starts serving; throws InputError if the
  // config is invalid or the port cannot be bound.
  UiServer(UiConfig config, CommandRunner runner);
  ~UiServer();  // stop()
  UiServer(const UiServer&) = delete;
  UiServer& operator=(const UiServer&) = delete;

  int port() const;
  std::string url() const;  // http://127.0.0.1:PORT/

  // Closes the listener and every connection, cancels running commands at
  // their next progress report, joins the threads. Idempotent.
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace relsim::ui
