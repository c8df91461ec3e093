#pragma once
// The mock server's request journal as tests read it (docs/wire.md, the
// request log): JSON Lines, and GET /control/log over a raw loopback
// connection. Header-only.
#include <sstream>
#include <string>
#include <vector>

#include "relsim/core/json.hpp"
#include "support/raw_client.hpp"

namespace relsim::test {

// Every line of a JSON Lines text, parsed.
inline std::vector<Json> json_lines(const std::string& text) {
  std::vector<Json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
  return out;
}

// GET /control/log on 127.0.0.1:port: its request lines (those with a
// status; the header line has none), or none when no reply came.
inline std::vector<Json> journal_requests(int port) {
  RawClient c(port);
  c.send("GET /control/log HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
  c.drain();
  const auto head_end = c.buf.find("\r\n\r\n");
  if (head_end == std::string::npos) return {};
  std::vector<Json> requests;
  for (Json& line : json_lines(c.buf.substr(head_end + 4)))
    if (line.contains("status")) requests.push_back(std::move(line));
  return requests;
}

}  // namespace relsim::test
