#pragma once
// A small blocking MCP client for relsim's reference agents
// (docs/contention.md, "The reference agents"): tools/call over the
// streamable HTTP transport, one kept-alive connection per agent to a tools
// server on 127.0.0.1, reconnecting when the server closes it. A call is
// sent again only when the server cannot have seen it (it had closed the
// kept-alive connection first); otherwise what a call met (a 429 and its
// retry-after, an error result, a dropped connection) goes back to the
// agent, whose policy is what the suite tests.
#include <cstdint>
#include <memory>
#include <string>

#include "relsim/core/json.hpp"

namespace relsim::contention {

struct ToolReply {
  int status = 0;                 // HTTP status; 0: no answer (connection failed or dropped)
  bool is_error = false;          // an isError result, or a JSON-RPC error
  Json result;                    // the tool's text parsed as JSON (null if it is not JSON)
  std::string text;               // the tool's text, or the error's message
  std::int64_t retry_after_s = 0; // status 429
};

class McpClient {
 public:
  // Calls go to http://127.0.0.1:PORT/t/TENANT/a/AGENT/mcp.
  McpClient(int port, std::string tenant, std::string agent);
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  ToolReply call(const std::string& tool, const Json& arguments);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace relsim::contention
