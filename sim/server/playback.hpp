#pragma once
// Internal to the server: relsim serve --replay's answer (docs/replay.md),
// the recorded exchange a request matched (recording_book.hpp) sent as it
// came from the upstream: its status and headers (re-framed, as the proxy
// frames them), then each event of a stream, or the body, at the time it
// arrived after the request times the replay's pace (0: at once). An
// in-stream fault of the request's entry breaks the recorded answer as the
// proxy breaks a live one: StreamFault over the events, break_whole over a
// 200 JSON body. A recording of an upstream that failed before its headers
// is answered 502, as the proxy answered it; one that broke off midway
// breaks off at the same byte.
#include <cstdint>
#include <memory>

#include "relsim/formats/recording.hpp"
#include "server/connection.hpp"
#include "server/replay.hpp"

namespace relsim::mock {

net::awaitable<Outcome> play(Connection& conn, std::shared_ptr<const RecordedExchange> recorded, std::int64_t task,
                             const Popped& p, bool keep);

}  // namespace relsim::mock
