#pragma once
// The readers of `relsim fit`: every supported log format becomes one stream of
// Records, one per request, so the counting and the estimates never see a
// format. Readers that cannot stream in order (relsim logs, OTLP) group and
// sort per task; CSV/JSONL rows are passed in file order and the counter
// refuses a task whose order goes back.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace relsim::fit {

struct Record {
  std::string task;        // the task (trace, conversation, ...) key
  std::int64_t order = 0;  // position within the task: request index, or a time in ns
  bool bad = false;
  std::string kind;  // bad: a relsim fault kind name, "http_<status>", or an error class; good: ""
};

struct ReadStats {
  std::string format;                           // relsim, plan, csv, jsonl, otlp, litellm
  std::int64_t records = 0;                     // delivered to the sink
  std::map<std::string, std::int64_t> skipped;  // reason -> rows skipped
  std::vector<std::string> notes;               // what a person should know about the input
};

// "auto" on the command line is `automatic`; relsim covers plan files too,
// csv covers JSON Lines with the same keys.
enum class Format { automatic, relsim, csv, otlp, litellm };

Format parse_format(std::string_view word);  // throws InputError

using RecordSink = std::function<void(const Record&)>;

// Streams one file: every record of a task reaches the sink in increasing `order`
// (see above for CSV/JSONL). Throws InputError for a malformed row (file:line),
// an empty input, mixed formats, no usable record.
ReadStats read_records(const std::string& path, Format format, const RecordSink& sink);

}  // namespace relsim::fit
