#pragma once
// The readers of `relsim fit`: every supported log format becomes one stream of
// Records, one per request, so the counting and the estimates never see a
// format. Readers that cannot stream in order (relsim logs, OTLP) group and
// sort per task; CSV/JSONL rows are passed in file order and the counter
// refuses a task whose order goes back.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relsim::fit {

struct Record {
  std::string task;        // the task (trace, conversation, ...) key
  std::int64_t order = 0;  // position within the task: request index, or a time in ns
  bool bad = false;
  std::string kind;  // bad: a relsim fault kind name, "http_<status>", or an error class; good: ""
  // `order` is this request's own start, in ns since the epoch: the fit in
  // seconds uses it. False for request indexes and for attempts whose start
  // no log records (the SDK's hidden retries, and the attempt after them).
  bool timed = false;
};

struct ReadStats {
  std::string format;                           // relsim, plan, csv, jsonl, otlp, litellm
  std::int64_t records = 0;                     // delivered to the sink
  std::map<std::string, std::int64_t> skipped;  // reason -> rows skipped
  std::vector<std::string> notes;               // what a person should know about the input
};

// The one table from what a log says of a failed request to relsim's fault
// kinds (docs/fit.md, Fault kinds), the same for every format. `word` is an
// error type or class, an HTTP status or an outcome word; `status` the HTTP
// status the request got, when the log has it (2xx: the failure came inside
// the stream). A status other than 2xx is http_<status>; a provider error
// type or an SDK error class names the kind it stands for
// (overloaded_error: http_529 before the stream, overloaded inside it;
// rate_limit_error, RateLimitError: http_429; connection_error: reset;
// client_timeout_error: slow_headers; ...); any other word is kept as it is
// and listed apart from relsim's kinds.
std::string fault_kind_of(std::string_view word, std::optional<int> status = std::nullopt);

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
