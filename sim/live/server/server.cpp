// The fault-injecting mock server (server.hpp). The wire contract:
//
//   POST /t/{task}/v1/messages   body: a JSON object with "stream": true
//     pops the task's next script entry and answers as it says (server_wire.cpp
//     has the bytes): a healthy stream is a 200 text/event-stream, chunked, one
//     chunk per event: message_start, content_block_start, ping, two text
//     deltas ("Hello from ", "task {task}."), content_block_stop,
//     message_delta (end_turn), message_stop, then the zero-length chunk.
//     No script, or an exhausted one: 404 not_found_error at once. A body that
//     is not such an object: 400 invalid_request_error (no entry is taken).
//   POST /control/tasks/{task}/script  {"responses": [...]}  replace the script
//   GET  /control/tasks/{task}/log     {"task": t, "requests": [...], "dropped": d}
//   POST /control/tasks/{task}/release                       let held replies go on
//   POST /control/gates/{name}/open                          open a gate for good
//   GET  /control/health
//   Anything else: 404 JSON; a wrong method: 405 JSON with `allow`.
//
// Every JSON response carries content-type application/json and a request-id.
// Limits: request head 16 KiB (431), body 1 MiB (413), a malformed request
// 400; all three close the connection after draining what the client still
// sends (a lingering close, so the client reads the status instead of a
// reset). A request must arrive whole within read_timeout of its first byte
// (of the accept, for a connection's first request); an idle keep-alive
// connection is closed after keep_alive_timeout.
//
// Concurrency: one io_context run by config.threads threads; each connection
// is a C++20 coroutine on its own strand (none with one thread: its handlers
// run in order anyway), so its state needs no lock. The
// tables (scripts, logs, holds, gates) are shared under one mutex. A held
// reply (stall, slow_headers, a gate) waits on the connection's `wake_` timer
// and watches the socket for the client going away; release, open_gate and
// stop post to the connection's strand and cancel that timer, so nothing
// ever polls or sleeps.
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without it

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <boost/asio.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/live/plan.hpp"
#include "relsim/live/server/server.hpp"
#include "live/server/server_wire.hpp"

namespace relsim {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// Not an anonymous namespace: Server::Impl has members of these types.
namespace mock {

constexpr std::uint32_t kHeaderLimit = 16 * 1024;
constexpr std::uint64_t kBodyLimit = 1024 * 1024;
constexpr std::size_t kMaxGates = 10'000;
constexpr std::size_t kMaxPipelined = 64 * 1024;  // bytes read ahead while a reply is held
constexpr std::size_t kMaxDrain = 4 * 1024 * 1024;

auto redirect(error_code& ec) { return net::redirect_error(net::use_awaitable, ec); }

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::optional<std::int64_t> parse_task(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    const std::size_t j = std::min(path.find('/', i), path.size());
    parts.push_back(path.substr(i, j - i));
    i = j;
  }
  return parts;
}

enum class HoldEnd { released, gone, stopped };

struct TaskState {
  std::deque<ScriptEntry> script;
  std::int64_t served = 0;  // entries taken so far: the next one's index
  std::vector<LoggedRequest> log;
  std::uint64_t dropped = 0;
  std::uint64_t release_epoch = 0;
};

struct Popped {
  bool found = false;
  std::string why;  // when not found
  ScriptEntry entry;
  std::int64_t index = -1;
  std::size_t slot = static_cast<std::size_t>(-1);  // in the task's log; -1: not logged
  std::uint64_t epoch = 0;
};

class Connection;

}  // namespace mock

using namespace mock;

struct Server::Impl {
  ServerConfig config;
  Clock::time_point start = Clock::now();

  mutable std::mutex mu;
  mutable std::condition_variable changed;
  std::unordered_map<std::int64_t, TaskState> tasks;
  std::unordered_map<std::string, bool> gates;  // name -> open
  struct HoldRec {
    std::int64_t task;
    std::string gate;  // empty: a stall or slow_headers hold
    std::weak_ptr<Connection> conn;
    std::uint64_t seq;
  };
  std::unordered_map<std::uint64_t, HoldRec> holds;
  std::uint64_t next_hold = 1;
  std::unordered_map<std::uint64_t, std::weak_ptr<Connection>> conns;
  std::uint64_t next_conn = 1;
  std::size_t accepted = 0;  // connections served so far
  std::size_t log_bytes = 0;
  bool stopping = false;
  std::atomic<std::uint64_t> next_request_id{1};

  std::mutex stop_mu;
  bool joined = false;
  int bound_port = 0;
  std::vector<std::thread> threads;

  // Declared last: destroyed first, while the tables above still exist for
  // whatever handlers the io_context still owns.
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{net::make_strand(ioc)};

  explicit Impl(ServerConfig c) : config(std::move(c)) {}

  double now_ms() const { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }
  std::string fresh_request_id() { return fmt::format("req_relsim_x{}", next_request_id++); }

  void start_serving();
  net::awaitable<void> accept_loop();
  void stop();

  // --- tables, all under mu -------------------------------------------------
  void set_script(std::int64_t task, std::vector<ScriptEntry> entries) {
    if (task < 0) throw InputError(fmt::format("task = {} is out of range: it must be >= 0", task));
    if (entries.size() > kMaxScriptEntries)
      throw InputError(fmt::format("script of task {} has {} entries: at most {}", task, entries.size(),
                                   kMaxScriptEntries));
    std::lock_guard lock(mu);
    auto it = tasks.find(task);
    if (it == tasks.end()) {
      if (tasks.size() >= config.max_tasks)
        throw InputError(fmt::format("task {} would be task number {}: the server holds at most {} tasks", task,
                                     tasks.size() + 1, config.max_tasks));
      it = tasks.emplace(task, TaskState{}).first;
    }
    it->second.script.assign(std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
  }

  static std::size_t size_of(const LoggedRequest& r) {
    std::size_t n = sizeof(LoggedRequest) + r.method.size() + r.target.size() + r.body.size();
    for (const auto& [k, v] : r.headers) n += k.size() + v.size() + 64;
    return n;
  }

  // Appends to the task's log unless a cap is reached; mu held.
  std::size_t append_log(TaskState& t, LoggedRequest&& r) {
    const std::size_t size = size_of(r);
    if (t.log.size() >= config.max_log_entries || log_bytes + size > config.max_log_bytes) {
      ++t.dropped;
      return static_cast<std::size_t>(-1);
    }
    log_bytes += size;
    t.log.push_back(std::move(r));
    return t.log.size() - 1;
  }

  Popped pop(std::int64_t task, LoggedRequest&& r) {
    std::lock_guard lock(mu);
    Popped p;
    auto it = tasks.find(task);
    if (it == tasks.end()) {
      p.why = fmt::format("task {} has no script: set one with POST /control/tasks/{}/script", task, task);
      return p;
    }
    TaskState& t = it->second;
    if (t.script.empty()) {
      p.why = fmt::format("the script of task {} is exhausted after {} requests", task, t.served);
      r.status = 404;
      p.slot = append_log(t, std::move(r));
      return p;
    }
    p.found = true;
    p.entry = std::move(t.script.front());
    t.script.pop_front();
    p.index = t.served++;
    p.epoch = t.release_epoch;
    r.entry = p.entry;
    r.index = p.index;
    p.slot = append_log(t, std::move(r));
    return p;
  }

  // A request of a known task answered without a script entry.
  void log_unscripted(std::int64_t task, LoggedRequest&& r, int status) {
    std::lock_guard lock(mu);
    auto it = tasks.find(task);
    if (it == tasks.end()) return;
    r.status = status;
    r.end = "complete";
    r.finished_ms = now_ms();
    append_log(it->second, std::move(r));
    changed.notify_all();
  }

  void finish(std::int64_t task, std::size_t slot, int status, std::string_view end) {
    const double t_ms = now_ms();
    std::lock_guard lock(mu);
    auto it = tasks.find(task);
    if (it != tasks.end() && slot < it->second.log.size()) {
      LoggedRequest& r = it->second.log[slot];
      r.status = status;
      r.end = std::string(end);
      r.finished_ms = t_ms;
    }
    changed.notify_all();
  }

  TaskLog log(std::int64_t task) const {
    std::lock_guard lock(mu);
    TaskLog out;
    out.task = task;
    if (auto it = tasks.find(task); it != tasks.end()) {
      out.requests = it->second.log;
      out.dropped = it->second.dropped;
    }
    return out;
  }

  // --- holds ------------------------------------------------------------------
  // Registers a held reply; nullopt when it need not wait (already released
  // or gate open, or the gate table is full).
  std::optional<std::uint64_t> begin_hold(const std::shared_ptr<Connection>& conn, std::uint64_t seq,
                                          std::int64_t task, std::uint64_t epoch, const std::string& gate) {
    std::lock_guard lock(mu);
    if (stopping) return std::nullopt;
    if (!gate.empty()) {
      auto g = gates.find(gate);
      if (g == gates.end()) {
        if (gates.size() >= kMaxGates) return std::nullopt;
        g = gates.emplace(gate, false).first;
      }
      if (g->second) return std::nullopt;
    } else {
      auto t = tasks.find(task);
      if (t != tasks.end() && t->second.release_epoch > epoch) return std::nullopt;
    }
    const std::uint64_t id = next_hold++;
    holds.emplace(id, HoldRec{task, gate, conn, seq});
    changed.notify_all();
    return id;
  }

  void end_hold(std::uint64_t id) {
    std::lock_guard lock(mu);
    holds.erase(id);
    changed.notify_all();
  }

  std::size_t held(std::int64_t task) const {
    std::size_t n = 0;
    for (const auto& [id, h] : holds) n += h.task == task;
    return n;
  }

  std::size_t finished(std::int64_t task) const {
    auto it = tasks.find(task);
    if (it == tasks.end()) return 0;
    std::size_t n = 0;
    for (const auto& r : it->second.log) n += !r.end.empty();
    return n;
  }

  // Posts the wake-up to the hold's strand. Called without mu: dropping the
  // last reference to a connection takes mu.
  using Wakeups = std::vector<std::pair<std::shared_ptr<Connection>, std::uint64_t>>;
  static void wake(Wakeups wakeups);
  std::size_t release(std::int64_t task);
  std::size_t open_gate(const std::string& name);

  bool add_connection(const std::shared_ptr<Connection>& c, std::uint64_t& id) {
    std::lock_guard lock(mu);
    if (stopping || conns.size() >= config.max_connections) return false;
    id = next_conn++;
    conns.emplace(id, c);
    ++accepted;
    return true;
  }
  std::size_t connection_count() const {
    std::lock_guard lock(mu);
    return conns.size();
  }
  void remove_connection(std::uint64_t id) {
    std::lock_guard lock(mu);
    conns.erase(id);
    changed.notify_all();
  }
};

namespace mock {

using Request = http::request<http::string_body>;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Server::Impl& srv, tcp::socket socket)
      : srv_(srv), socket_(std::move(socket)), wake_(socket_.get_executor()), deadline_(socket_.get_executor()) {}
  ~Connection() {
    if (id_) srv_.remove_connection(id_);
  }
  void set_id(std::uint64_t id) { id_ = id; }
  net::any_io_executor executor() { return socket_.get_executor(); }

  net::awaitable<void> run();

  // On the strand, posted by release / open_gate.
  void wake_hold(std::uint64_t seq) {
    if (!in_hold_ || seq != hold_seq_) return;
    hold_released_ = true;
    wake_.cancel();
  }
  // On the strand, posted by stop.
  void close_for_stop() {
    stopping_ = true;
    deadline_armed_ = false;
    deadline_.cancel();
    close_socket();
    wake_.cancel();
  }

 private:
  struct Outcome {
    int status = 0;
    std::string_view end = "complete";
    bool keep = false;
  };

  net::awaitable<std::optional<Request>> read_request(bool first);
  net::awaitable<bool> handle(Request& req);
  net::awaitable<bool> control(Request& req, const std::vector<std::string_view>& parts, bool keep);
  net::awaitable<Outcome> serve(std::int64_t task, const Popped& p, std::size_t body_bytes, bool keep);
  net::awaitable<Outcome> stream(std::int64_t task, const Popped& p, const ScriptEntry& as, std::size_t body_bytes,
                                 bool keep);
  net::awaitable<HoldEnd> hold(std::int64_t task, std::uint64_t epoch, std::string gate);
  net::awaitable<bool> write(std::string_view bytes);
  net::awaitable<bool> paced_write(std::string_view bytes, const ScriptEntry& e);
  net::awaitable<bool> delay(Clock::duration d);
  // Coroutines start lazily: parameters are values, never views of a caller's temporaries.
  net::awaitable<bool> send_json(int status, Json body, bool keep, wire::Headers extra = {});
  net::awaitable<bool> send_error(int status, std::string type, std::string message, bool keep,
                                  wire::Headers extra = {});
  net::awaitable<void> refuse(int status, std::string type, std::string message);
  net::awaitable<bool> not_allowed(std::string method, std::string allow, bool keep) {
    return send_error(405, "invalid_request_error", fmt::format("method {} is not allowed here: use {}", method, allow),
                      keep, {{"allow", allow}});
  }
  net::awaitable<void> stop_watch();
  void start_watch();
  void arm_deadline(std::chrono::milliseconds t);
  void disarm_deadline() {
    deadline_armed_ = false;
    deadline_.cancel();
  }
  void close_socket() {
    error_code ig;
    socket_.shutdown(tcp::socket::shutdown_both, ig);
    socket_.close(ig);
  }
  void reset_socket() {
    error_code ig;
    socket_.set_option(net::socket_base::linger(true, 0), ig);
    socket_.close(ig);
  }
  LoggedRequest record(const Request& req, double received_ms) const;

  Server::Impl& srv_;
  tcp::socket socket_;
  net::steady_timer wake_;      // holds and delays wait on it; cancel() wakes them
  net::steady_timer deadline_;  // the read timeout
  boost::beast::flat_buffer buffer_;
  std::uint64_t id_ = 0;
  bool stopping_ = false;

  std::uint64_t deadline_gen_ = 0;
  bool deadline_armed_ = false;
  bool timed_out_ = false;

  std::uint64_t hold_seq_ = 0;
  bool in_hold_ = false;
  bool hold_released_ = false;
  bool watch_pending_ = false;
  bool watch_stopping_ = false;
  bool peer_gone_ = false;
};

net::awaitable<void> run_connection(std::shared_ptr<Connection> c) { co_await c->run(); }

void Connection::arm_deadline(std::chrono::milliseconds t) {
  const std::uint64_t gen = ++deadline_gen_;
  deadline_armed_ = true;
  deadline_.expires_after(t);
  deadline_.async_wait([self = shared_from_this(), gen](error_code ec) {
    if (ec || !self->deadline_armed_ || self->deadline_gen_ != gen) return;
    self->timed_out_ = true;
    self->close_socket();
  });
}

LoggedRequest Connection::record(const Request& req, double received_ms) const {
  LoggedRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  for (const auto& field : req) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    r.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  r.body_bytes = req.body().size();
  r.body = req.body().substr(0, kMaxLoggedBody);
  r.received_ms = received_ms;
  return r;
}

net::awaitable<void> Connection::run() {
  try {
    bool first = true;
    while (!stopping_) {
      std::optional<Request> req = co_await read_request(first);
      first = false;
      if (!req) break;
      const bool keep = co_await handle(*req);
      if (!keep) break;
    }
  } catch (const std::exception& e) {
    // A bug of ours: the connection goes, the server stays (a fuzzing build
    // stops here instead, so the fuzzer keeps the input).
    std::fprintf(stderr, "relsim serve: connection ended by an internal error: %s\n", e.what());
#ifdef RELSIM_FUZZING
    std::abort();
#endif
  }
  disarm_deadline();
  close_socket();
}

net::awaitable<std::optional<Request>> Connection::read_request(bool first) {
  error_code ec;
  if (buffer_.size() == 0) {
    arm_deadline(first ? srv_.config.read_timeout : srv_.config.keep_alive_timeout);
    co_await socket_.async_wait(tcp::socket::wait_read, redirect(ec));
    if (ec || timed_out_ || stopping_) co_return std::nullopt;
    if (!first) arm_deadline(srv_.config.read_timeout);  // the request's own clock, from its first byte
  } else {
    arm_deadline(srv_.config.read_timeout);
  }
  http::request_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(kBodyLimit);
  co_await http::async_read_header(socket_, buffer_, parser, redirect(ec));
  if (!ec && !parser.is_done()) {
    const auto expect = parser.get()[http::field::expect];
    if (boost::beast::iequals(expect, "100-continue")) {
      if (!co_await write("HTTP/1.1 100 Continue\r\n\r\n")) co_return std::nullopt;
    }
    co_await http::async_read(socket_, buffer_, parser, redirect(ec));
  }
  disarm_deadline();
  if (!ec) co_return parser.release();
  if (timed_out_ || stopping_) co_return std::nullopt;
  if (ec == http::error::header_limit) {
    co_await refuse(431, "request_too_large", fmt::format("request headers exceed {} bytes", kHeaderLimit));
  } else if (ec == http::error::body_limit) {
    co_await refuse(413, "request_too_large", fmt::format("request body exceeds {} bytes", kBodyLimit));
  } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
             ec != http::error::end_of_stream && ec != http::error::partial_message) {
    co_await refuse(400, "invalid_request_error", fmt::format("malformed HTTP request: {}", ec.message()));
  }
  co_return std::nullopt;
}

// Answers and then closes after draining what the client still sends, so it
// reads the status rather than a reset (a lingering close).
net::awaitable<void> Connection::refuse(int status, std::string type, std::string message) {
  const std::string bytes =
      wire::json_response(status, wire::error_body(type, message), srv_.fresh_request_id(), false);
  if (!co_await write(bytes)) co_return;
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  arm_deadline(srv_.config.linger_timeout);
  std::array<char, 16384> scratch;
  std::size_t drained = 0;
  while (!ec && drained < kMaxDrain && !timed_out_ && !stopping_) {
    const std::size_t n = co_await socket_.async_read_some(net::buffer(scratch), redirect(ec));
    drained += n;
  }
  disarm_deadline();
  close_socket();
}

net::awaitable<bool> Connection::write(std::string_view bytes) {
  error_code ec;
  co_await net::async_write(socket_, net::buffer(bytes.data(), bytes.size()), redirect(ec));
  co_return !ec && !stopping_;
}

net::awaitable<bool> Connection::delay(Clock::duration d) {
  const auto until = Clock::now() + d;
  error_code ec;
  while (!stopping_ && Clock::now() < until) {
    wake_.expires_at(until);
    co_await wake_.async_wait(redirect(ec));
  }
  co_return !stopping_;
}

net::awaitable<bool> Connection::paced_write(std::string_view bytes, const ScriptEntry& e) {
  if (e.slice_bytes == 0 && e.bytes_per_second == 0.0) co_return co_await write(bytes);
  const std::size_t step = e.slice_bytes > 0 ? static_cast<std::size_t>(e.slice_bytes) : bytes.size();
  for (std::size_t i = 0; i < bytes.size(); i += step) {
    const std::string_view piece = bytes.substr(i, step);
    if (!co_await write(piece)) co_return false;
    if (e.bytes_per_second > 0.0) {
      const std::chrono::duration<double> wait(static_cast<double>(piece.size()) / e.bytes_per_second);
      if (!co_await delay(std::chrono::duration_cast<Clock::duration>(wait))) co_return false;
    }
  }
  co_return true;
}

net::awaitable<bool> Connection::send_json(int status, Json body, bool keep, wire::Headers extra) {
  co_return co_await write(wire::json_response(status, dump(body), srv_.fresh_request_id(), keep, extra));
}

net::awaitable<bool> Connection::send_error(int status, std::string type, std::string message, bool keep,
                                            wire::Headers extra) {
  co_return co_await write(
      wire::json_response(status, wire::error_body(type, message), srv_.fresh_request_id(), keep, extra));
}

// Watches the socket while a reply is held: the client going away (EOF or
// reset) ends the hold; bytes it sends ahead (a pipelined request) are kept
// in buffer_ for the next read.
void Connection::start_watch() {
  if (watch_pending_ || peer_gone_ || stopping_ || buffer_.size() >= kMaxPipelined) return;
  watch_pending_ = true;
  socket_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](error_code ec, std::size_t n) {
    self->watch_pending_ = false;
    self->buffer_.commit(n);
    if (ec) {
      if (!(ec == net::error::operation_aborted && self->watch_stopping_)) self->peer_gone_ = true;
    } else if (!self->watch_stopping_) {
      self->start_watch();
      if (self->watch_pending_) return;
    }
    self->wake_.cancel();
  });
}

net::awaitable<void> Connection::stop_watch() {
  if (!watch_pending_) co_return;
  watch_stopping_ = true;
  error_code ec;
  socket_.cancel(ec);
  while (watch_pending_) {
    wake_.expires_at(Clock::time_point::max());
    co_await wake_.async_wait(redirect(ec));
  }
  watch_stopping_ = false;
}

net::awaitable<HoldEnd> Connection::hold(std::int64_t task, std::uint64_t epoch, std::string gate) {
  const std::uint64_t seq = ++hold_seq_;
  hold_released_ = false;
  const auto id = srv_.begin_hold(shared_from_this(), seq, task, epoch, gate);
  if (!id) co_return stopping_ ? HoldEnd::stopped : HoldEnd::released;
  in_hold_ = true;
  start_watch();
  error_code ec;
  while (!hold_released_ && !peer_gone_ && !stopping_) {
    wake_.expires_at(Clock::time_point::max());
    co_await wake_.async_wait(redirect(ec));
  }
  in_hold_ = false;
  srv_.end_hold(*id);
  co_await stop_watch();
  co_return stopping_ ? HoldEnd::stopped : peer_gone_ ? HoldEnd::gone : HoldEnd::released;
}

std::string_view end_of(HoldEnd h) { return h == HoldEnd::stopped ? "stopped" : "client_gone"; }

net::awaitable<bool> Connection::handle(Request& req) {
  const double received = srv_.now_ms();
  const bool keep = req.keep_alive();
  const std::string_view target(req.target().data(), req.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  const auto parts = split_path(path);

  if (!parts.empty() && parts[0] == "control") co_return co_await control(req, parts, keep);

  std::optional<std::int64_t> task;
  if (parts.size() == 4 && parts[0] == "t" && parts[2] == "v1" && parts[3] == "messages") task = parse_task(parts[1]);
  if (!task) {
    co_await send_error(404, "not_found_error",
                        fmt::format("unknown path '{}': the mock serves POST /t/{{task}}/v1/messages",
                                    path.substr(0, 200)),
                        keep);
    co_return keep;
  }
  LoggedRequest rec = record(req, received);
  if (req.method() != http::verb::post) {
    srv_.log_unscripted(*task, std::move(rec), 405);
    co_await not_allowed(std::string(req.method_string()), "POST", keep);
    co_return keep;
  }
  const Json body = Json::parse(req.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("stream") || body["stream"] != true) {
    srv_.log_unscripted(*task, std::move(rec), 400);
    co_await send_error(400, "invalid_request_error",
                        body.is_discarded() ? "request body is not valid JSON"
                                            : "request body must be a JSON object with \"stream\": true",
                        keep);
    co_return keep;
  }
  const std::size_t body_bytes = req.body().size();
  const Popped p = srv_.pop(*task, std::move(rec));
  if (!p.found) {
    const bool ok = co_await send_error(404, "not_found_error", p.why, keep);
    if (p.slot != static_cast<std::size_t>(-1)) srv_.finish(*task, p.slot, 404, ok ? "complete" : "client_gone");
    co_return keep && ok;
  }
  const Outcome o = co_await serve(*task, p, body_bytes, keep);
  srv_.finish(*task, p.slot, o.status, o.end);
  co_return o.keep;
}

net::awaitable<Connection::Outcome> Connection::serve(std::int64_t task, const Popped& p, std::size_t body_bytes,
                                                      bool keep) {
  const ScriptEntry& e = p.entry;
  if (wire::streams(e)) co_return co_await stream(task, p, e, body_bytes, keep);
  if (!e.gate.empty()) {
    const HoldEnd h = co_await hold(task, p.epoch, e.gate);
    if (h != HoldEnd::released) co_return Outcome{0, end_of(h), false};
  }
  if (e.reply == Reply::empty) {
    close_socket();
    co_return Outcome{0, "closed", false};
  }
  if (e.reply == Reply::garbage) {
    const bool ok = co_await write(wire::garbage(task, p.index));
    close_socket();
    co_return Outcome{0, ok ? "closed" : "client_gone", false};
  }
  switch (e.fault) {
    case FaultKind::reset:
      reset_socket();
      co_return Outcome{0, "reset", false};
    case FaultKind::slow_headers: {
      const HoldEnd h = co_await hold(task, p.epoch, "");
      if (h != HoldEnd::released) co_return Outcome{0, end_of(h), false};
      ScriptEntry as = e;
      as.reply = Reply::ok;
      co_return co_await stream(task, p, as, body_bytes, keep);
    }
    default: {
      const wire::HttpError err = wire::http_error(e.fault);
      wire::Headers extra;
      if (e.fault == FaultKind::http_429) extra.emplace_back("retry-after", srv_.config.retry_after);
      if (e.fault == FaultKind::http_529) extra.emplace_back("x-should-retry", "true");
      const bool ok = co_await write(wire::json_response(err.status, wire::error_body(err.type, err.message),
                                                         wire::request_id(task, p.index), keep, extra));
      co_return Outcome{err.status, ok ? "complete" : "client_gone", ok && keep};
    }
  }
}

net::awaitable<Connection::Outcome> Connection::stream(std::int64_t task, const Popped& p, const ScriptEntry& as,
                                                       std::size_t body_bytes, bool keep) {
  const wire::StreamScript s = wire::stream_script(as, task, p.index, body_bytes);
  const Outcome gone{200, "client_gone", false};
  // An entry that is not shaped goes out in as few writes as it can: the
  // head and every chunk up to a hold (or the end) in one. A shaped one
  // writes each chunk on its own, as its pacing says. The bytes are the same.
  const bool coalesce = !as.shaped();
  std::string pending = wire::stream_head(wire::request_id(task, p.index), keep);
  if (!coalesce && !co_await write(std::exchange(pending, {}))) co_return gone;
  for (std::size_t i = 0; i <= s.events.size(); ++i) {
    if (i == s.gate_at && !as.gate.empty()) {
      const HoldEnd h = co_await hold(task, p.epoch, as.gate);
      if (h != HoldEnd::released) co_return Outcome{200, end_of(h), false};
    }
    if (i == s.hold_at) {
      if (!pending.empty() && !co_await write(std::exchange(pending, {}))) co_return gone;
      const HoldEnd h = co_await hold(task, p.epoch, "");
      if (h != HoldEnd::released) co_return Outcome{200, end_of(h), false};
    }
    if (i == s.events.size()) break;
    if (coalesce) {
      wire::append_chunk(pending, s.events[i]);
      continue;
    }
    if (as.chunk_delay_ms > 0 && !co_await delay(std::chrono::milliseconds(as.chunk_delay_ms))) co_return gone;
    if (!co_await paced_write(wire::chunk(s.events[i]), as)) co_return gone;
  }
  if (!s.clean_end) {
    if (!pending.empty() && !co_await write(std::exchange(pending, {}))) co_return gone;
    close_socket();
    co_return Outcome{200, "closed", false};
  }
  if (coalesce) {
    pending += wire::kLastChunk;
    if (!co_await write(std::exchange(pending, {}))) co_return gone;
  } else if (!co_await paced_write(wire::kLastChunk, as)) {
    co_return gone;
  }
  co_return Outcome{200, "complete", keep};
}

// Json replies are named values before each co_await: GCC 12 cannot keep the
// array behind an initializer list alive across one ("array used as initializer").
net::awaitable<bool> Connection::control(Request& req, const std::vector<std::string_view>& parts, bool keep) {
  const http::verb m = req.method();
  const std::string method(req.method_string());
  if (parts.size() == 2 && parts[1] == "health") {
    if (m != http::verb::get) co_return (co_await not_allowed(method, "GET", keep)) && keep;
    Json reply{{"status", "ok"}, {"port", srv_.bound_port}, {"connections", srv_.connection_count()}};
    co_return (co_await send_json(200, std::move(reply), keep)) && keep;
  }
  if (parts.size() == 4 && parts[1] == "tasks") {
    const auto task = parse_task(parts[2]);
    if (task && parts[3] == "script") {
      if (m != http::verb::post) co_return (co_await not_allowed(method, "POST", keep)) && keep;
      std::string problem;
      std::size_t entries = 0;
      try {
        const Json body = Json::parse(req.body(), nullptr, false);
        if (body.is_discarded() || !body.is_object() || !body.contains("responses"))
          throw InputError("script body must be a JSON object {\"responses\": [...]}");
        auto script = parse_script(body.at("responses"));
        entries = script.size();
        srv_.set_script(*task, std::move(script));
      } catch (const InputError& e) {
        problem = e.what();
      }
      if (!problem.empty()) co_return (co_await send_error(400, "invalid_request_error", problem, keep)) && keep;
      Json reply{{"task", *task}, {"entries", entries}};
      co_return (co_await send_json(200, std::move(reply), keep)) && keep;
    }
    if (task && parts[3] == "log") {
      if (m != http::verb::get) co_return (co_await not_allowed(method, "GET", keep)) && keep;
      co_return (co_await send_json(200, to_json(srv_.log(*task)), keep)) && keep;
    }
    if (task && parts[3] == "release") {
      if (m != http::verb::post) co_return (co_await not_allowed(method, "POST", keep)) && keep;
      const std::size_t n = srv_.release(*task);
      Json reply{{"task", *task}, {"released", n}};
      co_return (co_await send_json(200, std::move(reply), keep)) && keep;
    }
  }
  if (parts.size() == 4 && parts[1] == "gates" && parts[3] == "open") {
    if (m != http::verb::post) co_return (co_await not_allowed(method, "POST", keep)) && keep;
    std::string problem;
    std::size_t n = 0;
    try {
      n = srv_.open_gate(std::string(parts[2]));
    } catch (const InputError& e) {
      problem = e.what();
    }
    if (!problem.empty()) co_return (co_await send_error(400, "invalid_request_error", problem, keep)) && keep;
    Json reply{{"gate", std::string(parts[2])}, {"released", n}};
    co_return (co_await send_json(200, std::move(reply), keep)) && keep;
  }
  std::string path;
  for (const auto part : parts) path += "/" + std::string(part);
  co_await send_error(404, "not_found_error",
                      fmt::format("unknown control path '{}': use /control/health, /control/tasks/{{task}}/script|log|"
                                  "release or /control/gates/{{name}}/open",
                                  path.substr(0, 200)),
                      keep);
  co_return keep;
}

}  // namespace mock

// --- Impl: holds, lifecycle ---------------------------------------------------

void Server::Impl::wake(Wakeups wakeups) {
  for (auto& [c, seq] : wakeups) net::post(c->executor(), [c = c, seq = seq] { c->wake_hold(seq); });
}

std::size_t Server::Impl::release(std::int64_t task) {
  Wakeups wakeups;
  std::size_t n = 0;
  {
    std::lock_guard lock(mu);
    if (auto t = tasks.find(task); t != tasks.end()) ++t->second.release_epoch;
    for (const auto& [id, h] : holds)
      if (h.task == task && h.gate.empty()) {
        ++n;
        if (auto c = h.conn.lock()) wakeups.emplace_back(std::move(c), h.seq);
      }
  }
  wake(std::move(wakeups));
  return n;
}

std::size_t Server::Impl::open_gate(const std::string& name) {
  if (!wire::valid_gate_name(name))
    throw InputError(fmt::format("gate '{}' is not a gate name: use 1 to 64 of A-Z a-z 0-9 _ . -", name.substr(0, 100)));
  Wakeups wakeups;
  std::size_t n = 0;
  {
    std::lock_guard lock(mu);
    auto g = gates.find(name);
    if (g == gates.end()) {
      if (gates.size() >= kMaxGates)
        throw InputError(fmt::format("gate '{}' would be gate number {}: at most {} gates", name, gates.size() + 1,
                                     kMaxGates));
      g = gates.emplace(name, true).first;
    }
    g->second = true;
    for (const auto& [id, h] : holds)
      if (h.gate == name) {
        ++n;
        if (auto c = h.conn.lock()) wakeups.emplace_back(std::move(c), h.seq);
      }
  }
  wake(std::move(wakeups));
  return n;
}

net::awaitable<void> Server::Impl::accept_loop() {
  net::steady_timer pause(acceptor.get_executor());
  for (;;) {
    // With one thread every handler runs in order already: no strand.
    tcp::socket socket(config.threads > 1 ? net::any_io_executor(net::make_strand(ioc)) : ioc.get_executor());
    error_code ec;
    co_await acceptor.async_accept(socket, redirect(ec));
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) break;
      {
        std::lock_guard lock(mu);
        if (stopping) break;
      }
      // Out of descriptors or the like: wait a moment rather than spin.
      pause.expires_after(std::chrono::milliseconds(20));
      co_await pause.async_wait(redirect(ec));
      continue;
    }
    error_code ig;
    socket.set_option(tcp::no_delay(true), ig);
    auto conn = std::make_shared<Connection>(*this, std::move(socket));
    std::uint64_t id = 0;
    if (!add_connection(conn, id)) {
      conn->close_for_stop();  // over the cap (or stopping): closed at accept
      {
        std::lock_guard lock(mu);
        if (stopping) break;
      }
      continue;
    }
    conn->set_id(id);
    net::co_spawn(conn->executor(), run_connection(conn), [](std::exception_ptr) {});
  }
}

void Server::Impl::start_serving() {
  const tcp::endpoint endpoint(net::ip::make_address_v4("127.0.0.1"), static_cast<unsigned short>(config.port));
  error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw InputError(fmt::format("cannot listen on 127.0.0.1:{}: {}", config.port, ec.message()));
  bound_port = acceptor.local_endpoint().port();
  work.emplace(ioc.get_executor());
  net::co_spawn(acceptor.get_executor(), accept_loop(), [](std::exception_ptr) {});
  for (int i = 0; i < config.threads; ++i)
    threads.emplace_back([this] {
      for (;;) {
        try {
          ioc.run();
          return;
        } catch (const std::exception& e) {
          std::fprintf(stderr, "relsim serve: a handler failed: %s\n", e.what());
#ifdef RELSIM_FUZZING
          std::abort();
#endif
        }
      }
    });
}

void Server::Impl::stop() {
  std::lock_guard stop_lock(stop_mu);
  if (joined) return;
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard lock(mu);
    stopping = true;
    for (const auto& [id, weak] : conns)
      if (auto c = weak.lock()) open.push_back(std::move(c));
    changed.notify_all();
  }
  for (auto& c : open) net::post(c->executor(), [c] { c->close_for_stop(); });
  open.clear();
  net::post(acceptor.get_executor(), [this] {
    error_code ig;
    acceptor.close(ig);
  });
  work.reset();
  for (auto& t : threads)
    if (t.joinable()) t.join();
  threads.clear();
  joined = true;
}

// --- Server -------------------------------------------------------------------

Server::Server(ServerConfig config) {
  validate(config);
  impl_ = std::make_shared<Impl>(std::move(config));
  impl_->start_serving();
}

Server::~Server() {
  if (impl_) impl_->stop();
}

int Server::port() const { return impl_->bound_port; }

std::string Server::base_url(std::int64_t task) const {
  return fmt::format("http://127.0.0.1:{}/t/{}", impl_->bound_port, task);
}

void Server::set_script(std::int64_t task, std::vector<ScriptEntry> entries) {
  impl_->set_script(task, std::move(entries));
}

void Server::load_plan(const Plan& plan) {
  for (const TaskPlan& t : plan.tasks) {
    std::vector<ScriptEntry> entries;
    entries.reserve(t.requests.size());
    for (const PlannedRequest& r : t.requests) entries.push_back(r ? ScriptEntry::of(*r) : ScriptEntry::ok());
    set_script(t.task, std::move(entries));
  }
}

TaskLog Server::log(std::int64_t task) const { return impl_->log(task); }
std::size_t Server::release(std::int64_t task) { return impl_->release(task); }
std::size_t Server::open_gate(const std::string& name) { return impl_->open_gate(name); }

std::size_t Server::held(std::int64_t task) const {
  std::lock_guard lock(impl_->mu);
  return impl_->held(task);
}

bool Server::wait_held(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const {
  std::unique_lock lock(impl_->mu);
  return impl_->changed.wait_for(lock, limit, [&] { return impl_->held(task) == count; });
}

bool Server::wait_finished(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const {
  std::unique_lock lock(impl_->mu);
  return impl_->changed.wait_for(lock, limit, [&] { return impl_->finished(task) >= count; });
}

std::size_t Server::connections() const { return impl_->connection_count(); }

std::size_t Server::accepted() const {
  std::lock_guard lock(impl_->mu);
  return impl_->accepted;
}

void Server::stop() { impl_->stop(); }

}  // namespace relsim
