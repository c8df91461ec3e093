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

// GET /api/simulate/stream (event_stream.cpp): the command's progress and
// result as server-sent events; the connection ends with the stream.
net::awaitable<bool> serve_event_stream(UiConnection& conn, Work work);

}  // namespace relsim::ui
