#pragma once
// Internal to the server: one accepted connection and its I/O.
//
// Concurrency: the io_context is run by config.threads threads; each
// connection is a C++20 coroutine on its own strand (none with one thread:
// its handlers run in order anyway), so a Connection's members need no lock;
// the tables it shares with the others are ServerState's, under one mutex.
// A held reply (stall, slow_headers, a gate) waits on the connection's
// `wake_` timer and watches the socket for the client going away; release,
// open_gate and stop post to the connection's strand and cancel that timer,
// so nothing ever polls or sleeps.
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without it

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "server/server_state.hpp"
#include "server/server_wire.hpp"

namespace relsim::mock {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;
using Request = http::request<http::string_body>;

inline auto redirect(error_code& ec) { return net::redirect_error(net::use_awaitable, ec); }

enum class HoldEnd { released, gone, stopped };
// How a reply cut short by a hold ended, for its log entry.
inline std::string_view end_of(HoldEnd h) { return h == HoldEnd::stopped ? "stopped" : "client_gone"; }

// Proxy mode: the upstream connection a client connection keeps between its
// requests (upstream.cpp).
struct UpstreamLink;
struct UpstreamLinkDeleter {
  void operator()(UpstreamLink* link) const;
};
using UpstreamLinkPtr = std::unique_ptr<UpstreamLink, UpstreamLinkDeleter>;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(ServerState& state, tcp::socket socket);
  ~Connection();  // leaves the connection table
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void set_id(std::uint64_t id) { id_ = id; }
  net::any_io_executor executor() { return socket_.get_executor(); }
  ServerState& state() { return state_; }

  // Reads requests and has routes.cpp answer them, until one asks to close,
  // the client goes, a deadline passes or the server stops; then closes.
  net::awaitable<void> run();

  // On the strand, posted by release / open_gate.
  void wake_hold(std::uint64_t seq);
  // On the strand, posted by stop (or called at accept, before any I/O).
  void close_for_stop();

  // --- what the replies are made of -----------------------------------------
  // Each returns false when the client is gone or the server is stopping.
  net::awaitable<bool> write(std::string_view bytes);
  // In slices of e.slice_bytes, at e.bytes_per_second (when the entry says so).
  net::awaitable<bool> paced_write(std::string_view bytes, const ScriptEntry& e);
  net::awaitable<bool> delay(Clock::duration d);
  // Coroutines start lazily: parameters are values, never views of a caller's temporaries.
  net::awaitable<bool> send_json(int status, Json body, bool keep, wire::Headers extra = {});
  // An API error in `dialect`'s shape; `type` is the Anthropic error type
  // (openai_wire.hpp maps it to OpenAI's type and code).
  net::awaitable<bool> send_error(int status, std::string type, std::string message, bool keep,
                                  wire::Headers extra = {}, Dialect dialect = Dialect::anthropic);
  net::awaitable<bool> not_allowed(std::string method, std::string allow, bool keep,
                                   Dialect dialect = Dialect::anthropic);
  // Holds the reply of a request taken at release epoch `epoch` until the
  // task is released (gate empty) or the gate opens, the client goes away,
  // or the server stops.
  net::awaitable<HoldEnd> hold(std::int64_t task, std::uint64_t epoch, std::string gate);
  void close_socket();
  void reset_socket();  // an RST: SO_LINGER 0, then close
  void quick_ack();     // TCP_QUICKACK: a pending acknowledgement goes out now, not after the delayed-ACK timer
  // Proxy mode: this client connection's upstream connection, kept while
  // both sides keep alive; null when there is none.
  UpstreamLinkPtr& upstream_link() { return upstream_; }
  // A stream's first event is going out now (kept once per request), and
  // the time it went, taken for the request's metrics (and cleared).
  void mark_first_event() {
    if (!first_event_ms_) first_event_ms_ = state_.now_ms();
  }
  std::optional<double> take_first_event() { return std::exchange(first_event_ms_, std::nullopt); }

 private:
  net::awaitable<std::optional<Request>> read_request(bool first);
  net::awaitable<void> refuse(int status, std::string type, std::string message);
  void arm_deadline(std::chrono::milliseconds t);
  void disarm_deadline();
  void start_watch();
  net::awaitable<void> stop_watch();

  ServerState& state_;
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
  UpstreamLinkPtr upstream_;
  std::optional<double> first_event_ms_;  // of the request being answered
};

}  // namespace relsim::mock
