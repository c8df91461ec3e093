// The live client's I/O: every task a C++20 coroutine on one io_context
// (Boost.Asio awaitable), HTTP/1.1 through Boost.Beast. Timeouts are the
// deadlines of beast::tcp_stream: before each operation the stream's expiry
// is set to the earliest of the stage's own timeout, the call's deadline and
// the task's deadline, and when it fires the socket is closed (so a held
// response is released) and the error says which of the three it was.
//
// Connections are kept alive (HTTP/1.1 persistent connections, RFC 9112
// section 9.3) in slots: one per worker of a sliding window, one per
// position of a wave. Every task of a slot runs on the slot's strand (with
// one thread, on the io_context itself), so the idle connection needs no
// lock. A connection goes back to its slot only after a 200 stream read to
// its terminating chunk with message_stop, no byte left over, and no
// `connection: close` from the server; whatever saw a fault, a timeout or an
// error status is closed with its exchange. Before a reuse a non-blocking
// peek checks that the server has not closed it (as urllib3's
// is_connection_dropped does); if it closes it in the moment after the
// peek, the request fails before any response byte with a clean end of
// stream (or the write fails), and it is sent again on a fresh connection
// without being counted: the server never read it. A reset (RST) is never
// taken for that: it is the `reset` fault.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#include <sys/socket.h>
#include <cerrno>
#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "relsim/live/client/client.hpp"
#include "relsim/core/error.hpp"

namespace relsim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

Clock::duration to_duration(double seconds) {
  // Clamp: a deadline a century away is "never" and cannot overflow.
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::min(seconds, 3.0e9)));
}

// Opens when `expected` tasks have arrived; each waits on its own timer,
// which the last arrival moves to the past (on the waiter's own executor,
// so it is safe with many threads).
class StartGate {
 public:
  explicit StartGate(std::size_t expected) : expected_(expected) {}

  asio::awaitable<void> arrive_and_wait() {
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    asio::steady_timer timer(executor, Clock::time_point::max());
    {
      std::lock_guard lock(mutex_);
      if (waiting_.size() + 1 < expected_) {
        waiting_.push_back(&timer);
      } else {
        for (asio::steady_timer* t : waiting_)
          asio::post(t->get_executor(), [t] { t->expires_at(Clock::time_point::min()); });
        waiting_.clear();
        co_return;
      }
    }
    error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    // Both a fired and a moved timer mean the gate is open.
  }

 private:
  std::mutex mutex_;
  std::size_t expected_;
  std::vector<asio::steady_timer*> waiting_;
};

// One TCP connection to the server; it carries one request at a time.
struct Connection {
  explicit Connection(const asio::any_io_executor& ex) : stream(ex) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  bool used = false;  // has carried a whole response: a request on it now is a reuse
};

// Where a worker (or a wave's position) keeps its idle connection between
// two requests. Its tasks run one after another on its strand.
struct Slot {
  explicit Slot(asio::any_io_executor ex) : executor(std::move(ex)) {}
  asio::any_io_executor executor;  // a strand, or the io_context's own with one thread
  std::unique_ptr<Connection> idle;
};

// Whether an idle connection can carry another request: nothing buffered,
// and a non-blocking peek finds neither an end of stream, an error nor a
// byte the server sent unasked.
bool still_open(Connection& c) {
  if (c.buffer.size() != 0 || !c.stream.socket().is_open()) return false;
  char byte = 0;
  const ssize_t n = ::recv(c.stream.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

// One response in flight, on its connection.
struct Exchange {
  explicit Exchange(std::unique_ptr<Connection> c) : conn(std::move(c)) {
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // a stream is as long as it is
  }
  std::unique_ptr<Connection> conn;
  http::response_parser<http::buffer_body> parser;
};

// Which deadline an operation runs against.
enum class Limit { stage, call, task };

class TaskClient {
 public:
  TaskClient(const ClientConfig& config, const tcp::endpoint& endpoint, std::int64_t task, LiveTask& out,
             Clock::time_point run_start, Slot& slot)
      : cfg_(config), endpoint_(endpoint), task_(task), out_(out), run_start_(run_start), slot_(slot) {}

  asio::awaitable<void> run(StartGate* gate);

 private:
  struct HttpOptions {
    int max_retries = 0;
    int request_cap = std::numeric_limits<int>::max();  // requests of the call, in total
  };

  asio::awaitable<std::string> call(std::int64_t c);
  asio::awaitable<std::string> call_naive(std::int64_t c);
  asio::awaitable<std::string> call_layered(std::int64_t c);
  asio::awaitable<std::string> call_simple(std::int64_t c);

  asio::awaitable<std::unique_ptr<Exchange>> create_message(std::int64_t c, HttpOptions options);
  asio::awaitable<std::unique_ptr<Exchange>> send(std::int64_t c, int retry_count);
  asio::awaitable<std::string> read_message(Exchange& ex);
  // The slot's idle connection if it is still open; else none.
  std::unique_ptr<Connection> take_idle();
  // After a clean, complete response: back to the slot, unless the server
  // asked to close or keep-alive is off.
  void give_back(Exchange& ex);
  std::string request_bytes(std::int64_t c, int retry_count) const;
  asio::awaitable<void> pause(double seconds, FaultKind last);
  double next_jitter() { return jitter(cfg_.seed, task_, retries_++); }

  // Sets the stream's expiry for a stage that has its own timeout (or none).
  Limit expire(beast::tcp_stream& stream, std::optional<Clock::time_point> stage);
  template <class E>
  [[noreturn]] void fail(const E& error) {
    out_.seen.back() = error.kind();
    throw error;
  }
  // The error for an operation that timed out against `limit`.
  template <class StageError>
  [[noreturn]] void timed_out(Limit limit, FaultKind kind, const std::string& what);

  const ClientConfig& cfg_;
  tcp::endpoint endpoint_;
  std::int64_t task_;
  LiveTask& out_;
  Clock::time_point run_start_;
  Slot& slot_;
  Clock::time_point task_deadline_;
  std::optional<Clock::time_point> call_deadline_;
  int call_requests_ = 0;
  // The first request's connection, made before a coordinated start; its
  // outcome (a timeout or refusal too) counts as that request's.
  struct Preconnected {
    std::unique_ptr<Connection> conn;
    error_code error;
  };
  std::optional<Preconnected> preconnected_;
  std::int64_t retries_ = 0;  // of the task, both layers: the jitter's draw index
};

Limit TaskClient::expire(beast::tcp_stream& stream, std::optional<Clock::time_point> stage) {
  Clock::time_point at = task_deadline_;
  Limit limit = Limit::task;
  if (call_deadline_ && *call_deadline_ <= at) at = *call_deadline_, limit = Limit::call;
  if (stage && *stage < at) at = *stage, limit = Limit::stage;
  stream.expires_at(at);
  return limit;
}

template <class StageError>
void TaskClient::timed_out(Limit limit, FaultKind kind, const std::string& what) {
  switch (limit) {
    case Limit::task:
      out_.seen.back() = kind;
      throw TaskDeadlineExceeded(fmt::format("task deadline ({} s) passed while {}", cfg_.timing.task_timeout, what));
    case Limit::call:
      fail(CallTimeoutError(kind, fmt::format("call deadline ({} s) passed while {}", cfg_.timing.call_timeout, what)));
    case Limit::stage:
      fail(StageError(kind, fmt::format("timed out while {}", what)));
  }
  RELSIM_ASSERT(false);
}

asio::awaitable<void> TaskClient::pause(double seconds, FaultKind last) {
  const Clock::time_point until = Clock::now() + to_duration(seconds);
  if (call_deadline_ && *call_deadline_ < until)
    throw CallTimeoutError(last, fmt::format("the call deadline ({} s) comes before the next retry; last fault: {}",
                                             cfg_.timing.call_timeout, to_string(last)));
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, std::min(until, task_deadline_));
  error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (until > task_deadline_)
    throw TaskDeadlineExceeded(fmt::format("task deadline ({} s) passed in a backoff", cfg_.timing.task_timeout));
}

std::unique_ptr<Connection> TaskClient::take_idle() {
  std::unique_ptr<Connection> conn = std::move(slot_.idle);
  if (conn && !still_open(*conn)) conn.reset();
  return conn;
}

void TaskClient::give_back(Exchange& ex) {
  if (!cfg_.keep_alive || !ex.parser.keep_alive() || ex.conn->buffer.size() != 0) return;
  ex.conn->used = true;
  ex.conn->stream.expires_never();
  slot_.idle = std::move(ex.conn);
}

// The request as bytes, written by hand: the header order Beast would give.
std::string TaskClient::request_bytes(std::int64_t c, int retry_count) const {
  const std::string body = request_body(task_, c);
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}:{}\r\nUser-Agent: relsim-client/0.1\r\n"
      "Content-Type: application/json\r\nAccept: text/event-stream\r\n{}anthropic-version: 2023-06-01\r\n"
      "x-stainless-retry-count: {}\r\nContent-Length: {}\r\n\r\n{}",
      request_target(task_), cfg_.host, cfg_.port, cfg_.keep_alive ? "" : "Connection: close\r\n", retry_count, body.size(), body);
}

// One HTTP request: connect (or reuse the slot's connection), send, read
// the status line and headers. A 200 comes back as an open exchange;
// anything else is thrown.
asio::awaitable<std::unique_ptr<Exchange>> TaskClient::send(std::int64_t c, int retry_count) {
  ++out_.requests;
  ++call_requests_;
  out_.retry_counts.push_back(retry_count);
  out_.seen.push_back(std::nullopt);
  const ClientTiming& t = cfg_.timing;
  const std::string request = request_bytes(c, retry_count);
  std::unique_ptr<Connection> conn;
  error_code ec;
  if (preconnected_) {
    conn = std::move(preconnected_->conn);
    ec = preconnected_->error;
    preconnected_.reset();
  } else {
    conn = take_idle();
  }
  std::unique_ptr<Exchange> ex;
  for (;;) {
    Limit limit = Limit::stage;
    // The wave's gate may have held a reused connection a while: look again.
    if (conn && conn->used && !still_open(*conn)) conn.reset();
    if (!conn) {
      const asio::any_io_executor executor = co_await asio::this_coro::executor;
      conn = std::make_unique<Connection>(executor);
      limit = expire(conn->stream, Clock::now() + to_duration(t.connect_timeout));
      co_await conn->stream.async_connect(endpoint_, asio::redirect_error(asio::use_awaitable, ec));
    }
    if (ec == beast::error::timeout) timed_out<ApiTimeoutError>(limit, FaultKind::slow_headers, "connecting");
    if (ec) fail(ApiConnectionError(FaultKind::reset, fmt::format("connection failed: {}", ec.message())));
    const bool reused = conn->used;

    // The header timeout runs from here: writing the request is part of it.
    limit = expire(conn->stream, Clock::now() + to_duration(t.header_timeout));
    co_await asio::async_write(conn->stream, asio::buffer(request), asio::redirect_error(asio::use_awaitable, ec));
    if (reused && ec && ec != beast::error::timeout) {
      // The server closed it while idle: the request never left.
      conn.reset();
      ec = {};
      continue;
    }
    if (ec == beast::error::timeout) timed_out<ApiTimeoutError>(limit, FaultKind::slow_headers, "sending the request");
    if (ec) fail(ApiConnectionError(FaultKind::reset, fmt::format("sending the request failed: {}", ec.message())));
    ex = std::make_unique<Exchange>(std::move(conn));
    co_await http::async_read_header(ex->conn->stream, ex->conn->buffer, ex->parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
    if (reused && ec == http::error::end_of_stream) {
      // A clean end before any byte of a response on a reused connection:
      // the server closed it while idle, before it read the request.
      ex.reset();
      ec = {};
      continue;
    }
    if (ec == beast::error::timeout)
      timed_out<ApiTimeoutError>(limit, FaultKind::slow_headers, "waiting for the response headers");
    if (ec) fail(ApiConnectionError(FaultKind::reset, fmt::format("no response: {}", ec.message())));
    break;
  }

  const auto& head = ex->parser.get();
  const int status = static_cast<int>(head.result_int());
  if (status == 200) co_return ex;

  // An error status: read its (small) JSON body for the message, as far as
  // the header deadline allows; a body that breaks off changes nothing. The
  // connection closes with the exchange: it saw a fault.
  std::string body;
  char buf[4096];
  while (!ex->parser.is_done() && body.size() < 65536) {
    ex->parser.get().body().data = buf;
    ex->parser.get().body().size = sizeof buf;
    co_await http::async_read_some(ex->conn->stream, ex->conn->buffer, ex->parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
    body.append(buf, sizeof buf - ex->parser.get().body().size);
    if (ec == http::error::need_buffer) continue;
    if (ec) break;
  }
  const FaultKind kind = fault_kind_of_status(status);
  const auto header = [&](std::string_view name) -> std::optional<std::string> {
    const auto it = head.find(beast::string_view(name.data(), name.size()));
    if (it == head.end()) return std::nullopt;
    return std::string(it->value());
  };
  RetryHeaders rh{header("x-should-retry"), header("retry-after-ms"), header("retry-after")};
  std::string what = fmt::format("HTTP {}: {}", status, body.substr(0, 300));
  if (kind == FaultKind::http_400 && !should_retry_status(status, rh.should_retry))
    fail(BadRequestError(kind, status, std::move(rh), what));
  fail(ApiStatusError(kind, status, std::move(rh), what));
}

// The HTTP layer, as the SDKs retry: connection errors, timeouts before the
// response headers and retryable statuses, up to max_retries times, each
// request telling the server its retry number.
asio::awaitable<std::unique_ptr<Exchange>> TaskClient::create_message(std::int64_t c, HttpOptions o) {
  for (int k = 0;; ++k) {
    double wait = 0.0;
    FaultKind kind{};
    try {
      co_return co_await send(c, k);
    } catch (const ApiStatusError& e) {
      if (k >= o.max_retries || call_requests_ >= o.request_cap || !should_retry_status(e.status, e.headers.should_retry))
        throw;
      kind = e.kind();
      wait = http_retry_wait(e.headers, k, next_jitter(), cfg_.timing);
    } catch (const ApiConnectionError& e) {
      if (k >= o.max_retries || call_requests_ >= o.request_cap) throw;
      kind = e.kind();
      wait = cfg_.timing.backoff(k, next_jitter());
    }
    co_await pause(wait, kind);
  }
}

// Reads the event stream to its end, an idle timeout between two events
// (none under naive), and returns the answer.
asio::awaitable<std::string> TaskClient::read_message(Exchange& ex) {
  MessageStream message;
  SseParser sse;
  const bool idle = cfg_.policy.kind != PolicyKind::naive;
  Clock::time_point last_event = Clock::now();
  char buf[8192];
  error_code ec;
  while (!ex.parser.is_done()) {
    std::optional<Clock::time_point> stage;
    if (idle) stage = last_event + to_duration(cfg_.timing.idle_timeout);
    const Limit limit = expire(ex.conn->stream, stage);
    ex.parser.get().body().data = buf;
    ex.parser.get().body().size = sizeof buf;
    co_await http::async_read_some(ex.conn->stream, ex.conn->buffer, ex.parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
    const std::size_t got = sizeof buf - ex.parser.get().body().size;
    if (got > 0) {
      const std::size_t before = sse.events();
      try {
        sse.feed(std::string_view(buf, got), [&](const SseEvent& event) { message.on_event(event); });
      } catch (const ClientError& e) {
        out_.seen.back() = e.kind();
        throw;
      } catch (const std::length_error& e) {
        fail(StreamError(FaultKind::malformed, e.what()));
      }
      if (sse.events() != before) last_event = Clock::now();
    }
    if (ec == http::error::need_buffer) continue;
    if (ec == beast::error::timeout) timed_out<StreamIdleTimeout>(limit, FaultKind::stall, "waiting for the next event");
    if (ec) fail(StreamError(FaultKind::cut, fmt::format("the stream broke off: {}", ec.message())));
  }
  try {
    message.on_end();
  } catch (const ClientError& e) {
    out_.seen.back() = e.kind();
    throw;
  }
  give_back(ex);
  co_return message.text();
}

asio::awaitable<std::string> TaskClient::call(std::int64_t c) {
  call_requests_ = 0;
  call_deadline_.reset();
  if (cfg_.policy.kind != PolicyKind::naive) call_deadline_ = Clock::now() + to_duration(cfg_.timing.call_timeout);
  switch (cfg_.policy.kind) {
    case PolicyKind::naive: co_return co_await call_naive(c);
    case PolicyKind::layered:
    case PolicyKind::budgeted: co_return co_await call_layered(c);
    case PolicyKind::simple: co_return co_await call_simple(c);
  }
  RELSIM_ASSERT(false);
  co_return std::string();
}

// A first agent loop: the SDK retries what it retries; around it, the loop
// catches connection and timeout errors and the stream's own breakage, and
// lets everything else escape.
asio::awaitable<std::string> TaskClient::call_naive(std::int64_t c) {
  for (int round = 0;; ++round) {
    FaultKind kind{};
    try {
      auto ex = co_await create_message(c, HttpOptions{cfg_.policy.s});
      co_return co_await read_message(*ex);
    } catch (const ApiConnectionError& e) {
      if (round >= cfg_.policy.r) throw;
      kind = e.kind();
    } catch (const StreamError& e) {
      if (round >= cfg_.policy.r) throw;
      kind = e.kind();
    }
    co_await pause(cfg_.timing.backoff(round, next_jitter()), kind);
  }
}

// Each fault retried by exactly one layer: what fails before the response is
// the SDK's (its retries spent, the call ends), what fails inside the stream
// is the loop's, which starts a fresh SDK call with its own retries. The
// budgeted policy caps the call's requests of both layers together.
asio::awaitable<std::string> TaskClient::call_layered(std::int64_t c) {
  const Policy& p = cfg_.policy;
  const int cap = p.kind == PolicyKind::budgeted ? p.B : std::numeric_limits<int>::max();
  for (int round = 0;; ++round) {
    std::unique_ptr<Exchange> ex;
    try {
      ex = co_await create_message(c, HttpOptions{p.s, cap});
    } catch (const BadRequestError&) {
      throw;
    } catch (const ClientError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    }
    FaultKind kind{};
    try {
      co_return co_await read_message(*ex);
    } catch (const CallTimeoutError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    } catch (const ClientError& e) {
      if (round >= p.r || call_requests_ >= cap) throw RetriesExhausted(e.kind(), e.what());
      kind = e.kind();
    }
    ex.reset();
    try {
      co_await pause(cfg_.timing.backoff(round, next_jitter()), kind);
    } catch (const CallTimeoutError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    }
  }
}

// Every failure is one attempt of the call; no SDK retries.
asio::awaitable<std::string> TaskClient::call_simple(std::int64_t c) {
  for (int attempt = 0;; ++attempt) {
    FaultKind kind{};
    try {
      auto ex = co_await create_message(c, HttpOptions{0});
      co_return co_await read_message(*ex);
    } catch (const BadRequestError&) {
      throw;
    } catch (const CallTimeoutError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    } catch (const ClientError& e) {
      if (attempt >= cfg_.policy.r) throw RetriesExhausted(e.kind(), e.what());
      kind = e.kind();
    }
    try {
      co_await pause(cfg_.timing.backoff(attempt, next_jitter()), kind);
    } catch (const CallTimeoutError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    }
  }
}

// The harness around the agent: it sorts what ends the task into outcomes.
asio::awaitable<void> TaskClient::run(StartGate* gate) {
  out_.task = task_;
  if (gate) {
    // Connect first, then wait at the gate: once it opens, a task's first
    // request is one write away, so a wave's requests leave together.
    // The slot's idle connection serves if it is still open.
    // (No co_await inside the braces: GCC 12 miscompiles that.)
    Preconnected first{take_idle(), {}};
    if (!first.conn) {
      const asio::any_io_executor executor = co_await asio::this_coro::executor;
      first.conn = std::make_unique<Connection>(executor);
      first.conn->stream.expires_after(to_duration(cfg_.timing.connect_timeout));
      co_await first.conn->stream.async_connect(endpoint_, asio::redirect_error(asio::use_awaitable, first.error));
    }
    preconnected_ = std::move(first);
    co_await gate->arrive_and_wait();
  }
  const Clock::time_point start = Clock::now();
  out_.started = std::chrono::duration<double>(start - run_start_).count();
  task_deadline_ = start + to_duration(cfg_.timing.task_timeout);
  try {
    for (std::int64_t c = 0; c < cfg_.policy.n; ++c) {
      out_.text = co_await call(c);
      if (out_.text != expected_text(task_))
        throw WrongAnswerError(fmt::format("call {} got \"{}\", not \"{}\"", c, out_.text, expected_text(task_)));
    }
    out_.outcome = {Outcome::done, std::nullopt};
  } catch (const RetriesExhausted& e) {
    out_.outcome = {Outcome::env_error, e.kind()};
    out_.error = e.what();
  } catch (const BadRequestError& e) {
    out_.outcome = {Outcome::harness_error, std::nullopt};
    out_.error = e.what();
  } catch (const TaskDeadlineExceeded& e) {
    out_.outcome = {Outcome::hang, std::nullopt};
    out_.error = e.what();
  } catch (const WrongAnswerError& e) {
    out_.outcome = {Outcome::crash, std::nullopt};
    out_.text_ok = false;
    out_.error = e.what();
  } catch (const ClientError& e) {
    out_.outcome = {Outcome::crash, e.kind()};
    out_.error = e.what();
  } catch (const std::exception& e) {
    out_.outcome = {Outcome::crash, std::nullopt};
    out_.error = e.what();
  }
  out_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
}

asio::awaitable<void> run_task(const ClientConfig& config, tcp::endpoint endpoint, std::int64_t task, LiveTask& out,
                               Clock::time_point run_start, StartGate* gate, Slot& slot) {
  TaskClient client(config, endpoint, task, out, run_start, slot);
  co_await client.run(gate);
}

// A sliding window: each worker takes the next task when its last one ends.
asio::awaitable<void> run_worker(const ClientConfig& config, tcp::endpoint endpoint, std::int64_t first_task,
                                 std::vector<LiveTask>& out, std::atomic<std::size_t>& next,
                                 Clock::time_point run_start, Slot& slot) {
  for (std::size_t i = next++; i < out.size(); i = next++) {
    TaskClient client(config, endpoint, first_task + static_cast<std::int64_t>(i), out[i], run_start, slot);
    co_await client.run(nullptr);
  }
}

void run_io(asio::io_context& ioc, int threads) {
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : pool) t.join();
  ioc.restart();
}

tcp::endpoint resolve(const ClientConfig& config) {
  error_code ec;
  const auto address = asio::ip::make_address(config.host, ec);
  if (!ec) return {address, config.port};
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  const auto results = resolver.resolve(config.host, std::to_string(config.port), ec);
  if (ec || results.empty())
    throw InputError(fmt::format("host = '{}' does not resolve: {}", config.host, ec ? ec.message() : "no address"));
  return results.begin()->endpoint();
}

}  // namespace

std::vector<LiveTask> run_live(const ClientConfig& config, std::int64_t first_task, std::int64_t count) {
  validate(config);
  if (count < 0) throw InputError(fmt::format("count = {} is out of range: it must be >= 0", count));
  if (first_task < 0) throw InputError(fmt::format("first task = {} is out of range: it must be >= 0", first_task));
  const tcp::endpoint endpoint = resolve(config);
  std::vector<LiveTask> out(static_cast<std::size_t>(count));
  asio::io_context ioc(config.threads);
  const Clock::time_point run_start = Clock::now();
  const auto width = static_cast<std::size_t>(config.concurrency);
  // After the io_context: the idle connections close before it goes.
  std::vector<Slot> slots;
  slots.reserve(std::min(width, out.size()));
  for (std::size_t w = 0; w < std::min(width, out.size()); ++w) {
    // One thread runs everything in order: a strand would only cost.
    if (config.threads > 1) slots.emplace_back(asio::make_strand(ioc));
    else slots.emplace_back(ioc.get_executor());
  }
  if (config.coordinated_start) {
    // Position w of every wave runs in slot w: a wave reuses the connections
    // of the wave before.
    for (std::size_t begin = 0; begin < out.size(); begin += width) {
      const std::size_t end = std::min(out.size(), begin + width);
      StartGate gate(end - begin);
      for (std::size_t i = begin; i < end; ++i) {
        Slot& slot = slots[i - begin];
        asio::co_spawn(slot.executor,
                       run_task(config, endpoint, first_task + static_cast<std::int64_t>(i), out[i], run_start, &gate,
                                slot),
                       asio::detached);
      }
      run_io(ioc, config.threads);
    }
  } else {
    std::atomic<std::size_t> next{0};
    for (Slot& slot : slots)
      asio::co_spawn(slot.executor, run_worker(config, endpoint, first_task, out, next, run_start, slot),
                     asio::detached);
    run_io(ioc, config.threads);
  }
  return out;
}

}  // namespace relsim
