// The bytes of the workbench server's replies (http_reply.hpp). The guard
// headers: no-store, because every answer is computed for this one query;
// nosniff, so a browser takes each body as what its content-type says; and
// on HTML a content security policy that lets the page load only its own
// assets (its charts draw into data: and blob: images for PNG export).
#include "ui/http_reply.hpp"

#include <fmt/format.h>

#include "relsim/core/json.hpp"

namespace relsim::ui {
namespace {

constexpr std::string_view kCsp =
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'";

// The headers every reply carries, after its own framing ones.
void append_guard_headers(Headers& headers, std::string_view content_type) {
  headers.emplace_back("cache-control", "no-store");
  headers.emplace_back("x-content-type-options", "nosniff");
  if (content_type.starts_with("text/html")) headers.emplace_back("content-security-policy", std::string(kCsp));
}

}  // namespace

Reply json_error(int status, std::string_view message, Headers headers) {
  return Reply{status, std::string(kJson), http_text::json_text(Json{{"error", message}}), std::move(headers)};
}

std::string serialize(const Reply& reply, bool keep_alive) {
  Headers headers = {{"content-type", reply.content_type},
                     {"content-length", std::to_string(reply.body.size())},
                     {"connection", keep_alive ? "keep-alive" : "close"}};
  append_guard_headers(headers, reply.content_type);
  headers.insert(headers.end(), reply.headers.begin(), reply.headers.end());
  return http_text::head(reply.status, headers) + reply.body;
}

std::string event_stream_head() {
  Headers headers = {{"content-type", "text/event-stream"}, {"transfer-encoding", "chunked"}, {"connection", "close"}};
  append_guard_headers(headers, "text/event-stream");
  return http_text::head(200, headers);
}

std::string event_chunk(std::string_view name, std::string_view data) {
  std::string event = fmt::format("event: {}\n", name);
  std::size_t start = 0;
  for (;;) {
    const std::size_t nl = data.find('\n', start);
    event += fmt::format("data: {}\n", data.substr(start, nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  event += '\n';
  return http_text::chunk(event);
}

}  // namespace relsim::ui
