#pragma once
// The MCP tools server's protocol (docs/tools.md): one JSON-RPC 2.0 message
// in, what to answer out, for the streamable HTTP transport that `relsim
// tools serve` hosts on POST /mcp (ui/ui_server.hpp, Site::tools).
//
//   initialize     the client's protocolVersion echoed, capabilities
//                  {tools: {}}, serverInfo {name: "relsim-tools", version}
//   ping           {}
//   tools/list     the catalog (tool_catalog.hpp) and the shared tools
//                  (shared_tools.hpp)
//   tools/call     the tool, under the call's fault (server_faults.hpp),
//                  after the caller's tenant quota (tool_quota.hpp) if any
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
// reads a terse one), `sandbox` every file's size after the call; then
// "tenant" and "agent" (the caller), and for a shared tool "key", "outcome"
// and "facts" (shared_tools.hpp). A call refused by the quota takes no
// fault and no call number: {"call": null, ..., "stage": "quota", "answer":
// "http_429"}.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relsim/core/json.hpp"
#include "relsim/tools/sandbox.hpp"
#include "relsim/tools/server_faults.hpp"
#include "relsim/tools/shared_tools.hpp"
#include "relsim/tools/tool_quota.hpp"

namespace relsim::tools {

inline constexpr std::int64_t kMaxHoldMs = 600'000;

struct ToolsConfig {
  std::filesystem::path sandbox;
  std::optional<std::filesystem::path> log;  // the call log, created (truncated) at start
  std::chrono::milliseconds hold{2000};      // how long a timeout fault holds the answer, in [1, kMaxHoldMs]
  SharedConfig shared;                       // the shared tools' cache threshold, queue order and seed
  std::optional<QuotaSpec> quota;            // tools/calls per tenant and window; none: no quota
};

// How the answer goes out.
enum class Delivery { now, hold, drop };

struct McpAnswer {
  int status = 200;  // 200 with a JSON body, or 202 with none
  std::string body;
  Delivery delivery = Delivery::now;
  std::int64_t retry_after_s = 0;  // status 429 (the tenant's quota): the retry-after header
};

class McpService {
 public:
  // Creates the sandbox and the log; throws InputError naming what is wrong.
  McpService(ToolsConfig config, ToolFaultSource faults);

  // Thread-safe; never throws on a client's bytes.
  McpAnswer handle(std::string_view body, const Caller& caller = {});

  std::chrono::milliseconds hold() const { return config_.hold; }
  std::uint64_t calls() const;
  const Sandbox& sandbox() const { return sandbox_; }
  // The shared locks held now (not expired), for a run's report.
  std::vector<std::pair<std::string, LockHolder>> held_locks() const;
  // Whether `agent` holds a shared lock now (not expired).
  bool holds_lock(std::string_view agent) const;
  // A scratchpad entry as it is now, read without a call or a log line.
  ScratchEntry peek(std::string_view key) const;

 private:
  McpAnswer call_tool(const Json& id, const Json& params, const Caller& caller);
  std::int64_t now_ms() const;
  // The caller's tenant over its quota: the 429 to send, its line logged.
  std::optional<McpAnswer> over_quota(const Json& id, const Caller& caller, std::int64_t now, Json& line);
  void log_line(Json line);

  ToolsConfig config_;
  Sandbox sandbox_;
  mutable std::mutex mu_;
  ToolFaultSource faults_;
  SharedTools shared_;
  std::optional<ToolQuota> quota_;
  std::ofstream log_;
  std::chrono::steady_clock::time_point start_;
};

// A JSON-RPC error response with id null, for refusals made before a body
// is read (too large, not JSON by its content type).
std::string jsonrpc_error(int code, std::string_view message);

}  // namespace relsim::tools
