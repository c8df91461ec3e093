#pragma once
// For the tests of the server's control endpoints and request log
// (control_test.cpp, control_log_test.cpp): requests to the mock server,
// each on its own connection read to the end (call, post_outcome), a server
// config with an optional log file, and a scripted plan of `tasks` tasks.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "relsim/core/json.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"
#include "support/journal.hpp"
#include "support/raw_client.hpp"

namespace relsim::test::control {

using relsim::Json;
using relsim::Server;
using relsim::ServerConfig;
using relsim::script_of;
using namespace std::chrono_literals;

inline constexpr auto kLogLimit = 10s;

using Client = relsim::test::RawClient;

struct LogReply {
  int status = 0;
  std::string head, body;
  bool has(std::string_view header_line) const { return head.find(header_line) != std::string::npos; }
  Json json() const { return Json::parse(body, nullptr, false); }
};

inline const std::string kLogBody =
    R"({"model":"m","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]})";

inline std::string log_request(std::string_view method, std::string_view target, std::string_view body = "",
                        std::string_view extra = "") {
  return fmt::format("{} {} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\n{}\r\n{}", method, target,
                     body.size(), extra, body);
}
inline std::string log_message(std::int64_t task, std::string_view extra = "", std::string_view body = kLogBody) {
  return log_request("POST", fmt::format("/t/{}/v1/messages", task), body, extra);
}

// One request on its own connection (connection: close), read to the end.
inline LogReply call(int port, std::string_view method, std::string_view target, std::string_view body = "",
              std::string extra = "") {
  Client c(port);
  c.send(log_request(method, target, body, extra + "connection: close\r\n"));
  while (c.fill()) {
  }
  LogReply r;
  const auto end = c.buf.find("\r\n\r\n");
  if (c.buf.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return r;
  r.status = std::stoi(c.buf.substr(9, 3));
  r.head = c.buf.substr(0, end + 2);
  r.body = c.buf.substr(end + 4);
  return r;
}
inline LogReply post_outcome(int port, std::int64_t task, std::string_view body) {
  return call(port, "POST", fmt::format("/control/tasks/{}/outcome", task), body);
}

using relsim::test::json_lines;

inline ServerConfig log_config(const std::string& log_path = "") {
  ServerConfig c;
  c.threads = 2;
  c.log_path = log_path;
  return c;
}

inline relsim::Plan plan_of(std::int64_t tasks) {
  relsim::Plan plan;
  plan.header = Json{{"relsim_plan", 1}, {"tasks", tasks}, {"source", "scripted"}, {"n", 2}, {"r", 1}};
  for (std::int64_t t = 0; t < tasks; ++t) plan.tasks.push_back({t, {std::nullopt, relsim::FaultKind::cut}});
  return plan;
}

}  // namespace relsim::test::control
