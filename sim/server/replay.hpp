#pragma once
// Internal to the server: answering a messages request as its script entry
// says (a healthy or broken stream, an HTTP error, a TCP fault), with the
// entry's pacing and holds. The bytes come from server_wire.cpp.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "relsim/core/json.hpp"
#include "relsim/formats/recording.hpp"
#include "server/connection.hpp"

namespace relsim::mock {

// How a reply ended, for the request's log entry.
struct Outcome {
  int status = 0;                     // 0: no status line sent
  std::string_view end = "complete";  // complete, closed, reset, client_gone, stopped
  bool keep = false;                  // the connection stays open for the next request
};

// `p` is the entry taken (found) for `req`; `keep` whether the request asked
// for keep-alive. In proxy mode an ok or in-stream entry (and slow_headers,
// once released) is forwarded to the upstream (upstream.hpp), which fills
// `upstream` with what the log says of the hop. The bytes are those of the
// request's dialect (p.dialect: the Messages API's or OpenAI's, in
// openai_wire.hpp), shaped as `asked` says. In replay mode (serve
// --replay) `recorded` is the recording the request matched: an ok or
// in-stream entry is answered with it (playback.hpp) instead.
net::awaitable<Outcome> replay(Connection& conn, std::int64_t task, const Popped& p, const Request& req, bool keep,
                               Json& upstream, const wire::Asked& asked = {},
                               std::shared_ptr<const RecordedExchange> recorded = nullptr);

}  // namespace relsim::mock
