#pragma once
// The fault-injecting mock of the Messages streaming API (docs/model.md, Live check).
//
// Each task has its own script of replies, addressed by the path prefix of
// its base URL (`http://127.0.0.1:PORT/t/{task}`), so concurrent tasks never
// take each other's faults: every `POST /t/{task}/v1/messages` pops the next
// entry of that task's script and answers as the entry says (a healthy
// stream, one of the fault kinds of faults.hpp, or a TCP extra after
// toxiproxy and WireMock: "empty", "garbage"). Every request is logged for
// assertions (headers such as x-stainless-retry-count, body, the entry it got),
// and journaled as one JSON line (the request log `relsim audit` reads: to
// ServerConfig::log_path, and at GET /control/log), as are the outcomes a
// harness reports for its tasks.
//
// The wire contract (event shapes, status codes, headers, control endpoints)
// is written out in docs/wire.md; tests pin it in tests/live/server_test.cpp.
//
// The server runs on its own io_context and threads; the object owns them
// (the destructor stops and joins). It binds only to 127.0.0.1.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <array>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/request_chain.hpp"
#include "relsim/core/outage.hpp"
#include "relsim/server/provider.hpp"

namespace relsim {

struct Plan;

// What the server does with one request.
enum class Reply : std::uint8_t {
  ok,       // a healthy stream of eight events
  fault,    // ScriptEntry::fault
  empty,    // close cleanly without a byte
  garbage,  // a few hundred pseudo-random bytes, then close
};

// One entry of a task's script. The pacing fields shape a streamed reply with
// the server's own delays (never a test's sleep); `gate` holds the reply
// before its first delta (before the status line for replies that do not
// stream) until `Server::open_gate(gate)`.
struct ScriptEntry {
  Reply reply = Reply::ok;
  FaultKind fault = FaultKind::cut;  // meaningful when reply == Reply::fault
  std::int64_t chunk_delay_ms = 0;   // before each event chunk, in [0, kMaxChunkDelayMs]
  double bytes_per_second = 0.0;     // 0: unlimited; else in [1, 1e9]
  std::int64_t slice_bytes = 0;      // 0: one write per chunk; else in [1, 2^20]
  std::string gate;                  // empty: none; else [A-Za-z0-9_.-]{1,64}

  static ScriptEntry ok() { return {}; }
  static ScriptEntry of(FaultKind kind);
  bool shaped() const { return chunk_delay_ms > 0 || bytes_per_second > 0.0 || slice_bytes > 0 || !gate.empty(); }
  friend bool operator==(const ScriptEntry&, const ScriptEntry&) = default;
};

inline constexpr std::int64_t kMaxChunkDelayMs = 60'000;
inline constexpr std::size_t kMaxScriptEntries = 1'000'000;  // per task

// "ok", a fault kind's name, "empty" or "garbage".
std::string entry_name(const ScriptEntry& entry);
// A name, or an object {"kind": NAME, "chunk_delay_ms": D, "bytes_per_second": R,
// "slice_bytes": S, "gate": G} (every field but kind optional). Throws
// InputError naming the value and the valid choices.
ScriptEntry parse_script_entry(const Json& value);
// A JSON array of entries; the error names the index of a bad one.
std::vector<ScriptEntry> parse_script(const Json& responses);
// Convenience for tests and tools: script_of({"ok", "http_529", "cut"}).
std::vector<ScriptEntry> script_of(std::initializer_list<std::string_view> names);
// A name when the entry is not shaped, else the object form.
Json to_json(const ScriptEntry& entry);

// One request as the server saw it.
// The events of a healthy stream (docs/wire.md): eight in the Messages API
// (message_start ... message_stop), five in the OpenAI dialect (the role,
// two content chunks, the finish_reason, [DONE]): counted from the scripts
// that send them. A shaped entry's chunk_delay_ms comes before each, so a
// stream lasts this many delays.
int healthy_stream_events(Dialect dialect);

struct LoggedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order
  std::string body;                                          // the first kMaxLoggedBody bytes
  std::size_t body_bytes = 0;                                // the whole body's size
  std::optional<ScriptEntry> entry;                          // none: not served from the script
  std::int64_t index = -1;     // which request of the task (k of msg_relsim_{task}_{k}); -1: none
  std::int64_t tenant = -1;    // with a provider: its x-api-key's tenant number; -1: none
  Dialect dialect = Dialect::anthropic;  // the endpoint it came to: /v1/messages or /v1/chat/completions
  bool fallback = false;       // it came to the second provider's path, /t/{task}/fallback/v1/...
  int status = 0;              // 0: no status line sent (reset, empty, garbage, held and gone)
  std::string end;             // how it ended: complete, closed, reset, client_gone, stopped; "" while open
  double received_ms = 0.0;    // request read, ms since the server started
  std::optional<double> finished_ms;

  // The value of a header (name in any case), if present.
  std::optional<std::string> header(std::string_view name) const;
};

struct TaskLog {
  std::int64_t task = 0;
  std::vector<LoggedRequest> requests;
  std::uint64_t dropped = 0;  // requests not logged because a cap was reached
};
Json to_json(const LoggedRequest& request);
Json to_json(const TaskLog& log);  // {"task": t, "requests": [...], "dropped": d}

inline constexpr std::size_t kMaxLoggedBody = 64 * 1024;

// What a harness may report of a task: POST /control/tasks/{task}/outcome.
inline constexpr std::array<std::string_view, 6> kOutcomeWords = {"done", "env_error", "harness_error",
                                                                  "crash", "hang", "partial_done"};
inline constexpr std::size_t kMaxOutcomeDetail = 1000;  // bytes of "detail" kept

// relsim proxy (docs/proxy.md): where the real answers come from. Requests
// go to http(s)://host:port + base_path + "/v1/messages".
struct Upstream {
  std::string url;        // as given
  bool tls = false;       // https://: TLS, the certificate verified against the CA store
  std::string host;       // a name or an IPv4 address
  int port = 80;          // 443 by default with TLS
  std::string base_path;  // "" or "/prefix", no trailing slash
};
// "http[s]://HOST[:PORT][/PATH]"; PATH may hold "{task}" once, replaced by
// each request's task (an upstream that is itself a relsim serve:
// http://127.0.0.1:PORT/t/{task}). Throws InputError naming the URL and what
// is wrong with it.
inline constexpr std::string_view kTaskInPath = "{task}";
Upstream parse_upstream(std::string_view url);

struct ServerConfig {
  int port = 0;  // 0: the kernel picks a free one; else in [1, 65535]
  int threads = 1;  // in [1, 64]
  std::string retry_after = "0";  // the retry-after of http_429, seconds (a non-negative decimal)
  std::string retry_after_ms;     // the retry-after-ms of http_429 (a non-negative decimal); "": not sent
  std::chrono::milliseconds read_timeout{5000};         // a whole request, from its first byte (or accept)
  std::chrono::milliseconds keep_alive_timeout{60000};  // idle between two requests of a connection
  std::chrono::milliseconds linger_timeout{2000};       // draining a refused request before closing
  std::size_t max_connections = 2048;
  std::size_t max_tasks = 1'000'000;
  std::size_t max_log_entries = 10'000;             // per task
  std::size_t max_log_bytes = 256u * 1024u * 1024u;  // all logs together; and the journal's lines in memory
  // The request journal's file, created (truncated) before listening; "":
  // none (the journal is still served at GET /control/log).
  std::string log_path;
  // Outage mode (outage.hpp): every task's requests are answered by the
  // outage schedule, good or bad by its state when the request is read;
  // scripts and plans are refused. Its clock starts with the server.
  std::optional<OutageConfig> outage;
  // Chain mode (core/request_chain.hpp): every task's requests, in the order
  // they are read, walk the fault chain request by request (the first
  // request of a task creates it); scripts and plans are refused, as in
  // outage mode. Not with outage mode.
  std::optional<RequestChainConfig> chain;
  // Provider mode (provider.hpp): per-tenant quotas (tenant from x-api-key)
  // and a capacity limit, asked before a request takes its script entry; a
  // request they refuse takes none (429 or 529, logged with "refused").
  std::optional<ProviderConfig> provider;
  // Proxy mode (relsim proxy): a script's ok and in-stream entries are
  // forwarded to the upstream and its answer streamed back (broken as an
  // in-stream fault says); pre-response faults are answered here, as serve
  // does. POST /v1/messages is taken as task `task_header`'s value, else
  // task 0; POST /t/{task}/v1/messages as that task.
  std::optional<Upstream> upstream;
  std::string task_header;                         // lower-case; "": none
  std::string upstream_ca;  // https: a PEM file of the CAs to trust; "": the system's store
  std::chrono::milliseconds upstream_timeout{60000};  // connect and headers; then between two reads
  // Proxy mode: record every messages exchange with the upstream into a new
  // file in this directory (relsim proxy --record, docs/replay.md); "": none.
  std::string record_dir;
  std::vector<std::string> record_redact;  // header names left out of the recordings, besides the credentials
  // Replay mode (relsim serve --replay, docs/replay.md): a script's ok and
  // in-stream entries are answered with the recorded exchange the request
  // matches (recording_book.hpp), at the recorded pace times replay_pace (0:
  // at once), broken on the way as an in-stream entry says; the other
  // entries are answered as serve does. A request no recording matches is
  // answered 404 without taking an entry, or, with `upstream`, forwarded
  // and recorded into replay_dir (record-on-miss). A task with no script
  // answers every request as ok. The API's own paths are served as the
  // proxy serves them (task_header, else task 0).
  std::string replay_dir;
  double replay_pace = 1.0;               // in [0, 1000]
  std::vector<std::string> replay_match;  // the request-body fields compared; empty: all but the volatile ones
};
// Throws InputError naming the value and its valid range.
void validate(const ServerConfig& config);

class Server {
 public:
  // Binds 127.0.0.1:config.port and starts serving; throws InputError if the
  // config is invalid or the port cannot be bound.
  explicit Server(ServerConfig config = {});
  // Loads the plan (load_plan) before listening, so that the journal's
  // header names its number of tasks.
  Server(ServerConfig config, const Plan& plan);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  std::string base_url(std::int64_t task) const;  // http://127.0.0.1:PORT/t/TASK

  // Replaces the task's remaining script (task >= 0), and its fallback
  // column: none without `fallback`, else what each of its requests gets at
  // /t/{task}/fallback/v1/... instead of /t/{task}/v1/... (a fallback plan's
  // second column, formats/plan.hpp; entry i answers the task's request i,
  // whichever path the requests before it took), as long as `entries`.
  // Throws InputError past max_tasks tasks or kMaxScriptEntries entries, or
  // for a fallback column of another length.
  void set_script(std::int64_t task, std::vector<ScriptEntry> entries,
                  std::optional<std::vector<ScriptEntry>> fallback = std::nullopt);
  // Every task of the plan: its requests, "ok" or the fault kind, in order
  // (and its fallback column, if it has one); GET /control/tasks shows the
  // plan's header.
  void load_plan(const Plan& plan);
  TaskLog log(std::int64_t task) const;

  // Lets the task's held replies (stall, slow_headers) go on: those held now
  // and those of requests already received. Returns how many were held.
  std::size_t release(std::int64_t task);
  // Opens the gate for good (a latch). Returns how many replies waited on it.
  std::size_t open_gate(const std::string& name);

  // Outage mode: the schedule so far (GET /control/outage); nullopt without.
  std::optional<OutageView> outage_schedule() const;

  // Replies of the task now held by stall, slow_headers or a gate.
  std::size_t held(std::int64_t task) const;
  // Waits (on a condition, not a sleep) until held(task) == count, or until
  // `limit` passes; returns whether the count was reached.
  bool wait_held(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const;
  // Waits until `count` requests of the task have finished (logged with an end).
  bool wait_finished(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const;
  std::size_t connections() const;  // open now
  std::size_t accepted() const;     // served since the start (open or closed)
  // Replay mode: "N recorded exchanges" and what was skipped (for the
  // banner); "" otherwise.
  std::string replay_summary() const;

  // Closes the listener and every connection (held ones too), joins the
  // threads, then journals the requests still open as "stopped" and closes
  // the log file. Idempotent.
  void stop();

  struct Impl;

 private:
  Server(ServerConfig config, const Plan* plan);
  std::shared_ptr<Impl> impl_;
};

}  // namespace relsim
