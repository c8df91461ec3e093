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

std::string_view reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

void append_guard_headers(std::string& out) {
  out += "cache-control: no-store\r\nx-content-type-options: nosniff\r\n";
}

}  // namespace

Reply json_error(int status, std::string_view message, Headers headers) {
  const Json body = {{"error", message}};
  return Reply{status, std::string(kJson), body.dump(-1, ' ', false, Json::error_handler_t::replace),
               std::move(headers)};
}

std::string serialize(const Reply& reply, bool keep_alive) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: {}\r\n",
                                reply.status, reason(reply.status), reply.content_type, reply.body.size(),
                                keep_alive ? "keep-alive" : "close");
  append_guard_headers(out);
  if (reply.content_type.starts_with("text/html")) out += fmt::format("content-security-policy: {}\r\n", kCsp);
  for (const auto& [name, value] : reply.headers) out += fmt::format("{}: {}\r\n", name, value);
  out += "\r\n";
  out += reply.body;
  return out;
}

std::string event_stream_head() {
  std::string out = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                    "connection: close\r\n";
  append_guard_headers(out);
  return out + "\r\n";
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
  return fmt::format("{:x}\r\n{}\r\n", event.size(), event);
}

}  // namespace relsim::ui
