#pragma once
// Internal to the server: relsim proxy's hop (upstream.cpp), the request
// and answer as each side gets them: the request framed for the upstream,
// the answer's head framed for the client, and the request as a recording
// keeps it (recorder.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/beast/core/string.hpp>

#include "relsim/server/server.hpp"
#include "server/connection.hpp"
#include "relsim/formats/recorder.hpp"

namespace relsim::mock {

inline std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

// The API's own target of a request: its path without the /t/{task} prefix,
// empty segments dropped, and its query ("/t/3/v1/messages?beta=x" ->
// "/v1/messages?beta=x").
std::string api_target(const Request& req);

// The request as the upstream gets it, framed here (one string, one
// write): its own path (base_path + the API's target), the client's headers
// but the hop-by-hop ones, the task header and accept-encoding, the
// upstream's host and the body's length; HTTP/1.1's keep-alive, so the
// connection can serve the client connection's next request. The answer is
// asked for uncompressed (accept-encoding: identity): the proxy breaks it
// event by event, or whole, and cannot in gzip's or brotli's bytes.
std::string upstream_request(const Request& req, const Upstream& up, const std::string& task_header,
                             std::int64_t task);

// The head the client gets: the upstream's status and headers, re-framed
// chunked, or with `length` as its content-length when given; an answer
// that has no body (to HEAD, a 204 or a 304) keeps its content-length and
// gets no framing.
std::string client_head(const http::response_header<>& res, bool keep, bool bodiless,
                        std::optional<std::size_t> length = std::nullopt);

// The same from a status, its reason phrase ("": the standard one) and
// header fields: a replay's recorded answer (playback.cpp).
std::string framed_head(int status, std::string_view reason,
                        const std::vector<std::pair<std::string, std::string>>& fields, bool keep, bool bodiless,
                        std::optional<std::size_t> length = std::nullopt);

// A messages request as its recording begins: the API's path, the body,
// and the headers but the credentials and those the recorder leaves out.
RecordedExchange recording_of(const Request& req, std::int64_t task, const Popped& p, const Recorder& recorder);

}  // namespace relsim::mock
