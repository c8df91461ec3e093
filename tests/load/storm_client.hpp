#pragma once
// For the load test (load_test.cpp): the storm client. Raw Asio on one
// io_context run by one thread, so its state needs no lock: a Round opens
// its connections one at a time, runs each as a coroutine that behaves as
// its Kind says (streams to the end, vanishes mid-stream, trickles its
// request, or stalls it), and lets the test thread wait on a mutex-guarded
// tally (wait_ready, wait_done). A watchdog closes every socket at the
// round's hard deadline, so a misbehaving server turns into a failure, never
// a hang.
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without it

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/redirect_error.hpp>
#include <fmt/format.h>

#include "load/load_wire.hpp"
#include "relsim/core/json.hpp"
#include "relsim/server/server.hpp"

namespace relsim::test::storm {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::system::error_code;
using relsim::Json;
using relsim::ScriptEntry;
using relsim::Server;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// What one client connection does.
enum class Kind {
  healthy,        // whole request at once, reads the whole stream, then closes (keep-alive)
  healthy_close,  // the same with "connection: close": the server closes after the stream
  vanish_held,    // reads two events, then goes away while the reply waits at the gate
  vanish_paced,   // a paced stream (chunk_delay_ms): goes away after the first delta
  trickle,        // sends its request a few bytes at a time with pauses, then reads the whole stream
  stall_head,     // sends part of the request head and waits: the server must time it out
  stall_body,     // sends the head and half the body and waits: the same
};

inline constexpr std::size_t kTrickleBytes = 8;
inline constexpr auto kTricklePause = 10ms;

inline auto redirect(error_code& ec) { return net::redirect_error(net::use_awaitable, ec); }

// A one-shot event on the client's single thread. The timer never expires;
// fire() cancels it, and waiters look at the flag, so a waiter that arrives
// late passes straight through.
class Latch {
 public:
  explicit Latch(net::io_context& io) : timer_(io, Clock::time_point::max()) {}
  net::awaitable<void> wait() {
    error_code ec;
    while (!fired_) co_await timer_.async_wait(redirect(ec));
  }
  void fire() {
    fired_ = true;
    timer_.cancel();
  }

 private:
  net::steady_timer timer_;
  bool fired_ = false;
};

// One client connection. Touched only on the client thread.
struct Conn {
  Conn(net::io_context& io, Kind k, std::int64_t t) : kind(k), task(t), socket(io) {}
  Kind kind;
  std::int64_t task;
  tcp::socket socket;
  std::string buf;  // received, not yet parsed
  Response response;
  bool ready = false;          // reached its waiting point while every other connection was open
  bool went_away = false;      // a vanisher that closed or reset mid-stream
  bool closed_by_server = false;  // EOF or reset from the server
  std::size_t received = 0;    // bytes from the server
  std::string end;             // how the client saw its connection end
  std::string problem;         // empty: behaved as its kind must
};

// One storm (or a single request) from the client's side. The test thread
// builds it, starts `thread`, and waits on `mu`/`cv` for `ready` and `done`;
// everything else is the client thread's alone until it has been joined.
class Round {
 public:
  Round(int port, std::int64_t index, Clock::time_point hard_deadline)
      : endpoint_(net::ip::make_address_v4("127.0.0.1"), static_cast<unsigned short>(port)),
        index_(index),
        go_(io_),
        watchdog_(io_) {
    watchdog_.expires_at(hard_deadline);
  }
  ~Round() { join(); }
  Round(const Round&) = delete;
  Round& operator=(const Round&) = delete;

  void add(Kind kind, std::int64_t task) { conns_.push_back(std::make_unique<Conn>(io_, kind, task)); }
  const std::vector<std::unique_ptr<Conn>>& conns() const { return conns_; }
  std::int64_t index() const { return index_; }

  void start() {
    net::co_spawn(io_, connect_all(), [](std::exception_ptr) {});
    watchdog_.async_wait([this](error_code ec) {
      if (!ec) abort_all();
    });
    thread_ = std::thread([this] { io_.run(); });
  }
  // Lets vanish_held go away and trickle go on sending.
  void go() {
    net::post(io_, [this] { go_.fire(); });
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

  // Waits until every connection is ready (or finished), or until `until`.
  bool wait_ready(Clock::time_point until) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, until, [&] { return ready_ + unready_done_ >= conns_.size(); });
  }
  bool wait_done(Clock::time_point until) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, until, [&] { return done_ >= conns_.size(); });
  }
  std::size_t ready_count() {
    std::lock_guard lock(mu_);
    return ready_;
  }
  // Read after join().
  int peak_open() const { return peak_open_; }
  bool watchdog_fired() const { return aborted_; }

 private:
  net::awaitable<void> connect_all();
  net::awaitable<void> run(Conn& c);
  net::awaitable<void> session(Conn& c);
  net::awaitable<bool> fill(Conn& c);
  net::awaitable<bool> read_head(Conn& c);
  net::awaitable<bool> read_chunk(Conn& c);
  net::awaitable<bool> send(Conn& c, std::string bytes);
  net::awaitable<bool> trickle(Conn& c, std::string bytes);
  void mark_ready(Conn& c) {
    c.ready = true;
    std::lock_guard lock(mu_);
    ++ready_;
    cv_.notify_all();
  }
  void finish(Conn& c) {
    error_code ig;
    if (c.socket.is_open()) {
      c.socket.close(ig);
      --open_;
    }
    std::lock_guard lock(mu_);
    if (!c.ready) ++unready_done_;
    if (++done_ == conns_.size()) watchdog_.cancel();
    cv_.notify_all();
  }
  // The hard deadline: close every socket, so every pending operation ends.
  void abort_all() {
    aborted_ = true;
    go_.fire();
    for (auto& c : conns_) {
      error_code ig;
      c->socket.close(ig);
    }
  }

  net::io_context io_;
  tcp::endpoint endpoint_;
  std::int64_t index_;
  std::vector<std::unique_ptr<Conn>> conns_;
  Latch go_;
  net::steady_timer watchdog_;
  int open_ = 0;
  int peak_open_ = 0;
  bool aborted_ = false;
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t ready_ = 0;
  std::size_t unready_done_ = 0;
  std::size_t done_ = 0;
};

// One connect at a time: the handshake completes in the kernel's backlog, so
// this is quick, and it never overruns the listen queue.
inline net::awaitable<void> Round::connect_all() {
  for (auto& c : conns_) {
    error_code ec;
    if (!aborted_) co_await c->socket.async_connect(endpoint_, redirect(ec));
    if (aborted_ || ec) {
      c->problem = fmt::format("connect failed: {}", aborted_ ? "watchdog" : ec.message());
      finish(*c);
      continue;
    }
    c->socket.set_option(tcp::no_delay(true), ec);
    peak_open_ = std::max(peak_open_, ++open_);
    net::co_spawn(io_, run(*c), [](std::exception_ptr) {});
  }
}

inline net::awaitable<void> Round::run(Conn& c) {
  try {
    co_await session(c);
  } catch (const std::exception& e) {
    c.problem = fmt::format("client exception: {}", e.what());
  }
  if (aborted_ && c.problem.empty() && !c.went_away) c.problem = "still open at the watchdog";
  finish(c);
}

inline net::awaitable<bool> Round::fill(Conn& c) {
  std::array<char, 4096> tmp;
  error_code ec;
  const std::size_t n = co_await c.socket.async_read_some(net::buffer(tmp), redirect(ec));
  c.buf.append(tmp.data(), n);
  c.received += n;
  if (!ec) co_return true;
  c.end = ec == net::error::eof ? "eof" : ec == net::error::connection_reset ? "reset" : ec.message();
  c.closed_by_server = !aborted_ && (ec == net::error::eof || ec == net::error::connection_reset);
  co_return false;
}

inline net::awaitable<bool> Round::read_head(Conn& c) {
  std::size_t end;
  while ((end = c.buf.find("\r\n\r\n")) == std::string::npos)
    if (!co_await fill(c)) co_return false;
  const std::string head = c.buf.substr(0, end + 2);
  c.buf.erase(0, end + 4);
  const std::size_t line_end = head.find("\r\n");
  if (head.rfind("HTTP/1.1 ", 0) != 0) co_return false;
  c.response.status = std::atoi(head.substr(9, 3).c_str());
  for (std::size_t pos = line_end + 2; pos < head.size();) {
    const std::size_t eol = head.find("\r\n", pos);
    const std::string line = head.substr(pos, eol - pos);
    const std::size_t colon = line.find(':');
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
    std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    c.response.headers.emplace_back(std::move(name), std::move(value));
    pos = eol + 2;
  }
  co_return true;
}

// One chunk (the zero-length one sets `complete`); false at the end of the
// connection or on a malformed chunk.
inline net::awaitable<bool> Round::read_chunk(Conn& c) {
  std::size_t eol;
  while ((eol = c.buf.find("\r\n")) == std::string::npos)
    if (!co_await fill(c)) co_return false;
  std::size_t size = 0;
  try {
    size = std::stoul(c.buf.substr(0, eol), nullptr, 16);
  } catch (const std::exception&) {
    c.problem = "malformed chunk size";
    co_return false;
  }
  while (c.buf.size() < eol + 2 + size + 2)
    if (!co_await fill(c)) co_return false;
  if (c.buf.compare(eol + 2 + size, 2, "\r\n") != 0) {
    c.problem = "chunk not followed by CRLF";
    co_return false;
  }
  if (size == 0) c.response.complete = true;
  else c.response.chunks.push_back(c.buf.substr(eol + 2, size));
  c.buf.erase(0, eol + 2 + size + 2);
  co_return true;
}

inline net::awaitable<bool> Round::send(Conn& c, std::string bytes) {
  error_code ec;
  co_await net::async_write(c.socket, net::buffer(bytes), redirect(ec));
  if (ec && c.problem.empty()) c.problem = fmt::format("send failed: {}", ec.message());
  co_return !ec;
}

inline net::awaitable<bool> Round::trickle(Conn& c, std::string bytes) {
  net::steady_timer pause(io_);
  for (std::size_t i = 0; i < bytes.size(); i += kTrickleBytes) {
    if (!co_await send(c, bytes.substr(i, kTrickleBytes))) co_return false;
    pause.expires_after(kTricklePause);
    error_code ec;
    co_await pause.async_wait(redirect(ec));
    if (aborted_) co_return false;
  }
  co_return true;
}

inline net::awaitable<void> Round::session(Conn& c) {
  const std::int64_t k = index_;
  switch (c.kind) {
    case Kind::healthy:
    case Kind::healthy_close: {
      const bool close = c.kind == Kind::healthy_close;
      if (!co_await send(c, request(c.task, close))) co_return;
      // Two events, then the reply waits at the gate.
      if (!co_await read_head(c) || !co_await read_chunk(c) || !co_await read_chunk(c)) break;
      mark_ready(c);
      while (!c.response.complete)
        if (!co_await read_chunk(c)) break;
      if (close) {
        while (co_await fill(c)) {
        }
        if (!c.closed_by_server || !c.buf.empty()) c.problem = "the server did not close after connection: close";
        if (c.response.header("connection") != "close") c.problem = "connection header is not close";
      }
      if (c.problem.empty()) c.problem = check_stream(c.response, c.task, k);
      co_return;
    }
    case Kind::vanish_held:
    case Kind::vanish_paced: {
      if (!co_await send(c, request(c.task))) co_return;
      if (!co_await read_head(c) || !co_await read_chunk(c) || !co_await read_chunk(c)) break;
      mark_ready(c);
      if (c.kind == Kind::vanish_held) {
        co_await go_.wait();
      } else if (!co_await read_chunk(c)) {  // the first delta, after the gate
        break;
      }
      if (aborted_) break;
      // Half close with a reset, half with an orderly FIN.
      error_code ig;
      if (c.task % 2 == 0) c.socket.set_option(net::socket_base::linger(true, 0), ig);
      c.socket.close(ig);
      --open_;
      c.went_away = true;
      c.end = c.task % 2 == 0 ? "client reset" : "client close";
      co_return;
    }
    case Kind::trickle: {
      const std::string bytes = request(c.task);
      if (!co_await send(c, bytes.substr(0, kTrickleBytes))) co_return;
      mark_ready(c);
      co_await go_.wait();
      if (!co_await trickle(c, bytes.substr(kTrickleBytes))) co_return;
      if (!co_await read_head(c)) break;
      while (!c.response.complete)
        if (!co_await read_chunk(c)) break;
      if (c.problem.empty()) c.problem = check_stream(c.response, c.task, k);
      co_return;
    }
    case Kind::stall_head:
    case Kind::stall_body: {
      const std::string body = request_body(c.task);
      const std::string head = request_head(c.task, body.size(), false);
      const std::string part =
          c.kind == Kind::stall_head ? head.substr(0, head.size() / 2) : head + body.substr(0, body.size() / 2);
      if (!co_await send(c, part)) co_return;
      mark_ready(c);
      // The server owes us nothing but the end of the connection.
      while (co_await fill(c)) {
      }
      if (!c.closed_by_server) c.problem = fmt::format("stalled request not timed out by the server ({})", c.end);
      co_return;
    }
  }
  if (c.problem.empty())
    c.problem = fmt::format("connection ended early ({}) after {} bytes, {} chunks", c.end, c.received,
                            c.response.chunks.size());
}

}  // namespace relsim::test::storm
