#pragma once
// Internal to the server: the request log as JSON Lines (docs/wire.md, "The
// request log file"), what `relsim audit` reads. A header line, then one
// line per messages request of a task with a script, written when the
// request finishes, and one per outcome report. Each line goes to the --log
// file (flushed at once, so a killed server leaves every finished request
// on disk) and, up to a byte cap, to memory for GET /control/log. Both are
// written under the journal's own mutex, in one call, so they hold the same
// lines in the same order.
//
// Every request is written exactly once: begin() registers it, end() writes
// it and forgets it, and close() (after the server's threads have joined)
// writes the ones that never ended with end "stopped".
//
// The journal's mutex is a leaf: nothing is called while it is held, and
// ServerState never holds its own mutex while calling in, so file writes
// never stall the tables every connection shares.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "relsim/core/dialect.hpp"
#include "relsim/core/json.hpp"

namespace relsim::mock {

// A request's line, but for how it ended.
struct JournalRequest {
  std::int64_t task = 0;
  std::int64_t index = -1;  // -1: null (refused before taking an entry)
  Json entry;               // null: none
  bool exhausted = false;   // found the script exhausted
  std::optional<std::string> retry_count;  // x-stainless-retry-count as sent
  std::size_t body_bytes = 0;
  double received_ms = 0.0;
  std::int64_t tenant = -1;  // provider mode: the x-api-key's tenant; -1: no "tenant" key
  std::string_view refused;  // provider mode: "quota" or "capacity" when it refused the request
  Dialect dialect = Dialect::anthropic;  // "dialect": "openai" on the line of an OpenAI-dialect request
  bool fallback = false;                 // "fallback": true on the line of a request to the fallback path
};

class RequestJournal {
 public:
  explicit RequestJournal(std::size_t max_memory_bytes) : max_memory_bytes_(max_memory_bytes) {}
  ~RequestJournal();
  RequestJournal(const RequestJournal&) = delete;
  RequestJournal& operator=(const RequestJournal&) = delete;

  // Creates (truncates) the file; throws InputError naming the path when it
  // cannot be written.
  void open_file(const std::string& path);
  // Line 1: {"relsim_log": 1, "port": P, "plan_tasks": N or null,
  // "retry_after": "S", "retry_after_ms": "MS" or null}: the retry-after
  // headers http_429 replies carry (retry_after_ms null when not sent);
  // then the keys of `mode` (an object): "chain" in chain mode, "outage" in
  // outage mode, the faults' parameters.
  void write_header(int port, std::optional<std::size_t> plan_tasks, const std::string& retry_after,
                    const std::string& retry_after_ms, const Json& mode);

  // Registers a request still going; its id (never 0) is for end().
  std::uint64_t begin(JournalRequest request);
  // Writes the line of request `id`; a second call for it does nothing.
  // `upstream` (proxy mode), when not null, is written as the line's "upstream".
  void end(std::uint64_t id, int status, std::string_view how, double finished_ms, Json upstream = nullptr);
  // A request that ended as it arrived (a refused one).
  void write_ended(const JournalRequest& request, int status, std::string_view how, double finished_ms);
  void outcome(std::int64_t task, std::string_view word, std::string_view detail, double received_ms);

  // Writes every request still open with end "stopped" at `stop_ms`, then
  // closes the file. Later calls write nothing.
  void close(double stop_ms);

  // The lines kept in memory (each ending in a newline) and how many were
  // left out because the cap was reached.
  std::pair<std::string, std::uint64_t> text() const;

 private:
  void write_locked(const Json& line);
  void write_locked(std::string line);  // one line's text, without its newline

  mutable std::mutex mu_;
  const std::size_t max_memory_bytes_;
  std::FILE* file_ = nullptr;
  std::string path_;
  bool write_failed_ = false;  // reported once on stderr
  bool closed_ = false;
  std::string memory_;
  std::uint64_t left_out_ = 0;
  std::map<std::uint64_t, JournalRequest> open_;  // by id: close() writes them in arrival order
  std::uint64_t next_id_ = 1;
};

}  // namespace relsim::mock
