#include "relsim/core/http_text.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

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

}  // namespace relsim::http_text
