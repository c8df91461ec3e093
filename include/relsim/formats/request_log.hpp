#pragma once
// What a client did, as `relsim serve --log` recorded it (docs/wire.md, the
// request log; docs/audit.md): the JSON Lines request log, and the outcomes a
// harness reports, from the log's outcome lines or a CSV `task,outcome,detail`.
// Both readers are strict: anything that is not exactly the documented form
// is an InputError naming the file and line number, because an audit of a
// half-read log would be a wrong audit.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/formats/plan.hpp"

namespace relsim {

// How a request's reply ended, as the server saw it.
enum class RequestEnd : std::uint8_t { complete, closed, reset, client_gone, stopped };
std::string_view to_string(RequestEnd end);

// One request line of the log, as the file says it (the server's own
// in-memory record of a request is relsim::LoggedRequest, server.hpp: a
// different type, so a different name, or the two would break the one
// definition rule).
struct RequestLine {
  std::int64_t task = 0;
  std::int64_t index = -1;             // within its task; -1 for null (refused before taking an entry)
  bool served = false;                  // an entry was served (not for refused or exhausted requests)
  PlannedRequest entry;                 // that entry: ok (nullopt) or a fault kind
  bool exhausted = false;               // the request found its task's script exhausted
  RequestEnd end = RequestEnd::complete;
  int status = 0;
  double received_ms = 0.0, finished_ms = 0.0;
  std::optional<std::string> retry_count;  // x-stainless-retry-count as sent
  Dialect dialect = Dialect::anthropic;     // "dialect": "openai" on a chat completion's line
  bool fallback = false;                    // "fallback": true: it went to the second provider's path
  // relsim proxy: what went wrong on the hop to the real upstream (its own
  // error status, or the hop's "error"), in words; none when it answered.
  std::optional<std::string> upstream_failed;
  std::int64_t line = 0;                   // 1-based line in the log file
};

// One reported outcome, from a log line or a CSV row.
struct OutcomeReport {
  std::int64_t task = 0;
  Outcome outcome = Outcome::done;
  std::string detail;
  std::int64_t line = 0;
};

struct RequestLog {
  std::string where;  // the file, for messages
  Json header;
  std::vector<RequestLine> requests;  // in log order
  std::vector<OutcomeReport> outcomes;  // in log order
};

// "done" ... "partial_done"; throws InputError naming the word and the valid ones.
Outcome parse_outcome_word(std::string_view word);

// Lines are parsed in parallel; the error reported is still the one of the
// first bad line, so any thread count gives the same message.
RequestLog parse_request_log(std::string_view text, const std::string& where);
RequestLog read_request_log(const std::string& path);

// A CSV with the header row `task,outcome,detail` (detail may be absent or
// quoted, with "" for a quote inside).
std::vector<OutcomeReport> parse_outcome_csv(std::string_view text, const std::string& where);
std::vector<OutcomeReport> read_outcome_csv(const std::string& path);

}  // namespace relsim
