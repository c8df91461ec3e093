#pragma once
// Internal to the workbench's server: what each request gets (the table in
// ui_server.hpp and docs/ui.md). The Host guard comes first: a page on some
// other site that a DNS rebinding points at 127.0.0.1 sends its own host
// name, and gets 403 before anything runs.
#include "ui/upload.hpp"
#include "ui/ui_connection.hpp"

namespace relsim::ui {

// Answers one request; true to keep the connection for the next.
net::awaitable<bool> serve(UiConnection& conn, Request& request);

// Whether the path is an upload's (its body may be large: ui_connection).
bool takes_upload(std::string_view path);

// The MCP tools server's one endpoint, /mcp (mcp_route.cpp): POST answers a
// JSON-RPC message through the site's McpService, a held answer after its
// pause, a dropped one cut off half-way (the connection then closes); GET
// and DELETE get 405 (no server-initiated stream, no sessions).
net::awaitable<bool> serve_mcp(UiConnection& conn, Request& request);
// The tools site's error replies (mcp_route.cpp), its refusals before a
// request is read whole (413, 431, 400) included: the status with a JSON-RPC
// error body, id null, code -32600.
Reply jsonrpc_reply(int status, std::string_view message, Headers headers = {});

// GET /api/simulate/stream (event_stream.cpp): the command's progress and
// result as server-sent events; the connection ends with the stream.
net::awaitable<bool> serve_event_stream(UiConnection& conn, Work work);

}  // namespace relsim::ui
