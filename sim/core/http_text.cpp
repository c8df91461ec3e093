#include "relsim/core/http_text.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace relsim::http_text {

std::string json_text(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string chunk(std::string_view data) { return fmt::format("{:x}\r\n{}\r\n", data.size(), data); }

void append_chunk(std::string& out, std::string_view data) {
  fmt::format_to(std::back_inserter(out), "{:x}\r\n{}\r\n", data.size(), data);
}

std::string_view reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 529: return "Overloaded";
    default: return "Unknown";
  }
}

std::string head(int status, const Headers& headers) { return head(status, reason(status), headers); }

std::string head(int status, std::string_view reason_phrase, const Headers& headers) {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\n", status, reason_phrase);
  for (const auto& [k, v] : headers) out += fmt::format("{}: {}\r\n", k, v);
  return out + "\r\n";
}

std::size_t sse_event_end(std::string_view text, std::size_t from) {
  const std::size_t lf = text.find("\n\n", from);
  const std::size_t crlf = text.find("\r\n\r\n", from);
  if (lf == std::string_view::npos && crlf == std::string_view::npos) return std::string_view::npos;
  if (crlf == std::string_view::npos || (lf != std::string_view::npos && lf < crlf)) return lf + 2;
  return crlf + 4;
}

std::string sse_event(std::string_view name, std::string_view data) {
  return fmt::format("event: {}\ndata: {}\n\n", name, data);
}

std::string data_event(std::string_view data) { return fmt::format("data: {}\n\n", data); }

namespace {

// The values of an event's `NAME:` lines, in order (one leading space
// dropped, as SSE says).
std::vector<std::string_view> field_values(std::string_view event, std::string_view name) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; at < event.size();) {
    const std::size_t nl = std::min(event.find('\n', at), event.size());
    std::string_view line = event.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > name.size() && line.substr(0, name.size()) == name && line[name.size()] == ':') {
      line.remove_prefix(name.size() + 1);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      out.push_back(line);
    }
    at = nl + 1;
  }
  return out;
}

}  // namespace

std::string sse_data(std::string_view event) {
  std::string out;
  bool first = true;
  for (const std::string_view v : field_values(event, "data")) {
    if (!std::exchange(first, false)) out += '\n';
    out += v;
  }
  return out;
}

std::string_view sse_event_name(std::string_view event) {
  const std::vector<std::string_view> names = field_values(event, "event");
  return names.empty() ? std::string_view() : names.front();
}

}  // namespace relsim::http_text
