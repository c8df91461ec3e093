#pragma once
// For the load test (load_test.cpp): the bytes of one streaming request to
// the mock server, a response as the storm client reads it (status, headers,
// chunks), and the check that it is a whole healthy stream for its task.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/json.hpp"

namespace relsim::test::storm {

inline std::string request_body(std::int64_t task) {
  return fmt::format(
      R"({{"model":"relsim-mock","max_tokens":64,"stream":true,"messages":[{{"role":"user","content":"load task {}"}}]}})",
      task);
}
inline std::string request_head(std::int64_t task, std::size_t body_bytes, bool close) {
  return fmt::format(
      "POST /t/{}/v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
      "content-length: {}\r\n{}\r\n",
      task, body_bytes, close ? "connection: close\r\n" : "");
}
inline std::string request(std::int64_t task, bool close = false) {
  const std::string body = request_body(task);
  return request_head(task, body.size(), close) + body;
}

struct Response {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::vector<std::string> chunks;
  bool complete = false;  // the terminating zero-length chunk arrived

  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [k, v] : headers)
      if (k == name) return v;
    return std::nullopt;
  }
};

// A healthy stream of task `task`, request k: chunked, the eight events in
// order, naming the task, ending in message_stop and the zero-length chunk.
// Returns what is wrong, or "".
inline std::string check_stream(const Response& r, std::int64_t task, std::int64_t k) {
  if (r.status != 200) return fmt::format("status {}", r.status);
  if (r.header("content-type") != "text/event-stream") return "content-type is not text/event-stream";
  if (r.header("transfer-encoding") != "chunked") return "not chunked";
  if (r.header("request-id") != fmt::format("req_relsim_{}_{}", task, k))
    return fmt::format("request-id {}", r.header("request-id").value_or("(none)"));
  if (!r.complete) return fmt::format("no terminating chunk after {} chunks", r.chunks.size());
  static const std::array<std::string_view, 8> names = {"message_start",       "content_block_start", "ping",
                                                        "content_block_delta", "content_block_delta", "content_block_stop",
                                                        "message_delta",       "message_stop"};
  if (r.chunks.size() != names.size()) return fmt::format("{} events, not 8", r.chunks.size());
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& c = r.chunks[i];
    const std::string prefix = fmt::format("event: {}\ndata: ", names[i]);
    if (c.rfind(prefix, 0) != 0 || c.size() < prefix.size() + 2 || c.substr(c.size() - 2) != "\n\n")
      return fmt::format("event {} is not {}", i, names[i]);
    const Json d = Json::parse(c.substr(prefix.size(), c.size() - prefix.size() - 2), nullptr, false);
    if (!d.is_object() || d.value("type", "") != names[i]) return fmt::format("event {} data", i);
    if (i == 0 && d.value("message", Json::object()).value("id", "") != fmt::format("msg_relsim_{}_{}", task, k))
      return "message_start names another message";
    if (names[i] == "content_block_delta") text += d.value("delta", Json::object()).value("text", "");
  }
  if (text != fmt::format("Hello from task {}.", task)) return fmt::format("text '{}'", text);
  return "";
}

}  // namespace relsim::test::storm
