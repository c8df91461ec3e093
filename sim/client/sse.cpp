#include <stdexcept>

#include "relsim/client/sse.hpp"

namespace relsim {

void SseParser::feed(std::string_view bytes, const Sink& sink) {
  for (const char c : bytes) {
    if (c == '\n' && after_cr_) {  // the LF of a CRLF already ended the line
      after_cr_ = false;
      continue;
    }
    after_cr_ = false;
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      std::string text;
      text.swap(line_);
      line(text, sink);
      continue;
    }
    if (line_.size() >= kMaxLine) throw std::length_error("server-sent event line longer than 1 MiB");
    line_.push_back(c);
  }
}

void SseParser::line(std::string_view text, const Sink& sink) {
  if (!started_) {
    started_ = true;
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  }
  if (text.empty()) {  // a blank line dispatches the event
    if (!has_fields_) return;
    SseEvent ev = std::move(next_);
    ev.data = std::move(data_);
    next_ = {};
    data_.clear();
    has_data_ = false;
    has_fields_ = false;
    ++events_;
    sink(ev);
    return;
  }
  if (text.front() == ':') return;  // a comment, e.g. a keep-alive
  const std::size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "event") {
    next_.event = value;
  } else if (field == "data") {
    if (data_.size() + value.size() + 1 > kMaxEvent) throw std::length_error("server-sent event longer than 16 MiB");
    if (has_data_) data_ += '\n';
    data_ += value;
    has_data_ = true;
  } else if (field == "id") {
    next_.id = value;
  } else {
    return;  // `retry` and unknown fields are ignored, and do not start an event
  }
  has_fields_ = true;
}

std::vector<SseEvent> parse_sse(std::string_view bytes) {
  std::vector<SseEvent> out;
  SseParser parser;
  parser.feed(bytes, [&](const SseEvent& ev) { out.push_back(ev); });
  return out;
}

}  // namespace relsim
