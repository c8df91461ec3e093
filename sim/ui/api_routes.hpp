#pragma once
// Internal to the workbench's server: what each request gets (the table in
// ui_server.hpp and docs/ui.md). The Host guard comes first: a page on some
// other site that a DNS rebinding points at 127.0.0.1 sends its own host
// name, and gets 403 before anything runs.
#include "ui/audit_upload.hpp"
#include "ui/ui_connection.hpp"

namespace relsim::ui {

// Answers one request; true to keep the connection for the next.
net::awaitable<bool> serve(UiConnection& conn, Request& request);

// The MCP tools server's one endpoint, /mcp (mcp_route.cpp): POST answers a
// JSON-RPC message through the site's McpService, a held answer after its
// pause, a dropped one cut off half-way (the connection then closes); GET
// and DELETE get 405 (no server-initiated stream, no sessions).
net::awaitable<bool> serve_mcp(UiConnection& conn, Request& request);
// A refusal made before a request is read whole (413, 431, 400), as the
// tools site answers it: the same status with a JSON-RPC error body.
Reply as_jsonrpc_error(Reply reply);

// GET /api/simulate/stream (event_stream.cpp): the command's progress and
// result as server-sent events; the connection ends with the stream.
net::awaitable<bool> serve_event_stream(UiConnection& conn, Work work);

}  // namespace relsim::ui
