// libFuzzer target: the client's server-sent-events decoder (sse.hpp) and
// the Messages stream semantics on top of it (client.hpp, MessageStream).
//
// The first byte seeds how the rest is cut into reads, so an event, a line
// or a CRLF pair is split anywhere, as a socket may split it; the events
// must not depend on the cuts (they are checked against parse_sse of the
// whole). ClientError (malformed data, an error event, no message_stop) is
// the client's answer to a bad stream, and std::length_error the documented
// bound on a line; anything else escaping, a crash or a sanitizer report is
// a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "relsim/client/client.hpp"
#include "relsim/client/sse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::uint32_t cuts = data[0] * 2654435761u + 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  std::vector<relsim::SseEvent> whole;
  try {
    whole = relsim::parse_sse(bytes);
  } catch (const std::length_error&) {
    return 0;
  }

  relsim::SseParser parser;
  std::vector<relsim::SseEvent> pieces;
  relsim::MessageStream message;
  bool failed = false;
  for (std::size_t at = 0; at < bytes.size();) {
    cuts = cuts * 1103515245u + 12345u;  // a read of 1 to 16 bytes
    const std::size_t n = std::min<std::size_t>(1 + (cuts >> 16) % 16, bytes.size() - at);
    parser.feed(bytes.substr(at, n), [&](const relsim::SseEvent& ev) {
      pieces.push_back(ev);
      if (failed) return;
      try {
        message.on_event(ev);
      } catch (const relsim::ClientError&) {
        failed = true;  // the client drops the stream here
      }
    });
    at += n;
  }
  if (pieces != whole || parser.events() != whole.size()) std::abort();
  if (!failed) {
    try {
      message.on_end();
    } catch (const relsim::ClientError&) {
    }
  }
  return 0;
}
