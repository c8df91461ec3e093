#pragma once
// HTTP/1.1 text that both of relsim's servers send (the mock server,
// server/server_wire.hpp, and the workbench's, ui/http_reply.hpp):
// status lines and headers, chunks, compact JSON. Plain strings, no I/O.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relsim/core/json.hpp"

namespace relsim::http_text {

using Headers = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// Compact, invalid UTF-8 replaced: every JSON body the servers send.
std::string json_text(const Json& value);
// Header names as the logs keep them: ASCII lower case.
std::string lower_case(std::string text);
// One HTTP/1.1 chunk: size in hex, CRLF, data, CRLF.
std::string chunk(std::string_view data);
// Appends chunk(data) to `out`.
void append_chunk(std::string& out, std::string_view data);
// The end of the first complete server-sent event in `text` at or after
// `from`: just past its blank line (\n\n or \r\n\r\n), or npos.
std::size_t sse_event_end(std::string_view text, std::size_t from = 0);
// One server-sent event: `event: NAME\ndata: DATA\n\n` (the Messages
// API's), and a data-only one, `data: DATA\n\n` (OpenAI's chunks).
std::string sse_event(std::string_view name, std::string_view data);
std::string data_event(std::string_view data);
// An event's name ("message_stop"), "" when it has no `event:` line.
std::string_view sse_event_name(std::string_view event);
// An event's data: its `data:` lines' values joined by newlines.
std::string sse_data(std::string_view event);
std::string_view reason(int status);
// Status line and headers up to the blank line.
std::string head(int status, const Headers& headers);
// The same with the reason phrase given (one relayed from another server).
std::string head(int status, std::string_view reason_phrase, const Headers& headers);

}  // namespace relsim::http_text
