#pragma once
// For the proxy's tests (proxy_test.cpp, content_fault_wire_test.cpp): a
// one-task plan as relsim plan writes it, a mock upstream with the proxy in
// front of it, and the body of a chunked response.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"
#include "server_wire.hpp"

namespace relsim::test::proxy_pair {

using relsim::test::server_wire::config_with;
using relsim::test::server_wire::Response;

// A one-task plan of `entries`, as relsim plan writes them.
inline Plan one_task(const std::vector<std::string>& entries, std::int64_t tasks = 1) {
  std::string text = fmt::format(R"({{"relsim_plan": 1, "tasks": {}, "source": "scripted", "n": 1, "b": 0, "g": 0}})",
                                 tasks) + "\n";
  for (std::int64_t t = 0; t < tasks; ++t) {
    std::string list;
    for (const auto& e : entries) list += (list.empty() ? "\"" : ", \"") + e + "\"";
    text += fmt::format(R"({{"task": {}, "requests": [{}]}})", t, list) + "\n";
  }
  return parse_plan(text, "plan.jsonl");
}

// The upstream: a mock whose task 0 answers `oks` healthy streams, and the
// proxy in front of it (base path /t/0, so every forwarded request is the
// upstream's task 0).
struct Pair {
  Server upstream;
  Server proxy;
  Pair(const Plan& plan, std::int64_t oks = 64, ServerConfig proxy_config = config_with())
      : upstream(config_with(), one_task(std::vector<std::string>(static_cast<std::size_t>(oks), "ok"))),
        proxy(with_upstream(std::move(proxy_config), upstream.port()), plan) {}
  static ServerConfig with_upstream(ServerConfig c, int port) {
    c.upstream = parse_upstream(fmt::format("http://127.0.0.1:{}/t/0", port));
    return c;
  }
};

inline std::string body_of(const Response& r) {
  std::string out;
  for (const auto& c : r.chunks) out += c;
  return out;
}

}  // namespace relsim::test::proxy_pair
