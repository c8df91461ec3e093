// The generic CSV log (records.hpp): a header row naming the columns `task`,
// `request` (order within the task) or `time`, `outcome`, and optionally
// `call`; other columns are ignored. Streamed: lines come from LineReader in
// blocks, fields are split by hand (quotes as in RFC 4180, within one line),
// and the one Record is reused, so a row costs no allocation.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fit/read_common.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim::fit {
namespace {

struct Columns {
  int task = -1, request = -1, time = -1, outcome = -1, call = -1;
  std::size_t count = 0;
};

// Fields of one line, valid until the next split.
class Splitter {
 public:
  bool split(std::string_view line) {
    fields_.clear();
    if (!std::memchr(line.data(), '"', line.size())) {
      std::size_t start = 0;
      for (;;) {
        const void* comma = std::memchr(line.data() + start, ',', line.size() - start);
        if (!comma) break;
        const auto end = static_cast<std::size_t>(static_cast<const char*>(comma) - line.data());
        fields_.push_back(trim(line.substr(start, end - start)));
        start = end + 1;
      }
      fields_.push_back(trim(line.substr(start)));
      return true;
    }
    return split_quoted(line);
  }
  const std::vector<std::string_view>& fields() const { return fields_; }

 private:
  // A quoted field may hold commas and "" for a quote; its text is unquoted
  // into scratch_, reserved up front so the views into it stay valid.
  bool split_quoted(std::string_view line) {
    scratch_.clear();
    scratch_.reserve(line.size());
    std::size_t i = 0;
    for (;;) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] == '"') {
        const std::size_t from = scratch_.size();
        for (++i;; ++i) {
          if (i >= line.size()) return false;  // unterminated quote
          if (line[i] == '"') {
            if (i + 1 < line.size() && line[i + 1] == '"') {
              scratch_.push_back('"');
              ++i;
            } else {
              break;
            }
          } else {
            scratch_.push_back(line[i]);
          }
        }
        fields_.push_back(std::string_view(scratch_).substr(from));
        ++i;
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i < line.size() && line[i] != ',') return false;  // text after the closing quote
      } else {
        const std::size_t end = std::min(line.find(',', i), line.size());
        const std::string_view field = line.substr(i, end - i);
        if (field.find('"') != std::string_view::npos) return false;  // a quote inside an unquoted field
        fields_.push_back(trim(field));
        i = end;
      }
      if (i >= line.size()) return true;
      ++i;  // the comma
    }
  }
  std::vector<std::string_view> fields_;
  std::string scratch_;
};

Columns read_header(const std::vector<std::string_view>& names, const std::string& where, std::int64_t number,
                    ReadStats& stats) {
  Columns c;
  c.count = names.size();
  std::vector<std::string> ignored;
  for (std::size_t i = 0; i < names.size(); ++i) {
    int* slot = names[i] == "task"      ? &c.task
                : names[i] == "request" ? &c.request
                : names[i] == "time"    ? &c.time
                : names[i] == "outcome" ? &c.outcome
                : names[i] == "call"    ? &c.call
                                        : nullptr;
    if (!slot) {
      ignored.emplace_back(names[i]);
      continue;
    }
    if (*slot >= 0) throw InputError(fmt::format("{}:{}: the column '{}' appears twice in the header", where, number, names[i]));
    *slot = static_cast<int>(i);
  }
  if (c.task < 0 || c.outcome < 0 || (c.request < 0 && c.time < 0))
    throw InputError(fmt::format("{}:{}: the CSV header lacks '{}': a CSV log needs the columns task, request (or "
                                 "time) and outcome; call is optional",
                                 where, number, c.task < 0 ? "task" : c.outcome < 0 ? "outcome" : "request"));
  stats.notes.push_back(c.request >= 0 ? "order within a task: the request column"
                                       : "order within a task: the time column");
  if (!ignored.empty()) stats.notes.push_back(fmt::format("columns not used: {}", fmt::join(ignored, ", ")));
  return c;
}

[[noreturn]] void bad_field(const std::string& where, std::int64_t number, std::string_view column,
                            std::string_view value, std::string_view valid) {
  throw InputError(fmt::format("{}:{}: {} = '{}' is not valid: {}", where, number, column,
                               value.substr(0, 100), valid));
}

[[noreturn]] void bad_line(std::string_view line, const std::string& where, std::int64_t number,
                           std::size_t fields, const Columns& c, bool split) {
  if (!line.empty() && trim(line).front() == '{') {
    const Json j = Json::parse(line.begin(), line.end(), nullptr, false);
    if (!j.is_discarded() && shape_of(j) != Shape::other) throw_mixed(where, number, shape_of(j), "CSV");
  }
  if (!split) throw InputError(fmt::format("{}:{}: a quoted field is not closed, or text follows its closing quote", where, number));
  throw InputError(fmt::format("{}:{}: {} fields, but the header names {} columns", where, number, fields, c.count));
}

void read_row(const std::vector<std::string_view>& f, const Columns& c, const std::string& where,
              std::int64_t number, Record& r) {
  const std::string_view task = f[static_cast<std::size_t>(c.task)];
  if (task.empty()) bad_field(where, number, "task", task, "a task key must not be empty");
  r.task.assign(task);
  if (c.request >= 0) {
    const std::string_view text = f[static_cast<std::size_t>(c.request)];
    const auto v = parse_number<std::int64_t>(text);
    if (!v || *v < 0) bad_field(where, number, "request", text, "an integer >= 0 (the request's order within its task)");
    r.order = *v;
    r.timed = false;
  } else {
    const std::string_view text = f[static_cast<std::size_t>(c.time)];
    const auto v = parse_time_ns(text);
    if (!v) bad_field(where, number, "time", text, "seconds (1714567890.25) or RFC 3339 (2024-05-01T12:00:00.25Z)");
    r.order = *v;
    r.timed = true;
  }
  const std::string_view outcome = f[static_cast<std::size_t>(c.outcome)];
  if (!set_outcome(outcome, r)) bad_field(where, number, "outcome", outcome, kOutcomeChoices);
  if (c.call >= 0) {
    const std::string_view text = f[static_cast<std::size_t>(c.call)];
    if (!text.empty()) {
      const auto v = parse_number<std::int64_t>(text);
      if (!v || *v < 0) bad_field(where, number, "call", text, "an integer >= 0, or empty");
    }
  }
}

}  // namespace

ReadStats read_csv(const std::string& path, const RecordSink& sink) {
  ReadStats stats;
  stats.format = "csv";
  LineReader lines(path);
  Splitter splitter;
  std::string_view line;
  Columns columns;
  bool have_header = false;
  Record record;
  while (lines.next(line)) {
    if (line.empty() || blank(line)) continue;
    const bool split = splitter.split(line);
    const auto& fields = splitter.fields();
    if (!have_header) {
      if (!split) bad_line(line, path, lines.number(), 0, columns, false);
      columns = read_header(fields, path, lines.number(), stats);
      have_header = true;
      continue;
    }
    if (!split || fields.size() != columns.count) bad_line(line, path, lines.number(), fields.size(), columns, split);
    read_row(fields, columns, path, lines.number(), record);
    sink(record);
    ++stats.records;
  }
  if (!have_header) throw InputError(fmt::format("{}: empty log (no lines)", path));
  require_records(stats, path);
  return stats;
}

}  // namespace relsim::fit
