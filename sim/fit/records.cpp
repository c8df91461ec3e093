// Which reader reads a log (records.hpp): the format named on the command
// line, or, for `auto`, the shape of the first non-blank line. Only CSV and
// the task/outcome JSON Lines are streamed; the other formats are held whole
// because their records must be grouped and sorted anyway.
#include "relsim/fit/records.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "fit/read_common.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"

namespace relsim::fit {

Format parse_format(std::string_view word) {
  if (word == "auto") return Format::automatic;
  if (word == "relsim" || word == "plan") return Format::relsim;
  if (word == "csv" || word == "jsonl") return Format::csv;
  if (word == "otlp") return Format::otlp;
  if (word == "litellm") return Format::litellm;
  throw InputError(fmt::format("--format '{}' is not a log format: use auto, relsim, csv, otlp or litellm", word));
}

namespace {

enum class Found { csv, jsonl, relsim, recording, otlp, otlp_document, litellm };

std::string_view format_word(Format format) {
  switch (format) {
    case Format::automatic: return "auto";
    case Format::relsim: return "relsim";
    case Format::csv: return "csv";
    case Format::otlp: return "otlp";
    case Format::litellm: return "litellm";
  }
  return "?";
}

bool fits(Format asked, Found found) {
  switch (asked) {
    case Format::automatic: return true;
    case Format::relsim: return found == Found::relsim || found == Found::recording;
    case Format::csv: return found == Found::csv || found == Found::jsonl;
    case Format::otlp: return found == Found::otlp || found == Found::otlp_document;
    case Format::litellm: return found == Found::litellm;
  }
  return false;
}

// The format of a file whose first non-blank line, number `number`, is `first`.
Found detect(const std::string& path, std::string_view first, std::int64_t number) {
  first = trim(first);
  if (first.empty() || first.front() != '{') return Found::csv;
  const Json j = Json::parse(first.begin(), first.end(), nullptr, false);
  if (j.is_discarded()) {
    // Not one JSON line: one whole (pretty-printed) OTLP/JSON document?
    const std::string text = read_file(path, "log");
    const Json doc = Json::parse(text, nullptr, false);
    if (!doc.is_discarded() && shape_of(doc) == Shape::otlp) return Found::otlp_document;
    throw InputError(fmt::format("{}:{}: not JSON (truncated or not JSON), and the file is not one OTLP/JSON document",
                                 path, number));
  }
  switch (shape_of(j)) {
    case Shape::relsim_log:
    case Shape::plan: return Found::relsim;
    case Shape::recording: return Found::recording;
    case Shape::otlp: return Found::otlp;
    case Shape::litellm: return Found::litellm;
    case Shape::table: return Found::jsonl;
    default: break;
  }
  throw InputError(fmt::format("{}:{}: {} line, not one of the formats relsim fit reads: a relsim log or plan "
                               "header or recording, a JSON row with \"task\" and \"outcome\", OTLP/JSON traces "
                               "(\"resourceSpans\"), or a LiteLLM payload (\"trace_id\", \"status\", \"startTime\")",
                               path, number, shape_name(shape_of(j))));
}

}  // namespace

ReadStats read_records(const std::string& path, Format format, const RecordSink& sink) {
  // A directory: relsim proxy's recordings (--record DIR), every *.jsonl in name order.
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    if (!fits(format, Found::recording))
      throw InputError(fmt::format("{}: --format {} does not match a directory, which reads as relsim proxy's "
                                   "recordings (relsim): use --format auto",
                                   path, format_word(format)));
    return read_recordings_of(read_recordings(path), path, sink);
  }
  Found found{};
  {
    LineReader lines(path);
    std::string_view line;
    bool any = false;
    while ((any = lines.next(line)) && blank(line)) {
    }
    if (!any) throw InputError(fmt::format("{}: empty log (no lines)", path));
    found = detect(path, line, lines.number());
  }
  if (!fits(format, found))
    throw InputError(fmt::format("{}: --format {} does not match the file, which reads as {}: use --format auto",
                                 path, format_word(format),
                                 found == Found::csv         ? "CSV"
                                 : found == Found::jsonl     ? "task/outcome JSON Lines (csv)"
                                 : found == Found::relsim    ? "a relsim log or plan (relsim)"
                                 : found == Found::recording ? "relsim proxy's recordings (relsim)"
                                 : found == Found::litellm   ? "LiteLLM payloads (litellm)"
                                                             : "OTLP/JSON traces (otlp)"));
  switch (found) {
    case Found::csv: return read_csv(path, sink);
    case Found::jsonl: return read_jsonl(path, sink);
    case Found::relsim: return read_relsim(read_file(path, "log"), path, sink);
    case Found::recording: return read_recordings_of(parse_recordings(read_file(path, "log"), path), path, sink);
    case Found::otlp:
    case Found::otlp_document: return read_otlp(read_file(path, "log"), path, sink);
    case Found::litellm: return read_litellm(read_file(path, "log"), path, sink);
  }
  return {};
}

}  // namespace relsim::fit
