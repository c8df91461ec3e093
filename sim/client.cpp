// The live client's I/O: every task a C++20 coroutine on one io_context
// (Boost.Asio awaitable), HTTP/1.1 through Boost.Beast, one TCP connection
// per request. Timeouts are the deadlines of beast::tcp_stream: before each
// operation the stream's expiry is set to the earliest of the stage's own
// timeout, the call's deadline and the task's deadline, and when it fires
// the socket is closed (so a held response is released) and the error says
// which of the three it was.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
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

#include "relsim/client.hpp"
#include "relsim/error.hpp"

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

// One response in flight.
struct Exchange {
  explicit Exchange(const asio::any_io_executor& ex) : stream(ex) {
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // a stream is as long as it is
  }
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
};

// Which deadline an operation runs against.
enum class Limit { stage, call, task };

class TaskClient {
 public:
  TaskClient(const ClientConfig& config, const tcp::endpoint& endpoint, std::int64_t task, LiveTask& out,
             Clock::time_point run_start)
      : cfg_(config), endpoint_(endpoint), task_(task), out_(out), run_start_(run_start) {}

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
  Clock::time_point task_deadline_;
  std::optional<Clock::time_point> call_deadline_;
  int call_requests_ = 0;
  // The first request's connection, made before a coordinated start; its
  // outcome (a timeout or refusal too) counts as that request's.
  struct Preconnected {
    std::unique_ptr<Exchange> exchange;
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

// One HTTP request: connect, send, read the status line and headers. A 200
// comes back as an open exchange; anything else is thrown.
asio::awaitable<std::unique_ptr<Exchange>> TaskClient::send(std::int64_t c, int retry_count) {
  ++out_.requests;
  ++call_requests_;
  out_.retry_counts.push_back(retry_count);
  out_.seen.push_back(std::nullopt);
  const ClientTiming& t = cfg_.timing;
  std::unique_ptr<Exchange> ex;
  error_code ec;
  Limit limit = Limit::stage;
  if (preconnected_) {
    ex = std::move(preconnected_->exchange);
    ec = preconnected_->error;
    preconnected_.reset();
  } else {
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    ex = std::make_unique<Exchange>(executor);
    limit = expire(ex->stream, Clock::now() + to_duration(t.connect_timeout));
    co_await ex->stream.async_connect(endpoint_, asio::redirect_error(asio::use_awaitable, ec));
  }
  if (ec == beast::error::timeout) timed_out<ApiTimeoutError>(limit, FaultKind::slow_headers, "connecting");
  if (ec) fail(ApiConnectionError(FaultKind::reset, fmt::format("connection failed: {}", ec.message())));

  http::request<http::string_body> req{http::verb::post, request_target(task_), 11};
  req.set(http::field::host, fmt::format("{}:{}", cfg_.host, cfg_.port));
  req.set(http::field::user_agent, "relsim-client/0.1");
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "text/event-stream");
  req.set(http::field::connection, "close");
  req.set("anthropic-version", "2023-06-01");
  req.set("x-stainless-retry-count", std::to_string(retry_count));
  req.body() = request_body(task_, c);
  req.prepare_payload();

  // The header timeout runs from here: writing the request is part of it.
  limit = expire(ex->stream, Clock::now() + to_duration(t.header_timeout));
  co_await http::async_write(ex->stream, req, asio::redirect_error(asio::use_awaitable, ec));
  if (ec == beast::error::timeout) timed_out<ApiTimeoutError>(limit, FaultKind::slow_headers, "sending the request");
  if (ec) fail(ApiConnectionError(FaultKind::reset, fmt::format("sending the request failed: {}", ec.message())));
  co_await http::async_read_header(ex->stream, ex->buffer, ex->parser, asio::redirect_error(asio::use_awaitable, ec));
  if (ec == beast::error::timeout)
    timed_out<ApiTimeoutError>(limit, FaultKind::slow_headers, "waiting for the response headers");
  if (ec) fail(ApiConnectionError(FaultKind::reset, fmt::format("no response: {}", ec.message())));

  const auto& head = ex->parser.get();
  const int status = static_cast<int>(head.result_int());
  if (status == 200) co_return ex;

  // An error status: read its (small) JSON body for the message, as far as
  // the header deadline allows; a body that breaks off changes nothing.
  std::string body;
  char buf[4096];
  while (!ex->parser.is_done() && body.size() < 65536) {
    ex->parser.get().body().data = buf;
    ex->parser.get().body().size = sizeof buf;
    co_await http::async_read_some(ex->stream, ex->buffer, ex->parser, asio::redirect_error(asio::use_awaitable, ec));
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
    const Limit limit = expire(ex.stream, stage);
    ex.parser.get().body().data = buf;
    ex.parser.get().body().size = sizeof buf;
    co_await http::async_read_some(ex.stream, ex.buffer, ex.parser, asio::redirect_error(asio::use_awaitable, ec));
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
    // (No co_await inside the braces: GCC 12 miscompiles that.)
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    Preconnected first{std::make_unique<Exchange>(executor), {}};
    first.exchange->stream.expires_after(to_duration(cfg_.timing.connect_timeout));
    co_await first.exchange->stream.async_connect(endpoint_, asio::redirect_error(asio::use_awaitable, first.error));
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
                               Clock::time_point run_start, StartGate* gate) {
  TaskClient client(config, endpoint, task, out, run_start);
  co_await client.run(gate);
}

// A sliding window: each worker takes the next task when its last one ends.
asio::awaitable<void> run_worker(const ClientConfig& config, tcp::endpoint endpoint, std::int64_t first_task,
                                 std::vector<LiveTask>& out, std::atomic<std::size_t>& next,
                                 Clock::time_point run_start) {
  for (std::size_t i = next++; i < out.size(); i = next++) {
    TaskClient client(config, endpoint, first_task + static_cast<std::int64_t>(i), out[i], run_start);
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
  if (config.coordinated_start) {
    for (std::size_t begin = 0; begin < out.size(); begin += width) {
      const std::size_t end = std::min(out.size(), begin + width);
      StartGate gate(end - begin);
      for (std::size_t i = begin; i < end; ++i)
        asio::co_spawn(asio::make_strand(ioc),
                       run_task(config, endpoint, first_task + static_cast<std::int64_t>(i), out[i], run_start, &gate),
                       asio::detached);
      run_io(ioc, config.threads);
    }
  } else {
    std::atomic<std::size_t> next{0};
    for (std::size_t w = 0; w < std::min(width, out.size()); ++w)
      asio::co_spawn(asio::make_strand(ioc), run_worker(config, endpoint, first_task, out, next, run_start),
                     asio::detached);
    run_io(ioc, config.threads);
  }
  return out;
}

}  // namespace relsim
