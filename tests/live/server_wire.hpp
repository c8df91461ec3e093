#pragma once
// For the mock server's tests (server_test.cpp and server_*_test.cpp): a raw
// HTTP/1.1 client on top of support/raw_client.hpp that reads a response
// head, its chunks and its server-sent events byte for byte, the requests
// those tests send, and the checks of a healthy stream and of an API error
// body. Every socket read has a 10 s safety timeout (kLimit bounds every
// wait on the server), which only turns a server bug into a failure instead
// of a hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/json.hpp"
#include "relsim/server/server.hpp"
#include "support/raw_client.hpp"

namespace relsim::test::server_wire {

using relsim::Json;
using relsim::Server;
using relsim::ServerConfig;
using relsim::script_of;
using namespace std::chrono_literals;

inline constexpr auto kLimit = 10s;  // safety limit of every wait; never reached when the server is right

// --- a raw HTTP/1.1 client ------------------------------------------------------

using Client = relsim::test::RawClient;

struct Event {
  std::string name, data;
};

struct Response {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::vector<std::string> chunks;
  bool chunked = false;
  bool complete = false;  // the terminating chunk, or the whole content-length

  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [k, v] : headers)
      if (k == name) return v;
    return std::nullopt;
  }
  Json json() const { return Json::parse(body, nullptr, false); }
  std::vector<Event> events() const {
    std::vector<Event> out;
    for (const auto& c : chunks) {
      Event e;
      const auto nl = c.find('\n');
      if (c.rfind("event: ", 0) == 0 && nl != std::string::npos) e.name = c.substr(7, nl - 7);
      const auto data = c.find("data: ", nl);
      if (data != std::string::npos) e.data = c.substr(data + 6, c.size() - data - 6 - 2);
      out.push_back(e);
    }
    return out;
  }
};

inline bool read_head(Client& c, Response& r) {
  std::size_t end;
  while ((end = c.buf.find("\r\n\r\n")) == std::string::npos)
    if (!c.fill()) return false;
  const std::string head = c.buf.substr(0, end + 2);
  c.buf.erase(0, end + 4);
  std::size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);
  if (status_line.rfind("HTTP/1.1 ", 0) != 0) return false;
  r.status = std::atoi(status_line.substr(9, 3).c_str());
  for (std::size_t pos = line_end + 2; pos < head.size();) {
    const std::size_t eol = head.find("\r\n", pos);
    const std::string line = head.substr(pos, eol - pos);
    const std::size_t colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    r.headers.emplace_back(name, value);
    pos = eol + 2;
  }
  r.chunked = r.header("transfer-encoding") == "chunked";
  return true;
}

// Reads up to `most` more chunks; stops at the terminating chunk or the end of the connection.
inline void read_chunks(Client& c, Response& r, std::size_t most = static_cast<std::size_t>(-1)) {
  for (std::size_t got = 0; got < most && !r.complete;) {
    std::size_t eol;
    while ((eol = c.buf.find("\r\n")) == std::string::npos)
      if (!c.fill()) return;
    const std::size_t size = std::stoul(c.buf.substr(0, eol), nullptr, 16);
    while (c.buf.size() < eol + 2 + size + 2)
      if (!c.fill()) return;
    ASSERT_EQ(c.buf.substr(eol + 2 + size, 2), "\r\n");
    if (size == 0) {
      r.complete = true;
    } else {
      r.chunks.push_back(c.buf.substr(eol + 2, size));
      r.body += r.chunks.back();
      ++got;
    }
    c.buf.erase(0, eol + 2 + size + 2);
  }
}

inline Response read_response(Client& c) {
  Response r;
  if (!read_head(c, r)) return r;
  if (r.chunked) {
    read_chunks(c, r);
  } else if (const auto len = r.header("content-length")) {
    const std::size_t n = std::stoul(*len);
    while (c.buf.size() < n)
      if (!c.fill()) break;
    r.complete = c.buf.size() >= n;
    r.body = c.buf.substr(0, n);
    c.buf.erase(0, std::min(n, c.buf.size()));
  }
  return r;
}

inline const std::string kBody =
    R"({"model":"claude-test","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]})";

inline std::string request(std::string_view method, std::string_view target, std::string_view body = "",
                    std::string_view extra = "") {
  return fmt::format("{} {} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{}\r\n{}",
                     method, target, body.size(), extra, body);
}
inline std::string message(std::int64_t task, std::string_view extra = "", std::string_view body = kBody) {
  return request("POST", fmt::format("/t/{}/v1/messages", task), body, extra);
}

inline Response roundtrip(Client& c, const std::string& bytes) {
  c.send(bytes);
  return read_response(c);
}
inline Response one_request(int port, const std::string& bytes) {
  Client c(port);
  return roundtrip(c, bytes);
}

inline ServerConfig config_with(int threads = 2) {
  ServerConfig c;
  c.threads = threads;
  return c;
}

// The eight events of a healthy stream, for task `task`, request k.
inline void expect_healthy_stream(const Response& r, std::int64_t task, std::int64_t k) {
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_EQ(r.header("transfer-encoding"), "chunked");
  EXPECT_EQ(r.header("request-id"), fmt::format("req_relsim_{}_{}", task, k));
  EXPECT_TRUE(r.complete);
  const auto ev = r.events();
  const std::vector<std::string> names = {"message_start",       "content_block_start", "ping",
                                          "content_block_delta", "content_block_delta", "content_block_stop",
                                          "message_delta",       "message_stop"};
  ASSERT_EQ(ev.size(), names.size());
  std::string text;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i].name, names[i]);
    const Json d = Json::parse(ev[i].data, nullptr, false);
    ASSERT_FALSE(d.is_discarded()) << ev[i].data;
    EXPECT_EQ(d["type"], names[i]);
    if (ev[i].name == "content_block_delta") text += d["delta"]["text"].get<std::string>();
  }
  const Json start = Json::parse(ev[0].data);
  EXPECT_EQ(start["message"]["id"], fmt::format("msg_relsim_{}_{}", task, k));
  EXPECT_EQ(start["message"]["type"], "message");
  EXPECT_EQ(start["message"]["role"], "assistant");
  EXPECT_EQ(start["message"]["model"], "relsim-mock");
  EXPECT_EQ(start["message"]["content"], Json::array());
  EXPECT_TRUE(start["message"]["usage"]["input_tokens"].is_number_integer());
  EXPECT_EQ(Json::parse(ev[1].data)["content_block"], (Json{{"type", "text"}, {"text", ""}}));
  EXPECT_EQ(text, fmt::format("Hello from task {}.", task));
  const Json delta = Json::parse(ev[6].data);
  EXPECT_EQ(delta["delta"]["stop_reason"], "end_turn");
  EXPECT_TRUE(delta["delta"]["stop_sequence"].is_null());
  EXPECT_TRUE(delta["usage"]["output_tokens"].is_number_integer());
}

inline void expect_api_error(const Response& r, int status, std::string_view type) {
  EXPECT_EQ(r.status, status);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_TRUE(r.header("request-id").has_value());
  EXPECT_TRUE(r.complete);
  const Json j = r.json();
  ASSERT_TRUE(j.is_object()) << r.body;
  EXPECT_EQ(j["type"], "error");
  EXPECT_EQ(j["error"]["type"], type) << r.body;
  EXPECT_TRUE(j["error"]["message"].is_string());
}

}  // namespace relsim::test::server_wire
