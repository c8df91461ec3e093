#pragma once
// What the readers of `relsim fit` share (records.hpp): reading a file line by
// line in large blocks, the outcome words, times, the shape of a JSON line
// (to tell a mixed file from a malformed one), and the last checks every
// reader makes. Internal to the fit layer.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/json.hpp"
#include "relsim/formats/recording.hpp"
#include "relsim/fit/records.hpp"

namespace relsim::fit {

// Lines of a file, read in blocks of a few MiB and split by hand: a CSV of
// 10^7 rows is streamed, never held. A line is valid until the next call.
// A trailing '\r' is dropped, as is a UTF-8 byte order mark at the start.
class LineReader {
 public:
  explicit LineReader(const std::string& path);  // throws InputError when it cannot open
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  bool next(std::string_view& line);  // false at the end
  std::int64_t number() const { return number_; }  // 1-based number of the last line returned

 private:
  bool fill();  // reads more; false at the end of the file
  std::FILE* file_ = nullptr;
  std::string path_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::int64_t number_ = 0;
};

bool blank(std::string_view line);
std::string_view trim(std::string_view text);

// Calls on_line(line, number) for each non-blank line of a text held in
// memory (numbers count from 1, blank lines included), until it returns false.
template <class OnLine>
void for_each_line(std::string_view text, OnLine&& on_line) {
  std::int64_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!blank(line) && !on_line(line, number)) return;
  }
}

// Sets r.bad and r.kind from an outcome: "ok" or a 2xx HTTP status is good; a
// fault kind, another HTTP status ("http_<status>") or an error class is bad.
// False when `word` is none of these (empty, or not a word).
bool set_outcome(std::string_view word, Record& r);
inline constexpr const char* kOutcomeChoices =
    "ok, a fault kind such as cut or http_529, an error class, or an HTTP status such as 200 or 429";

// Seconds since the epoch as a number ("1714567890.25"), or an RFC 3339 time
// ("2024-05-01T12:00:00.25Z", "...+02:00"), in ns. nullopt when neither.
std::optional<std::int64_t> parse_time_ns(std::string_view text);
std::optional<std::int64_t> seconds_to_ns(double seconds);

// The shape of one JSON line, for auto-detection and for naming a line of
// another format in a file ("mixed formats").
enum class Shape { relsim_log, relsim_request, plan, plan_task, recording, otlp, litellm, table, other };
Shape shape_of(const Json& j);
std::string_view shape_name(Shape shape);

// Parses one line as JSON; InputError "FILE:LINE: not JSON" when it is not.
Json parse_json_line(std::string_view line, const std::string& where, std::int64_t number);
// InputError "FILE:LINE: a SHAPE line in a FORMAT file: mixed formats ...".
[[noreturn]] void throw_mixed(const std::string& where, std::int64_t number, Shape found, std::string_view format);
// After a strict reader refused `text`: the first line of another known
// format, if any, is reported as mixed formats instead of the reader's error.
void check_mixed_lines(std::string_view text, const std::string& where, std::string_view format,
                       std::initializer_list<Shape> own);

void add_skip(ReadStats& stats, const std::string& reason, std::int64_t n = 1);
// Throws "FILE: no usable record" (with what was skipped) when nothing was delivered.
void require_records(const ReadStats& stats, const std::string& where);
// Held records (formats that are not in order in the file): sorted by task,
// then order (stable, so file order breaks ties), and delivered.
void deliver_sorted(std::vector<Record>& records, ReadStats& stats, const RecordSink& sink);

// The readers, one format per file. `text` is the whole file where the format is held in memory.
ReadStats read_relsim(const std::string& text, const std::string& where, const RecordSink& sink);
ReadStats read_csv(const std::string& path, const RecordSink& sink);
ReadStats read_jsonl(const std::string& path, const RecordSink& sink);
ReadStats read_otlp(const std::string& text, const std::string& where, const RecordSink& sink);
ReadStats read_litellm(const std::string& text, const std::string& where, const RecordSink& sink);
// relsim proxy's recordings, read from a file or a directory (read_recording.cpp).
ReadStats read_recordings_of(const std::vector<RecordedExchange>& exchanges, const std::string& where,
                             const RecordSink& sink);

}  // namespace relsim::fit
