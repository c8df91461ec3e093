#pragma once
// Internal to the server: relsim proxy's hop to the upstream (docs/proxy.md).
// Each client connection keeps its own upstream connection between its
// requests while both sides keep alive (an answer broken by a fault, or one
// the upstream closes, ends it); a kept connection the upstream closed while
// idle is replaced once, before anything reaches the client. The request's
// headers are passed on but the hop-by-hop ones, the answer streamed back to
// the client as it arrives (re-framed as chunked, its body bytes unchanged),
// and broken on the way as an in-stream fault says (stream_fault.hpp).
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "relsim/core/json.hpp"
#include "server/connection.hpp"
#include "server/replay.hpp"

namespace relsim::mock {

namespace ssl = boost::asio::ssl;

// Forwards `req` to config().upstream as task `task`'s request p.index,
// breaking the answer as p.entry says when it is an in-stream fault.
// `upstream` gets what the log says of the hop: {"status", "headers_ms",
// "bytes", "reused"} and "error" when it failed. An upstream that cannot be reached,
// or fails or times out before its headers, is answered 502 with a JSON
// error body.
net::awaitable<Outcome> forward(Connection& conn, const Request& req, std::int64_t task, const Popped& p, bool keep,
                                Json& upstream);
// Another endpoint of the API than the messages one (GET /v1/models, POST
// /v1/messages/count_tokens, ...): forwarded as it is, the answer passed
// back unchanged, taking no entry and no fault, and not in the request log.
net::awaitable<Outcome> pass_through(Connection& conn, const Request& req, std::int64_t task, bool keep);

}  // namespace relsim::mock
