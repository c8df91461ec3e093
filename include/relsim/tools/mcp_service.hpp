#pragma once
// The MCP tools server's protocol (docs/tools.md): one JSON-RPC 2.0 message
// in, what to answer out, for the streamable HTTP transport that `relsim
// tools serve` hosts on POST /mcp (ui/ui_server.hpp, Site::tools).
//
//   initialize     the client's protocolVersion echoed, capabilities
//                  {tools: {}}, serverInfo {name: "relsim-tools", version}
//   ping           {}
//   tools/list     the catalog (tool_catalog.hpp)
//   tools/call     the tool, under the call's fault (server_faults.hpp)
//   a notification or a client's response: 202, no body
//
// Protocol errors are JSON-RPC errors and never end the server: -32700 (not
// JSON), -32600 (not a request, or a batch: batches are refused), -32601
// (unknown method), -32602 (bad params, or an unknown tool).
//
// Every tools/call that names a tool (a string) is call k, k = 0, 1, ... in
// arrival order: it takes the next fault and gets one line in the call log
// (JSON lines, flushed per line): {"call", "t_ms", "tool", "fault", "stage",
// "answer", "error", "sandbox"}; `stage` is how far the call got
// (transport, service, validate, exec or done), `answer` what the client was
// sent (result, is_error or rpc_error), `error` the full reason (the client
// reads a terse one), `sandbox` every file's size after the call.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "relsim/core/json.hpp"
#include "relsim/tools/sandbox.hpp"
#include "relsim/tools/server_faults.hpp"

namespace relsim::tools {

inline constexpr std::int64_t kMaxHoldMs = 600'000;

struct ToolsConfig {
  std::filesystem::path sandbox;
  std::optional<std::filesystem::path> log;  // the call log, created (truncated) at start
  std::chrono::milliseconds hold{2000};      // how long a timeout fault holds the answer, in [1, kMaxHoldMs]
};

// How the answer goes out.
enum class Delivery { now, hold, drop };

struct McpAnswer {
  int status = 200;  // 200 with a JSON body, or 202 with none
  std::string body;
  Delivery delivery = Delivery::now;
};

class McpService {
 public:
  // Creates the sandbox and the log; throws InputError naming what is wrong.
  McpService(ToolsConfig config, ToolFaultSource faults);

  // Thread-safe; never throws on a client's bytes.
  McpAnswer handle(std::string_view body);

  std::chrono::milliseconds hold() const { return config_.hold; }
  std::uint64_t calls() const;
  const Sandbox& sandbox() const { return sandbox_; }

 private:
  McpAnswer call_tool(const Json& id, const Json& params);

  ToolsConfig config_;
  Sandbox sandbox_;
  mutable std::mutex mu_;
  ToolFaultSource faults_;
  std::ofstream log_;
  std::chrono::steady_clock::time_point start_;
};

// A JSON-RPC error response with id null, for refusals made before a body
// is read (too large, not JSON by its content type).
std::string jsonrpc_error(int code, std::string_view message);

}  // namespace relsim::tools
