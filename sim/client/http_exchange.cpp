// The HTTP layer of a call, as the SDKs have it: one request and its
// response headers (send), the SDK's retries around it (create_message),
// and a 200's event stream read to its end (read_message).
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "client/task_client.hpp"
#include "client/tenant_pools.hpp"
#include "client/tenant_throttles.hpp"

namespace relsim::live_client {
namespace {

// An error status: read its (small) JSON body for the message, as far as
// the header deadline allows; a body that breaks off changes nothing. The
// connection closes with the exchange: it saw a fault.
asio::awaitable<std::string> read_error_body(Exchange& ex) {
  std::string body;
  char buf[4096];
  error_code ec;
  while (!ex.parser.is_done() && body.size() < 65536) {
    ex.parser.get().body().data = buf;
    ex.parser.get().body().size = sizeof buf;
    co_await http::async_read_some(ex.conn->stream, ex.conn->buffer, ex.parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
    body.append(buf, sizeof buf - ex.parser.get().body().size);
    if (ec == http::error::need_buffer) continue;
    if (ec) break;
  }
  co_return body;
}

}  // namespace

// The request as bytes, written by hand: the header order Beast would give.
std::string TaskClient::request_bytes(std::int64_t c, int retry_count) const {
  const std::string body = request_body(task_, c, cfg_.dialect);
  const std::string key = cfg_.tenants > 0 ? fmt::format("x-api-key: {}\r\n", tenant_key(cfg_.tenant_of(task_))) : "";
  const bool openai = cfg_.dialect == Dialect::openai;
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}:{}\r\nUser-Agent: relsim-client/0.1\r\n"
      "Content-Type: application/json\r\nAccept: text/event-stream\r\n{}{}{}"
      "x-stainless-retry-count: {}\r\nContent-Length: {}\r\n\r\n{}",
      request_target(task_, cfg_.dialect, to_fallback()), cfg_.host, cfg_.port, cfg_.keep_alive ? "" : "Connection: close\r\n", key,
      openai ? "" : "anthropic-version: 2023-06-01\r\n", retry_count, body.size(), body);
}

// One HTTP request: connect (or reuse the slot's connection), send, read
// the status line and headers. A 200 comes back as an open exchange;
// anything else is thrown.
asio::awaitable<std::unique_ptr<Exchange>> TaskClient::send(std::int64_t c, int retry_count) {
  if (slot_.throttles) {
    settle(false);  // an answer never read (cannot happen: every path settles)
    const bool retry = call_requests_ > 0;
    slot_.throttles->sent(cfg_.tenant_of(task_), retry);
    told_ = Told{retry, paid_next_};
    paid_next_ = 0.0;
  }
  ++out_.requests;
  ++call_requests_;
  out_.retry_counts.push_back(retry_count);
  out_.seen.push_back(std::nullopt);
  const std::string request = request_bytes(c, retry_count);
  if (to_fallback()) ++out_.fallback_requests;
  PoolPermit permit;
  if (slot_.pools) {
    const Clock::time_point asked = Clock::now();
    permit = co_await slot_.pools->acquire(cfg_.tenant_of(task_));
    out_.pool_waits.push_back(std::chrono::duration<double>(Clock::now() - asked).count());
  }
  std::unique_ptr<Connection> conn;
  error_code ec;
  if (preconnected_) {
    conn = std::move(preconnected_->conn);
    ec = preconnected_->error;
    preconnected_.reset();
  } else {
    conn = take_idle();
  }
  std::unique_ptr<Exchange> ex = co_await open_exchange(std::move(conn), ec, request);
  ex->permit = std::move(permit);  // held until the answer ends, with the exchange
  if (ex->parser.get().result_int() == 200) co_return ex;
  const std::string body = co_await read_error_body(*ex);
  fail_status(*ex, body);
}

// Writes `request` on `conn` (none: on a fresh connection; `ec`: how the
// connect of a given one went) and reads the response headers. A reused
// connection the server closed while idle is not a fault: the request goes
// again on a fresh one.
asio::awaitable<std::unique_ptr<Exchange>> TaskClient::open_exchange(std::unique_ptr<Connection> conn, error_code ec,
                                                                     const std::string& request) {
  const ClientTiming& t = cfg_.timing;
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
    auto ex = std::make_unique<Exchange>(std::move(conn));
    co_await http::async_read_header(ex->conn->stream, ex->conn->buffer, ex->parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
    if (reused && ec == http::error::end_of_stream) {
      // A clean end before any byte of a response on a reused connection:
      // the server closed it while idle, before it read the request.
      ec = {};
      continue;
    }
    if (ec == beast::error::timeout)
      timed_out<ApiTimeoutError>(limit, FaultKind::slow_headers, "waiting for the response headers");
    if (ec) fail(ApiConnectionError(FaultKind::reset, fmt::format("no response: {}", ec.message())));
    co_return ex;
  }
}

// Throws the SDK's error for an error status, with the retry headers and
// the start of its body.
void TaskClient::fail_status(const Exchange& ex, const std::string& body) {
  const auto& head = ex.parser.get();
  const int status = static_cast<int>(head.result_int());
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
    std::string what;
    try {
      co_return co_await send(c, k);
    } catch (const ApiStatusError& e) {
      if (k >= o.max_retries || call_requests_ >= o.request_cap || !should_retry_status(e.status, e.headers.should_retry))
        throw;
      kind = e.kind();
      what = e.what();
      wait = http_retry_wait(e.headers, k, next_jitter(), cfg_.timing);
    } catch (const ApiConnectionError& e) {
      if (k >= o.max_retries || call_requests_ >= o.request_cap) throw;
      kind = e.kind();
      what = e.what();
      wait = cfg_.timing.backoff(k, next_jitter());
    }
    allow_retry_or_end(kind, what);
    co_await pause(wait, kind);
  }
}

// Reads the event stream to its end, an idle timeout between two events
// (none under naive), and returns the answer.
asio::awaitable<std::string> TaskClient::read_message(Exchange& ex) {
  // What the loop checks in a whole answer (AnswerChecks): nothing
  // (naive); the stop reason and the tool arguments (layered, budgeted); and
  // a repeated event as well (simple: every bad request a failed attempt).
  const PolicyKind kind = cfg_.policy.kind;
  const AnswerChecks checks = kind == PolicyKind::naive    ? AnswerChecks::none
                              : kind == PolicyKind::simple ? AnswerChecks::all
                                                           : AnswerChecks::stop_and_tools;
  MessageStream message(cfg_.dialect, checks);
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
        settle(false);
        throw;
      } catch (const std::length_error& e) {
        fail(StreamError(FaultKind::malformed, e.what()));
      }
      if (sse.events() != before) last_event = Clock::now();
    }
    if (ec == http::error::need_buffer) continue;
    // No event at all since the headers: stall_first; else a stall after content began.
    if (ec == beast::error::timeout)
      timed_out<StreamIdleTimeout>(limit, sse.events() == 0 ? FaultKind::stall_first : FaultKind::stall,
                                   sse.events() == 0 ? "waiting for the first event" : "waiting for the next event");
    if (ec) fail(StreamError(FaultKind::cut, fmt::format("the stream broke off: {}", ec.message())));
  }
  try {
    message.on_end();
  } catch (const ClientError& e) {
    out_.seen.back() = e.kind();
    settle(false);
    throw;
  }
  settle(true);
  give_back(ex);
  // The loop takes the answer; what was wrong with it, the harness grades (task_harness.cpp).
  if (const std::optional<FaultKind> wrong = message.wrong()) {
    out_.seen.back() = wrong;
    ++out_.wrong_answers;
  }
  co_return message.text();
}

void TaskClient::settle(bool good) {
  if (!told_) return;
  slot_.throttles->answered(cfg_.tenant_of(task_), told_->retry, good, told_->paid);
  told_.reset();
}

void TaskClient::allow_retry_or_end(FaultKind kind, const std::string& what) {
  if (!slot_.throttles || slot_.throttles->allow_retry(cfg_.tenant_of(task_), kind, paid_next_)) return;
  out_.throttled = true;
  throw RetriesExhausted(kind, "the retry throttle denied a retry after: " + what);
}

}  // namespace relsim::live_client
