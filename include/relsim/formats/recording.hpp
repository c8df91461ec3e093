#pragma once
// The recording format, version 1 (docs/replay.md): one exchange of
// relsim proxy --record per JSON line. The request as the client sent it
// (less the headers the recorder leaves out) and the upstream's answer as
// it came: status, headers, and for an event stream each event with the
// time its last byte arrived, in ms since the hop began.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relsim/core/dialect.hpp"

namespace relsim {

inline constexpr int kRecordingVersion = 1;
// The latest time a recording may hold (a day, in ms): a reader refuses more.
inline constexpr double kMaxRecordedMs = 86'400'000.0;

// One exchange, filled as the hop goes.
class RecordedExchange {
 public:
  Dialect dialect = Dialect::anthropic;
  std::int64_t task = 0, index = 0;
  std::string entry;  // the script entry the request took (ok, or the fault that broke the answer)
  std::string method, path;  // the API's own path and query (/v1/messages)
  std::vector<std::pair<std::string, std::string>> request_headers;  // lower-case names, credentials left out
  std::string request_body;
  std::optional<int> status;  // none: the upstream failed before its headers
  std::vector<std::pair<std::string, std::string>> response_headers;
  double headers_ms = 0.0;
  std::string error;  // how the hop failed, when it did: before the headers, or the upstream broke off after them

  // Body bytes that arrived `ms` after the hop began. An event stream's
  // bytes are cut into events at their blank lines.
  void add_body(std::string_view bytes, double ms);
  // The hop is over: `complete` when the upstream's answer was read to its
  // end. The first call counts.
  void finish(bool complete, double ms);
  bool event_stream() const { return events_mode_; }
  void set_event_stream(bool yes) { events_mode_ = yes; }

  // The line (without its newline).
  std::string line() const;

  // What a reader (serve --replay) takes: the events (arrival ms, bytes with
  // the blank line) of an event stream, the body of any other answer,
  // whether it was read to its end, and when it ended.
  const std::vector<std::pair<double, std::string>>& events() const { return events_; }
  const std::string& body() const { return body_; }
  bool complete() const { return complete_; }
  // The proxy stopped reading before the upstream's answer ended and the
  // upstream did not break off (no error): a fault of the plan cut it, or
  // the client went away. Not the upstream's whole answer.
  bool stopped_early() const { return status.has_value() && !complete_ && error.empty(); }
  double end_ms() const { return end_ms_; }
  bool lossy = false;  // read from a line marked lossy: bytes that were not UTF-8 were replaced
  std::string source;  // read from a file: "FILE:LINE"; "" for one being recorded

  // One line of a recording file. Throws InputError "WHERE: reason" (WHERE
  // names the file and line) for a line that is not JSON (a truncated last
  // line), of another version, or without a field the format requires.
  static RecordedExchange from_line(std::string_view text, std::string_view where);

 private:
  bool events_mode_ = false;
  std::vector<std::pair<double, std::string>> events_;  // arrival ms, the event's bytes with its blank line
  std::string pending_;                                // an event not yet ended
  double pending_ms_ = 0.0;
  std::string body_;  // an answer that is not an event stream
  bool complete_ = false;
  bool finished_ = false;  // finish() was called: later calls change nothing
  double end_ms_ = 0.0;
};

// Every exchange of a recording file's text, in order; `name` (the file's)
// and the line number go into an error.
std::vector<RecordedExchange> parse_recordings(std::string_view text, std::string_view name);
// Every relsim-*.jsonl or other *.jsonl file of `dir`, in name order. Throws
// InputError for a directory that cannot be read or, unless `may_be_empty`,
// holds no recording; a directory that does not exist is empty.
std::vector<RecordedExchange> read_recordings(const std::string& dir, bool may_be_empty = false);

}  // namespace relsim
