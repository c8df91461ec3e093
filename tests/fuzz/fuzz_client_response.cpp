// libFuzzer target: what the live client makes of the bytes a server sends
// back (client.hpp, sim/client.cpp): Beast's response parser, as the client
// configures it (buffer_body, no body limit), fed in reads of 1 to 64 bytes;
// then, for an error status, the SDKs' retry decision and wait from the
// status and the x-should-retry, retry-after-ms and retry-after headers; for
// a 200, the body through the SSE decoder into MessageStream, in the
// dialect the first byte's low bit picks (even: the Messages API's named
// events, odd: the OpenAI dialect's data-only chat.completion chunks).
//
// The expected ends of a bad response are the client's own: a Beast parse
// error (the client raises ApiConnectionError or StreamError from it), a
// ClientError from the stream, the SSE line bound (std::length_error). Any
// other exception escaping, a crash, a sanitizer report, or a retry wait
// that is not a finite number >= 0 (a server's retry-after only inside
// (0, 60) s) is a bug.
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without it

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "relsim/client/client.hpp"
#include "relsim/client/sse.hpp"
#include "relsim/client/timing.hpp"

namespace http = boost::beast::http;

namespace {

struct Parsed {
  bool header_done = false;
  int status = 0;
  relsim::RetryHeaders headers;
  std::vector<std::string> body;  // as the reads delivered it
  bool complete = false;          // the parser reached the end of the message
};

// Beast's read loop in miniature: a contiguous buffer of unparsed bytes
// (the client's flat_buffer), a 4 KiB body buffer, need_more asks for the
// next read and the end of the input is the peer closing.
Parsed parse(std::string_view input, std::uint32_t cuts) {
  Parsed out;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  std::string pending;
  char buf[4096];
  boost::beast::error_code ec;
  std::size_t at = 0;
  bool need_read = true;
  for (int guard = 0; guard < 1'000'000; ++guard) {
    if (need_read) {
      if (at == input.size()) {
        // As Beast's read does at the peer's close: the end of the message
        // if the parser has seen some of it, else end_of_stream (put_eof
        // asserts got_some()).
        if (parser.got_some()) parser.put_eof(ec);
        else ec = http::error::end_of_stream;
        break;
      }
      cuts = cuts * 1103515245u + 12345u;
      const std::size_t n = std::min<std::size_t>(1 + (cuts >> 16) % 64, input.size() - at);
      pending.append(input.substr(at, n));
      at += n;
      need_read = false;
    }
    if (parser.is_header_done()) {
      parser.get().body().data = buf;
      parser.get().body().size = sizeof buf;
    }
    const std::size_t used = parser.put(boost::asio::buffer(pending), ec);
    pending.erase(0, used);
    if (parser.is_header_done()) {
      const std::size_t got = sizeof buf - parser.get().body().size;
      if (got > 0) out.body.emplace_back(buf, got);
      parser.get().body().data = nullptr;
      parser.get().body().size = 0;
    }
    if (ec == http::error::need_more) {
      ec = {};
      need_read = true;
      continue;
    }
    if (ec == http::error::need_buffer) {
      ec = {};
      if (pending.empty()) need_read = true;
      continue;
    }
    if (ec || parser.is_done()) break;
    if (used == 0) need_read = true;
  }
  if (!parser.is_header_done()) return out;
  out.header_done = true;
  const auto& head = parser.get();
  out.status = static_cast<int>(head.result_int());
  const auto header = [&](std::string_view name) -> std::optional<std::string> {
    const auto it = head.find(boost::beast::string_view(name.data(), name.size()));
    if (it == head.end()) return std::nullopt;
    return std::string(it->value());
  };
  out.headers = {header("x-should-retry"), header("retry-after-ms"), header("retry-after")};
  out.complete = !ec && parser.is_done();
  return out;
}

void check_error_status(const Parsed& r) {
  const relsim::FaultKind kind = relsim::fault_kind_of_status(r.status);
  const bool retry = relsim::should_retry_status(r.status, r.headers.should_retry);
  (void)kind;
  (void)retry;
  if (const auto s = relsim::server_retry_after(r.headers); s && !(*s > 0.0 && *s < 60.0)) std::abort();
  const relsim::ClientTiming timing;
  for (const int k : {0, 1, 5, 100})
    for (const double u : {0.0, 0.5, 0.999}) {
      const double wait = relsim::http_retry_wait(r.headers, k, u, timing);
      if (!(std::isfinite(wait) && wait >= 0.0)) std::abort();
    }
  std::string body;
  for (const auto& piece : r.body) body += piece;
  const std::string what = fmt::format("HTTP {}: {}", r.status, body.substr(0, 300));
  (void)what;
}

void check_stream(const Parsed& r, relsim::Dialect dialect) {
  relsim::SseParser sse;
  relsim::MessageStream message(dialect);
  try {
    for (const auto& piece : r.body)
      sse.feed(piece, [&](const relsim::SseEvent& event) { message.on_event(event); });
    if (r.complete) message.on_end();
  } catch (const relsim::ClientError&) {
  } catch (const std::length_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint32_t cuts = data[0] * 2654435761u + 1;
  const Parsed r = parse(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), cuts);
  if (!r.header_done) return 0;
  if (r.status == 200) check_stream(r, data[0] & 1 ? relsim::Dialect::openai : relsim::Dialect::anthropic);
  else check_error_status(r);
  return 0;
}
