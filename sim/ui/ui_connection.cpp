// One connection of the workbench's server: reading requests under their
// limits and deadlines, refusing what breaks them, writing replies, and
// watching the client while a command runs (ui_connection.hpp).
#include "ui/ui_connection.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include <boost/asio/redirect_error.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/ui/query.hpp"
#include "ui/api_routes.hpp"

namespace relsim::ui {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;
constexpr std::size_t kMaxReadAhead = 64 * 1024;  // bytes kept from a client while its command runs
constexpr std::size_t kMaxDrain = 4 * 1024 * 1024;

auto redirect(error_code& ec) { return net::redirect_error(net::use_awaitable, ec); }

}  // namespace

UiConnection::UiConnection(UiContext& context, tcp::socket socket, std::uint64_t id)
    : context_(context), id_(id), stream_(std::move(socket)), watch_end_(stream_.get_executor()),
      pause_(stream_.get_executor()) {}

UiConnection::~UiConnection() { context_.connections.erase(id_); }

net::awaitable<void> UiConnection::run() {
  try {
    for (bool first = true; !context_.stopping; first = false) {
      std::optional<Request> request = co_await read_request(first);
      if (!request || !co_await serve(*this, *request)) break;
    }
  } catch (const std::exception& e) {
    // A bug of ours: this connection goes, the server stays (under a fuzz
    // target it stops here instead, so that the fuzzer keeps the input).
    std::fprintf(stderr, "relsim ui: a connection ended by an internal error: %s\n", e.what());
    internal_error_caught();
  } catch (...) {
    std::fprintf(stderr, "relsim ui: a connection ended by an unknown internal error\n");
    internal_error_caught();
  }
  close();
}

void UiConnection::close() {
  error_code ig;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ig);
  stream_.close();
  watch_end_.cancel();
  pause_.cancel();
}

void UiConnection::close_for_stop() { close(); }

// --- reading ------------------------------------------------------------------

net::awaitable<std::optional<Request>> UiConnection::read_request(bool first) {
  const UiConfig& config = context_.config;
  error_code ec;
  if (!first && buffer_.size() == 0) {
    // Idle between requests: the keep-alive timeout, then the request's own.
    stream_.expires_after(config.keep_alive_timeout);
    const std::size_t n = co_await stream_.async_read_some(buffer_.prepare(kReadChunk), redirect(ec));
    if (ec) co_return std::nullopt;
    buffer_.commit(n);
  }
  stream_.expires_after(config.read_timeout);
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(kHeaderLimit));
  parser.body_limit(static_cast<std::uint64_t>(config.max_body_bytes));
  co_await http::async_read_header(stream_, buffer_, parser, redirect(ec));
  if (!ec && parser.get().target().size() > kMaxTargetBytes) {
    co_await refuse(414, fmt::format("the request target is {} bytes long: at most {} are allowed",
                                     parser.get().target().size(), kMaxTargetBytes));
    co_return std::nullopt;
  }
  if (!ec && !co_await read_body(parser, ec)) co_return std::nullopt;
  if (ec) {
    co_await refuse_after(ec);
    co_return std::nullopt;
  }
  stream_.expires_never();
  co_return parser.release();
}

// The body, under the limit of the request's route: a large one only for
// the uploads (POST /api/audit, a plan and a log; POST /api/fit, a log;
// POST /api/contention/trend, a history file; POST /api/oracle/plan, a
// plan); false if the connection
// must close.
net::awaitable<bool> UiConnection::read_body(http::request_parser<http::string_body>& parser, error_code& ec) {
  const Request& head = parser.get();
  const std::string_view target(head.target().data(), head.target().size());
  const bool upload = head.method() == http::verb::post && takes_upload(target.substr(0, target.find('?')));
  const std::uint64_t limit = upload ? context_.config.max_body_bytes : kSmallBodyLimit;
  if (parser.content_length() && *parser.content_length() > limit) {
    ec = http::error::body_limit;
    co_return true;
  }
  parser.body_limit(limit);
  if (parser.is_done()) co_return true;
  if (boost::beast::iequals(head[http::field::expect], "100-continue")) {
    if (!co_await write("HTTP/1.1 100 Continue\r\n\r\n")) co_return false;
    stream_.expires_after(context_.config.read_timeout);
  }
  co_await http::async_read(stream_, buffer_, parser, redirect(ec));
  co_return true;
}

// A request line with no end within the target limit: the header limit was
// hit by the target itself, so the answer is 414, not 431.
bool UiConnection::request_line_too_long() const {
  const std::string_view bytes(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  const std::size_t eol = bytes.find('\n');
  return (eol == std::string_view::npos ? bytes.size() : eol) > kMaxTargetBytes;
}

// A request that could not be read: answered if it broke a rule, dropped if
// the client went or was too slow (a slowloris gets no reply).
net::awaitable<void> UiConnection::refuse_after(error_code ec) {
  if (ec == http::error::header_limit) {
    if (request_line_too_long())
      co_await refuse(414, fmt::format("the request target is over {} bytes", kMaxTargetBytes));
    else
      co_await refuse(431, fmt::format("the request headers exceed {} bytes", kHeaderLimit));
  } else if (ec == http::error::body_limit) {
    co_await refuse(413, fmt::format("the request body is too large: at most {} bytes for POST /api/audit, "
                                     "/api/fit, /api/contention/trend and /api/oracle/plan, {} for any other request",
                                     context_.config.max_body_bytes, kSmallBodyLimit));
  } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
             ec != http::error::end_of_stream && ec != http::error::partial_message) {
    co_await refuse(400, fmt::format("malformed HTTP request: {}", ec.message()));
  }
}

// Answers, then closes after draining what the client still sends (a
// lingering close), so that it reads the status rather than a reset. The
// body is the site's error: {"error": ...}, or a JSON-RPC error on the MCP
// tools site.
net::awaitable<void> UiConnection::refuse(int status, std::string message) {
  const Reply reply =
      context_.config.site == Site::tools ? jsonrpc_reply(status, message) : json_error(status, message);
  if (!co_await write(serialize(reply, false))) co_return;
  error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream_.expires_after(context_.config.read_timeout);
  std::array<char, kReadChunk> scratch;
  for (std::size_t drained = 0; !ec && drained < kMaxDrain;)
    drained += co_await stream_.async_read_some(net::buffer(scratch), redirect(ec));
}

// --- writing ------------------------------------------------------------------

net::awaitable<bool> UiConnection::pause(std::chrono::milliseconds how_long) {
  error_code ec;
  pause_.expires_after(how_long);
  co_await pause_.async_wait(redirect(ec));
  co_return !ec && !context_.stopping && stream_.socket().is_open();
}

net::awaitable<bool> UiConnection::write(std::string bytes) {
  error_code ec;
  stream_.expires_after(context_.config.write_timeout);
  co_await net::async_write(stream_, net::buffer(bytes), redirect(ec));
  co_return !ec && !context_.stopping;
}

net::awaitable<bool> UiConnection::send(Reply reply, bool keep_alive) {
  const bool sent = co_await write(serialize(reply, keep_alive));
  co_return sent && keep_alive;
}

// --- commands -----------------------------------------------------------------

std::shared_ptr<CommandJob> UiConnection::start_job(Work work, bool keep_progress) {
  auto job = context_.pool.start(stream_.get_executor(), std::move(work), keep_progress);
  watch(job);
  return job;
}

void UiConnection::watch(std::shared_ptr<CommandJob> job) {
  if (watching_ || unwatching_ || buffer_.size() >= kMaxReadAhead) return;
  watching_ = true;
  stream_.expires_never();
  stream_.async_read_some(buffer_.prepare(kReadChunk),
                          [self = shared_from_this(), job = std::move(job)](error_code ec, std::size_t n) {
                            self->watching_ = false;
                            self->buffer_.commit(n);
                            if (!self->unwatching_) {
                              if (ec) job->mark_gone();
                              else self->watch(job);
                            }
                            if (!self->watching_) self->watch_end_.cancel();
                          });
}

net::awaitable<void> UiConnection::end_job() {
  unwatching_ = true;
  error_code ec;
  stream_.socket().cancel(ec);
  while (watching_) {
    watch_end_.expires_at(Clock::time_point::max());
    co_await watch_end_.async_wait(redirect(ec));
  }
  unwatching_ = false;
}

net::awaitable<CommandResult> UiConnection::run_job(Work work) {
  const auto job = start_job(std::move(work), false);
  std::optional<CommandResult> result;
  while (!(result = job->take_result())) co_await job->wait();
  co_await end_job();
  co_return std::move(*result);
}

}  // namespace relsim::ui
