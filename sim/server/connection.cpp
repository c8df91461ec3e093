// One connection's I/O: reading requests under their deadlines, writing and
// pacing replies, refusing bad requests, and holding replies (connection.hpp).
#include "server/connection.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "server/routes.hpp"

namespace relsim::mock {
namespace {

constexpr std::uint32_t kHeaderLimit = 16 * 1024;
constexpr std::uint64_t kBodyLimit = 1024 * 1024;
constexpr std::size_t kMaxPipelined = 64 * 1024;  // bytes read ahead while a reply is held
constexpr std::size_t kMaxDrain = 4 * 1024 * 1024;

}  // namespace

Connection::Connection(ServerState& state, tcp::socket socket)
    : state_(state), socket_(std::move(socket)), wake_(socket_.get_executor()), deadline_(socket_.get_executor()) {}

Connection::~Connection() {
  if (id_) state_.remove_connection(id_);
}

net::awaitable<void> Connection::run() {
  try {
    bool first = true;
    while (!stopping_) {
      std::optional<Request> req = co_await read_request(first);
      first = false;
      if (!req) break;
      const bool keep = co_await handle(*this, *req);
      if (!keep) break;
    }
  } catch (const std::exception& e) {
    // A bug of ours: the connection goes, the server stays (under a fuzz
    // target it stops here instead, so the fuzzer keeps the input).
    std::fprintf(stderr, "relsim serve: connection ended by an internal error: %s\n", e.what());
    internal_error_caught();
  }
  disarm_deadline();
  close_socket();
}

void Connection::close_for_stop() {
  stopping_ = true;
  deadline_armed_ = false;
  deadline_.cancel();
  close_socket();
  wake_.cancel();
}

void Connection::close_socket() {
  error_code ig;
  socket_.shutdown(tcp::socket::shutdown_both, ig);
  socket_.close(ig);
}

void Connection::quick_ack() {
  const int one = 1;
  ::setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);  // sends a pending ACK at once
}

void Connection::reset_socket() {
  error_code ig;
  socket_.set_option(net::socket_base::linger(true, 0), ig);
  socket_.close(ig);
}

// --- reading ------------------------------------------------------------------

// The read timeout closes the socket, which ends whatever read is pending. A
// generation number tells a stale expiry (of a deadline since re-armed) from
// the current one.
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

void Connection::disarm_deadline() {
  deadline_armed_ = false;
  deadline_.cancel();
}

net::awaitable<std::optional<Request>> Connection::read_request(bool first) {
  const ServerConfig& config = state_.config();
  error_code ec;
  if (buffer_.size() == 0) {
    arm_deadline(first ? config.read_timeout : config.keep_alive_timeout);
    co_await socket_.async_wait(tcp::socket::wait_read, redirect(ec));
    if (ec || timed_out_ || stopping_) co_return std::nullopt;
    if (!first) arm_deadline(config.read_timeout);  // the request's own clock, from its first byte
  } else {
    arm_deadline(config.read_timeout);
  }
  http::request_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(kBodyLimit);
  co_await http::async_read_header(socket_, buffer_, parser, redirect(ec));
  if (!ec && !parser.is_done()) {
    // The body is still to come: acknowledge the head now. A client that
    // writes its head and body apart without TCP_NODELAY (httpx, h11) holds
    // the body back until the head is acknowledged, and Linux would delay
    // that acknowledgement by some 40 ms: every such request took 40 ms more.
    quick_ack();
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
      wire::json_response(status, wire::error_body(type, message), state_.fresh_request_id(), false);
  if (!co_await write(bytes)) co_return;
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  arm_deadline(state_.config().linger_timeout);
  std::array<char, 16384> scratch;
  std::size_t drained = 0;
  while (!ec && drained < kMaxDrain && !timed_out_ && !stopping_) {
    const std::size_t n = co_await socket_.async_read_some(net::buffer(scratch), redirect(ec));
    drained += n;
  }
  disarm_deadline();
  close_socket();
}

// --- writing ------------------------------------------------------------------

net::awaitable<bool> Connection::write(std::string_view bytes) {
  error_code ec;
  const std::size_t sent = co_await net::async_write(socket_, net::buffer(bytes.data(), bytes.size()), redirect(ec));
  state_.metrics().sent(sent);
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
  co_return co_await write(wire::json_response(status, wire::json_text(body), state_.fresh_request_id(), keep, extra));
}

net::awaitable<bool> Connection::send_error(int status, std::string type, std::string message, bool keep,
                                            wire::Headers extra, Dialect dialect) {
  co_return co_await write(wire::json_response(status, wire::error_body(dialect, type, message),
                                               state_.fresh_request_id(), keep, extra, dialect));
}

net::awaitable<bool> Connection::not_allowed(std::string method, std::string allow, bool keep, Dialect dialect) {
  return send_error(405, "invalid_request_error", fmt::format("method {} is not allowed here: use {}", method, allow),
                    keep, {{"allow", allow}}, dialect);
}

// --- holding ------------------------------------------------------------------

void Connection::wake_hold(std::uint64_t seq) {
  if (!in_hold_ || seq != hold_seq_) return;
  hold_released_ = true;
  wake_.cancel();
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
  const auto id = state_.begin_hold(shared_from_this(), seq, task, epoch, gate);
  if (!id) co_return stopping_ ? HoldEnd::stopped : HoldEnd::released;
  in_hold_ = true;
  start_watch();
  error_code ec;
  while (!hold_released_ && !peer_gone_ && !stopping_) {
    wake_.expires_at(Clock::time_point::max());
    co_await wake_.async_wait(redirect(ec));
  }
  in_hold_ = false;
  state_.end_hold(*id);
  co_await stop_watch();
  co_return stopping_ ? HoldEnd::stopped : peer_gone_ ? HoldEnd::gone : HoldEnd::released;
}

}  // namespace relsim::mock
