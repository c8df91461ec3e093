// What the readers share (read_common.hpp): outcome words, times, the shapes
// of JSON lines, and the checks every reader ends with.
#include "fit/read_common.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim::fit {

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// Letters, digits and the punctuation of error classes ("anthropic.RateLimitError").
bool word_char(char c) {
  return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '-' ||
         c == ':' || c == '/';
}

bool is_ok(std::string_view word) {
  return word.size() == 2 && (word[0] == 'o' || word[0] == 'O') && (word[1] == 'k' || word[1] == 'K');
}

// Digits of text[at, at+n) as a number; -1 when they are not all digits.
int digits_at(std::string_view text, std::size_t at, std::size_t n) {
  if (at + n > text.size()) return -1;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (!digit(text[i])) return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

// Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

int days_in_month(int y, int m) {
  static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : days[m - 1];
}

// "2024-05-01T12:00:00[.fraction](Z|+HH:MM|-HH:MM)"; also 't' or ' ' between date and time.
std::optional<std::int64_t> parse_rfc3339(std::string_view t) {
  const int y = digits_at(t, 0, 4), mo = digits_at(t, 5, 2), d = digits_at(t, 8, 2);
  const int h = digits_at(t, 11, 2), mi = digits_at(t, 14, 2), s = digits_at(t, 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60) return {};
  if (d > days_in_month(y, mo) || t[4] != '-' || t[7] != '-' || t[13] != ':' || t[16] != ':') return {};
  if (t[10] != 'T' && t[10] != 't' && t[10] != ' ') return {};
  std::size_t at = 19;
  std::int64_t frac = 0;
  if (at < t.size() && t[at] == '.') {
    std::size_t n = 0;
    for (++at; at < t.size() && digit(t[at]); ++at, ++n)
      if (n < 9) frac = frac * 10 + (t[at] - '0');
    if (n == 0) return {};
    for (; n < 9; ++n) frac *= 10;
  }
  std::int64_t offset = 0;
  if (at + 1 == t.size() && (t[at] == 'Z' || t[at] == 'z')) {
    offset = 0;
  } else if (at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && t[at + 3] == ':') {
    const int oh = digits_at(t, at + 1, 2), om = digits_at(t, at + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return {};
    offset = (t[at] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
  } else {
    return {};
  }
  const std::int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset;
  if (secs < -9'000'000'000 || secs > 9'000'000'000) return {};  // ns since 1970 must fit in 64 bits
  return secs * 1'000'000'000 + frac;
}

// "[-]digits[.digits]" exactly, without the rounding of a double.
std::optional<std::int64_t> parse_decimal_seconds(std::string_view t) {
  const bool negative = !t.empty() && t[0] == '-';
  if (negative) t.remove_prefix(1);
  const auto dot = t.find('.');
  const std::string_view whole = t.substr(0, dot);
  if (whole.empty() || whole.size() > 10) return {};
  std::int64_t secs = 0, frac = 0;
  for (char c : whole) {
    if (!digit(c)) return {};
    secs = secs * 10 + (c - '0');
  }
  if (dot != std::string_view::npos) {
    const std::string_view f = t.substr(dot + 1);
    if (f.empty()) return {};
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (!digit(f[i])) return {};
      if (i < 9) frac = frac * 10 + (f[i] - '0');
    }
    for (std::size_t i = f.size(); i < 9; ++i) frac *= 10;
  }
  if (secs > 9'000'000'000) return {};
  const std::int64_t ns = secs * 1'000'000'000 + frac;
  return negative ? -ns : ns;
}

}  // namespace

bool set_outcome(std::string_view word, Record& r) {
  if (is_ok(word)) {
    r.bad = false;
    r.kind.clear();
    return true;
  }
  if (word.empty() || word.size() > 200) return false;
  const std::string_view code = word.starts_with("http_") ? word.substr(5) : word;
  if (code.size() == 3 && digits_at(code, 0, 3) >= 0) {
    const int status = digits_at(code, 0, 3);
    if (status < 100 || status > 599) return false;
    r.bad = status / 100 != 2;
    r.kind.clear();
    if (r.bad) r.kind.append("http_").append(code);
    return true;
  }
  if (!std::all_of(word.begin(), word.end(), word_char)) return false;
  r.bad = true;
  r.kind = fault_kind_of(word);
  return true;
}

std::optional<std::int64_t> seconds_to_ns(double seconds) {
  if (!std::isfinite(seconds) || std::fabs(seconds) > 9.0e9) return {};
  return std::llround(seconds * 1e9);
}

std::optional<std::int64_t> parse_time_ns(std::string_view text) {
  if (text.size() >= 20 && text[4] == '-') return parse_rfc3339(text);
  if (auto exact = parse_decimal_seconds(text)) return exact;
  if (const auto v = parse_number<double>(text)) return seconds_to_ns(*v);
  return {};
}

Shape shape_of(const Json& j) {
  if (!j.is_object()) return Shape::other;
  if (j.contains("relsim_log")) return Shape::relsim_log;
  if (j.contains("relsim_plan")) return Shape::plan;
  if (j.contains("relsim_recording")) return Shape::recording;
  if (j.contains("resourceSpans")) return Shape::otlp;
  if (j.contains("trace_id") && j.contains("status") && j.contains("startTime")) return Shape::litellm;
  if (!j.contains("task")) return Shape::other;
  if (j.contains("requests")) return Shape::plan_task;
  if (j.contains("entry") || (j.contains("outcome") && j.contains("received_ms") && !j.contains("request") &&
                              !j.contains("time")))
    return Shape::relsim_request;
  if (j.contains("outcome")) return Shape::table;
  return Shape::other;
}

std::string_view shape_name(Shape shape) {
  switch (shape) {
    case Shape::relsim_log: return "a relsim request log header";
    case Shape::relsim_request: return "a relsim request log line";
    case Shape::plan: return "a relsim plan header";
    case Shape::plan_task: return "a relsim plan task";
    case Shape::recording: return "a relsim recording";
    case Shape::otlp: return "an OTLP/JSON traces";
    case Shape::litellm: return "a LiteLLM logging payload";
    case Shape::table: return "a task/outcome JSON row";
    case Shape::other: return "an unknown JSON";
  }
  return "?";
}

Json parse_json_line(std::string_view line, const std::string& where, std::int64_t number) {
  try {
    return Json::parse(line.begin(), line.end());
  } catch (const Json::exception&) {  // parse_error, and out_of_range for a number such as 1e400
    throw InputError(fmt::format("{}:{}: not JSON (truncated or not JSON)", where, number));
  }
}

void throw_mixed(const std::string& where, std::int64_t number, Shape found, std::string_view format) {
  throw InputError(fmt::format("{}:{}: {} line in a {} file: mixed formats (one format per file: relsim, csv, "
                               "jsonl, otlp or litellm)",
                               where, number, shape_name(found), format));
}

void check_mixed_lines(std::string_view text, const std::string& where, std::string_view format,
                       std::initializer_list<Shape> own) {
  for_each_line(text, [&](std::string_view line, std::int64_t number) {
    const Json j = Json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded()) return true;
    const Shape shape = shape_of(j);
    if (shape != Shape::other && std::find(own.begin(), own.end(), shape) == own.end())
      throw_mixed(where, number, shape, format);
    return true;
  });
}

void add_skip(ReadStats& stats, const std::string& reason, std::int64_t n) {
  if (n > 0) stats.skipped[reason] += n;
}

void require_records(const ReadStats& stats, const std::string& where) {
  if (stats.records > 0) return;
  std::string skipped;
  for (const auto& [reason, n] : stats.skipped) skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", n, reason);
  throw InputError(fmt::format("{}: no usable record in this {} file{}", where, stats.format,
                               skipped.empty() ? "" : fmt::format(" (skipped: {})", skipped)));
}

void deliver_sorted(std::vector<Record>& records, ReadStats& stats, const RecordSink& sink) {
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    if (const int c = a.task.compare(b.task); c != 0) return c < 0;
    return a.order < b.order;
  });
  for (const Record& r : records) {
    sink(r);
    ++stats.records;
  }
}

}  // namespace relsim::fit
