#pragma once
// Internal to the workbench's server: the bytes of its replies, in one place,
// so every answer carries the same guard headers (no-store, nosniff, and the
// CSP on HTML) whichever route made it. The HTTP framing (status line,
// chunks, JSON text) is shared with the mock server (core/http_text.hpp).
#include <string>
#include <string_view>

#include "relsim/core/http_text.hpp"

namespace relsim::ui {

using http_text::Headers;
using http_text::kLastChunk;

inline constexpr std::string_view kJson = "application/json";
inline constexpr std::string_view kCsv = "text/csv; charset=utf-8";
inline constexpr std::string_view kJsonLines = "application/x-ndjson; charset=utf-8";

struct Reply {
  int status = 200;
  std::string content_type{kJson};
  std::string body;
  Headers headers;  // beyond the ones every reply has
};

// {"error": MESSAGE}: invalid UTF-8 in the message (it may quote a client's
// bytes) is replaced, so the body is always valid JSON.
Reply json_error(int status, std::string_view message, Headers headers = {});

// Status line, headers (content-type, content-length, connection, the guard
// headers, then reply.headers) and body.
std::string serialize(const Reply& reply, bool keep_alive);

// The head of GET /api/simulate/stream: 200, text/event-stream, chunked,
// and `connection: close` (the stream ends the connection).
std::string event_stream_head();

// One server-sent event in one HTTP chunk. A data of several lines becomes
// several data: fields, which a client joins back with newlines.
std::string event_chunk(std::string_view name, std::string_view data);

}  // namespace relsim::ui
