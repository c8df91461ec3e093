#pragma once
// Internal to the server: the tables every connection shares (each task's
// script and log, the held replies, the gates, the open connections), all
// under one mutex. No caller holds that mutex across a co_await: a
// connection takes it for a table operation and lets go. A held reply is
// woken by posting to its connection's strand (see connection.hpp), never by
// polling these tables. The request journal (request_journal.hpp) has a
// mutex of its own, taken only with mu_ not held.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "relsim/formats/recorder.hpp"
#include "relsim/formats/recording_book.hpp"
#include "relsim/server/server.hpp"
#include "server/metrics.hpp"
#include "server/request_journal.hpp"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace relsim::mock {

using Clock = std::chrono::steady_clock;

class Connection;

inline constexpr std::size_t kMaxGates = 10'000;
inline constexpr std::size_t kNotLogged = static_cast<std::size_t>(-1);

struct TaskState {
  std::deque<ScriptEntry> script;
  // The fallback column: taken in step with `script`, one entry of each per
  // request, so that entry i of either answers request i.
  std::deque<ScriptEntry> fallback;
  bool has_fallback = false;
  std::int64_t served = 0;  // requests that took an entry or found the script exhausted: the next one's index
  std::int64_t taken = 0;   // entries taken so far
  std::vector<LoggedRequest> log;
  std::uint64_t dropped = 0;
  std::uint64_t release_epoch = 0;  // release() bumps it: holds of older requests need not wait
  bool last_bad = false;            // chain mode: the last request served was bad
  bool endless_ok = false;          // replay mode, a task no script was set for: every request takes ok
};

// What a messages request took from its task's script.
struct Popped {
  bool found = false;
  std::string why;  // when not found
  ScriptEntry entry;
  std::int64_t index = -1;
  std::size_t slot = kNotLogged;  // in the task's log
  std::uint64_t epoch = 0;        // the task's release_epoch when it was taken
  std::uint64_t journal = 0;      // its open line in the request journal; 0: none
  std::size_t body_bytes = 0;     // the request's, for the metrics
  double received_ms = 0.0;
  Dialect dialect = Dialect::anthropic;  // the request's: its reply's bytes, and the proxy's breaking of its stream
  // Provider mode: the rate-limit headers its answer carries.
  std::vector<std::pair<std::string, std::string>> headers;
};

// Proxy mode with an https:// upstream: its TLS client context, peers
// verified against `ca` (a PEM file) or the system's store when ""
// (upstream.cpp). Throws InputError when it does not load.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const std::string& ca);

class ServerState {
 public:
  explicit ServerState(ServerConfig config)
      : config_(std::move(config)), journal_(config_.max_log_bytes) {
    if (config_.outage) outage_.emplace(*config_.outage);
    if (config_.chain) chain_.emplace(*config_.chain);
    if (config_.provider) provider_.emplace(*config_.provider);
    if (config_.upstream && config_.upstream->tls) tls_ = make_tls_context(config_.upstream_ca);
    // The recordings are read before the recorder adds its new (empty) file to a record-on-miss directory.
    if (!config_.replay_dir.empty())
      book_ = std::make_unique<RecordingBook>(read_recordings(config_.replay_dir, config_.upstream.has_value()),
                                              config_.replay_match);
    if (config_.upstream && !config_.record_dir.empty())
      recorder_ = std::make_unique<Recorder>(config_.record_dir, config_.record_redact);
  }

  const ServerConfig& config() const { return config_; }
  double now_ms() const;  // since the server started
  // Provider mode's clock: model seconds at `ms` since the server started.
  double model_seconds(double ms) const {
    return ms / 1000.0 / (config_.provider ? config_.provider->time_scale : 1.0);
  }
  // For replies that answer no script entry: req_relsim_x{n}.
  std::string fresh_request_id();
  // Set once, before any connection is served.
  void set_port(int port) { port_ = port; }
  int port() const { return port_; }

  // --- scripts and logs -------------------------------------------------------
  // Throws InputError in outage and chain modes. Replaces the task's
  // remaining script and its fallback column at once: none without
  // `fallback`, else that one, which must be as long as `entries`.
  void set_script(std::int64_t task, std::vector<ScriptEntry> entries,
                  std::optional<std::vector<ScriptEntry>> fallback = std::nullopt);
  // Takes the task's next entry and logs the request (with the entry, or
  // with status 404 when the script is exhausted; not at all for a task
  // without a script), in the task's log and as an open journal line. In
  // outage mode the entry is ok or the outage's fault kind, by the
  // schedule's state at the request's received_ms, for any task (the first
  // request of a task creates it); in chain mode, the chain's next step of
  // that task. A request to the fallback path (request.fallback) takes the
  // task's fallback column's entry, and the script's is dropped with it; a
  // task without that column answers it not found.
  Popped pop(std::int64_t task, LoggedRequest&& request);
  // Outage mode: the schedule up to now; nullopt without.
  std::optional<OutageView> outage_view();
  // Logs a request of a known task answered without a script entry.
  void log_unscripted(std::int64_t task, LoggedRequest&& request, int status);
  // Journals a request the provider refused (`refused`: "quota", "capacity"
  // or "key"), whether or not its task is known, and logs it in the task's
  // log when it is.
  void log_refused(std::int64_t task, LoggedRequest&& request, int status, std::string_view refused);
  // Proxy mode with an https:// upstream: its TLS context; nullptr without.
  boost::asio::ssl::context* tls() { return tls_.get(); }
  // Provider mode's quotas and capacity; nullptr without.
  Provider* provider() { return provider_ ? &*provider_ : nullptr; }
  // Records how the request `p` took ended (in its task's log and the
  // journal). While the server stops, a reply cut short ends "stopped".
  // `upstream` (proxy mode: what the hop did) goes into its journal line;
  // `first_event_ms`, when a stream's first event went out, into the metrics.
  void finish(std::int64_t task, const Popped& p, int status, std::string_view end, Json upstream = nullptr,
              std::optional<double> first_event_ms = std::nullopt);
  TaskLog log(std::int64_t task) const;
  // Tasks with a script, in increasing order.
  std::vector<std::int64_t> task_ids() const;
  // Journals an outcome report; false (and nothing written) for a task
  // without a script.
  bool report_outcome(std::int64_t task, std::string_view word, std::string_view detail);
  // The header of the plan loaded (null when none), for GET /control/tasks.
  void set_plan_header(Json header);
  Json plan_header() const;
  RequestJournal& journal() { return journal_; }
  ServerMetrics& metrics() { return metrics_; }
  // Proxy mode with --record: where exchanges are recorded; nullptr without.
  Recorder* recorder() { return recorder_.get(); }
  // Replay mode: the recordings; nullptr without.
  RecordingBook* book() { return book_.get(); }
  // GET /metrics: the exposition, with the connection gauges of now.
  std::string metrics_text() const;
  bool wait_finished(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const;

  // --- holds and gates --------------------------------------------------------
  // Registers a held reply of `conn` (its hold number `seq`); nullopt when it
  // need not wait: the server is stopping, the task was released after the
  // request was taken (`epoch`), the gate is open, or the gate table is full.
  std::optional<std::uint64_t> begin_hold(const std::shared_ptr<Connection>& conn, std::uint64_t seq,
                                          std::int64_t task, std::uint64_t epoch, const std::string& gate);
  void end_hold(std::uint64_t id);
  std::size_t release(std::int64_t task);
  std::size_t open_gate(const std::string& name);
  std::size_t held(std::int64_t task) const;
  bool wait_held(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const;

  // --- connections ------------------------------------------------------------
  // False when stopping or at max_connections; else `id` is its number.
  bool add_connection(const std::shared_ptr<Connection>& conn, std::uint64_t& id);
  void remove_connection(std::uint64_t id);
  std::size_t connection_count() const;
  std::size_t accepted() const;  // since the start
  bool stopping() const;
  // Marks the server stopping; returns the connections open now.
  std::vector<std::shared_ptr<Connection>> begin_stop();

 private:
  std::shared_ptr<boost::asio::ssl::context> tls_;
  struct HoldRec {
    std::int64_t task;
    std::string gate;  // empty: a stall or slow_headers hold
    std::weak_ptr<Connection> conn;
    std::uint64_t seq;
  };
  using Wakeups = std::vector<std::pair<std::shared_ptr<Connection>, std::uint64_t>>;

  // All with mu_ held.
  std::size_t append_log(TaskState& task, LoggedRequest&& request);
  // pop() for a task found: its next entry (or the script found exhausted),
  // logged, and the request's journal line.
  void take_locked(TaskState& t, std::int64_t task, LoggedRequest&& r, Popped& p, JournalRequest& line);
  // The task's state, created if new; nullptr past max_tasks.
  // Outage and chain modes: the task's state, created if new; nullptr past max_tasks.
  TaskState* live_task_locked(std::int64_t task, std::string& why);
  // Replay mode: a task no script was set for, created answering every request ok.
  TaskState* replay_task_locked(std::int64_t task, std::string& why);
  std::size_t held_locked(std::int64_t task) const;
  std::size_t finished_locked(std::int64_t task) const;
  // Counts the holds that `match` and collects the wake-ups of those whose
  // connection is still open.
  template <class Match>
  std::size_t collect_wakeups_locked(Match match, Wakeups& out) const;
  // Posts each wake-up to its connection's strand. Called without mu_:
  // dropping the last reference to a connection takes mu_.
  static void wake(Wakeups wakeups);

  const ServerConfig config_;
  const Clock::time_point start_ = Clock::now();
  int port_ = 0;
  std::atomic<std::uint64_t> next_request_id_{1};

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;  // a hold began or ended, a request finished, a connection closed
  std::unordered_map<std::int64_t, TaskState> tasks_;
  std::unordered_map<std::string, bool> gates_;  // name -> open
  std::unordered_map<std::uint64_t, HoldRec> holds_;
  std::uint64_t next_hold_ = 1;
  std::unordered_map<std::uint64_t, std::weak_ptr<Connection>> conns_;
  std::uint64_t next_conn_ = 1;
  std::size_t accepted_ = 0;
  std::size_t log_bytes_ = 0;
  bool stopping_ = false;
  Json plan_header_;
  std::optional<OutageSchedule> outage_;  // outage mode; asked under mu_
  std::optional<RequestChain> chain_;     // chain mode; pure
  std::optional<Provider> provider_;      // provider mode; its own mutex

  RequestJournal journal_;  // its own mutex, never taken with mu_ held
  ServerMetrics metrics_;   // its own mutex, a leaf like the journal's
  std::unique_ptr<Recorder> recorder_;  // its own mutex, a leaf too
  std::unique_ptr<RecordingBook> book_;  // replay mode; its own mutex, a leaf too
};

}  // namespace relsim::mock
