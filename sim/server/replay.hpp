#pragma once
// Internal to the server: answering a messages request as its script entry
// says (a healthy or broken stream, an HTTP error, a TCP fault), with the
// entry's pacing and holds. The bytes come from server_wire.cpp.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/connection.hpp"

namespace relsim::mock {

// How a reply ended, for the request's log entry.
struct Outcome {
  int status = 0;                     // 0: no status line sent
  std::string_view end = "complete";  // complete, closed, reset, client_gone, stopped
  bool keep = false;                  // the connection stays open for the next request
};

// `p` is the entry taken (found); `body_bytes` the request body's size (the
// stream's input_tokens); `keep` whether the request asked for keep-alive.
net::awaitable<Outcome> replay(Connection& conn, std::int64_t task, const Popped& p, std::size_t body_bytes,
                               bool keep);

}  // namespace relsim::mock
