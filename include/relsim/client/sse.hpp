#pragma once
// Server-sent events (the WHATWG HTML "event stream" format, section 9.2),
// decoded incrementally from the de-chunked body of a text/event-stream
// response. The parser holds no I/O: the client feeds it whatever bytes a
// read returned, so an event, a line or a CRLF pair may be split anywhere.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace relsim {

struct SseEvent {
  std::string event;  // the `event:` field; empty means "message"
  std::string data;   // the `data:` lines joined with "\n"
  std::string id;
  bool operator==(const SseEvent&) const = default;
};

class SseParser {
 public:
  using Sink = std::function<void(const SseEvent&)>;

  // Decodes `bytes` and calls `sink` once per complete event, in order. A
  // sink that throws leaves the parser mid-stream; the caller then drops it.
  void feed(std::string_view bytes, const Sink& sink);
  // Events complete so far.
  std::size_t events() const { return events_; }
  // True when bytes of an event not yet dispatched are buffered.
  bool pending() const { return !line_.empty() || has_fields_; }
  // Lines longer than this throw std::length_error (a bound on memory).
  static constexpr std::size_t kMaxLine = 1 << 20;
  // So does an event whose data lines add up to more than this: short lines
  // with no blank line between them would otherwise pile up without end.
  static constexpr std::size_t kMaxEvent = 16 << 20;

 private:
  void line(std::string_view text, const Sink& sink);

  std::string line_;
  bool after_cr_ = false;  // the previous byte was CR: a following LF belongs to it
  bool started_ = false;   // a leading UTF-8 BOM has been checked for
  bool has_fields_ = false;
  std::string data_;  // the data lines so far, joined with "\n"
  bool has_data_ = false;
  SseEvent next_;
  std::size_t events_ = 0;
};

// Decodes a whole byte string; for tests and tools.
std::vector<SseEvent> parse_sse(std::string_view bytes);

}  // namespace relsim
