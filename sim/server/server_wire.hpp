#pragma once
// Internal to the server: the bytes it sends, built as plain strings so they
// read in one place (docs/wire.md specifies them; the event shapes follow the
// Messages streaming API: message_start ... message_stop,
// `event: NAME\ndata: JSON\n\n`).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/core/http_text.hpp"
#include "relsim/server/server.hpp"

namespace relsim::wire {

// The HTTP/1.1 text the workbench's server sends too.
using http_text::append_chunk;
using http_text::chunk;
using http_text::Headers;
using http_text::head;
using http_text::json_text;
using http_text::kLastChunk;
using http_text::lower_case;
using http_text::reason;


inline constexpr std::string_view kModel = "relsim-mock";
inline constexpr int kOutputTokens = 6;

using http_text::sse_event;
// {"type":"error","error":{"type":TYPE,"message":MESSAGE}}
std::string error_body(std::string_view type, std::string_view message);
// The same error in `dialect`'s shape (openai_wire.hpp for OpenAI's).
std::string error_body(Dialect dialect, std::string_view type, std::string_view message);
// A complete response with a JSON body (content-type, content-length,
// request-id, connection and `extra` headers).
// request-id is x-request-id in the OpenAI dialect, as OpenAI sends it.
std::string json_response(int status, std::string_view body, std::string_view request_id, bool keep_alive,
                          const Headers& extra = {}, Dialect dialect = Dialect::anthropic);
// The head of such a response alone, announcing `content_length` bytes.
std::string response_head(int status, std::size_t content_length, std::string_view content_type,
                          std::string_view request_id, bool keep_alive, const Headers& extra, Dialect dialect);
// The same with a body of another content type (GET /control/log's NDJSON).
std::string text_response(int status, std::string_view body, std::string_view content_type,
                          std::string_view request_id, bool keep_alive, const Headers& extra = {});
// The 200 head of a stream: text/event-stream, chunked.
std::string stream_head(std::string_view request_id, bool keep_alive, const Headers& extra = {},
                        Dialect dialect = Dialect::anthropic);

// The events of a streamed reply (ok or an in-stream fault kind) and where it
// pauses: `hold_at` (stall) and `gate_at` are indices into `events` (the
// reply waits before sending that event; events.size() means before the
// end); `clean_end` says whether the terminating chunk follows.
struct StreamScript {
  std::vector<std::string> events;
  std::size_t hold_at = static_cast<std::size_t>(-1);
  std::size_t gate_at = 0;
  bool clean_end = true;
};
// `fault` is ignored unless `reply` is Reply::fault with an in-stream or content kind.
StreamScript stream_script(const ScriptEntry& entry, std::int64_t task, std::int64_t index, std::size_t body_bytes);
bool streams(const ScriptEntry& entry);  // ok, or an in-stream or content fault kind
// Whether the mock makes `kind`'s stream from its healthy one through the
// proxy's own StreamFault (the content kinds and stall_first): faulted_script.
bool made_by_stream_fault(FaultKind kind);
// The healthy events `ok` as a content fault or stall_first makes them
// (mock::StreamFault, the proxy's own), `gate_at` kept within them.
StreamScript faulted_script(const std::vector<std::string>& ok, FaultKind kind, Dialect dialect, std::size_t gate_at);

// What a request asked of its reply's shape: a stream (always, in the
// Messages API; an OpenAI request's "stream"), and in an OpenAI stream a
// last chunk with the usage ("stream_options": {"include_usage": true}).
struct Asked {
  bool stream = true;
  bool usage = false;
};

// The status, error type and message of an http_* fault kind.
struct HttpError {
  int status;
  std::string_view type;
  std::string_view message;
};
HttpError http_error(FaultKind kind);

// "garbage": a few hundred pseudo-random bytes, a pure function of (task, index).
std::string garbage(std::int64_t task, std::int64_t index);

// [A-Za-z0-9_.-]{1,64}
bool valid_gate_name(std::string_view name);

std::string message_id(std::int64_t task, std::int64_t index);  // msg_relsim_{task}_{k}
std::string request_id(std::int64_t task, std::int64_t index);  // req_relsim_{task}_{k}

}  // namespace relsim::wire
