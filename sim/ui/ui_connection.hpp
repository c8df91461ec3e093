#pragma once
// Internal to the workbench's server: one accepted connection, and what all
// connections share.
//
// Threads: one I/O thread runs the io_context (the acceptor, every
// connection's coroutine, the wake-ups of command jobs), so nothing here
// needs a strand or a lock; commands run on the CommandPool's threads
// (command_pool.hpp). Limits: each request must arrive whole within
// read_timeout of its first byte (of the accept, for the first request),
// an idle keep-alive connection closes after keep_alive_timeout, headers are
// at most kHeaderLimit bytes and the target kMaxTargetBytes (414), a body at
// most max_body_bytes for POST /api/audit and kSmallBodyLimit elsewhere
// (413). Whatever a client sends, the connection answers or closes; an
// exception escaping a request is caught here and ends only this connection.
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without it

#include <cstddef>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "relsim/ui/ui_server.hpp"
#include "ui/command_pool.hpp"
#include "ui/http_reply.hpp"

namespace relsim::ui {

namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;
using Request = http::request<http::string_body>;

inline constexpr std::size_t kHeaderLimit = 32 * 1024;
inline constexpr std::size_t kSmallBodyLimit = 64 * 1024;

class UiConnection;

// What the connections share; touched on the I/O thread only, but for the
// pool (its own locks) and `port` (set before the first accept).
struct UiContext {
  UiContext(UiConfig c, CommandRunner r) : config(std::move(c)), runner(std::move(r)), pool(config.threads) {}

  const UiConfig config;
  const CommandRunner runner;
  CommandPool pool;
  int port = 0;
  bool stopping = false;
  std::unordered_map<std::uint64_t, std::weak_ptr<UiConnection>> connections;
  std::uint64_t next_id = 1;
};

class UiConnection : public std::enable_shared_from_this<UiConnection> {
 public:
  UiConnection(UiContext& context, tcp::socket socket, std::uint64_t id);
  ~UiConnection();  // leaves context.connections
  UiConnection(const UiConnection&) = delete;
  UiConnection& operator=(const UiConnection&) = delete;

  UiContext& context() { return context_; }
  // Serves requests (api_routes.hpp) until one ends the connection, the
  // client goes, a limit is hit or the server stops; then closes.
  net::awaitable<void> run();
  void close_for_stop();

  // Waits `how_long` (a held answer); false if the connection closed or the
  // server stopped meanwhile: stop() does not wait for it.
  net::awaitable<bool> pause(std::chrono::milliseconds how_long);

  // Each returns false when the bytes could not be sent.
  net::awaitable<bool> write(std::string bytes);
  net::awaitable<bool> send(Reply reply, bool keep_alive);

  // Runs `work` on the pool while watching the socket: a client that goes
  // away (EOF, reset) marks the job gone, which cancels the command at its
  // next report. Bytes the client sends meanwhile are kept for the next
  // request. end_job() must follow before the next read.
  std::shared_ptr<CommandJob> start_job(Work work, bool keep_progress);
  net::awaitable<void> end_job();
  // start_job, the result, end_job.
  net::awaitable<CommandResult> run_job(Work work);

 private:
  net::awaitable<std::optional<Request>> read_request(bool first);
  net::awaitable<bool> read_body(http::request_parser<http::string_body>& parser, error_code& ec);
  net::awaitable<void> refuse_after(error_code ec);
  net::awaitable<void> refuse(int status, std::string message);
  bool request_line_too_long() const;
  void watch(std::shared_ptr<CommandJob> job);
  void close();

  UiContext& context_;
  const std::uint64_t id_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  net::steady_timer watch_end_;  // cancelled when a watch's read completes
  net::steady_timer pause_;      // pause(); cancelled by close()
  bool watching_ = false;
  bool unwatching_ = false;
};

}  // namespace relsim::ui
