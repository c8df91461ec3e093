// The workbench's HTTP server (ui_server.hpp): its lifecycle. It listens on
// 127.0.0.1 only (the page runs relsim's commands, so nothing off this
// machine may reach it), accepts up to max_connections at once, and serves
// them on one I/O thread while commands run on a pool (ui_connection.hpp,
// command_pool.hpp).
#include "relsim/ui/ui_server.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/redirect_error.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "ui/ui_connection.hpp"

namespace relsim::ui {
namespace {

// The end of a coroutine on the I/O thread. Each catches what it can throw
// (a connection in UiConnection::run), so an exception here is a bug of
// ours: said, and under a fuzz target an abort, so the fuzzer keeps the input.
void report_escape(std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    std::fprintf(stderr, "relsim ui: the server's I/O failed: %s\n", x.what());
  } catch (...) {
    std::fprintf(stderr, "relsim ui: the server's I/O failed\n");
  }
  internal_error_caught();
}

}  // namespace

void validate(const UiConfig& c) {
  if (c.port < 0 || c.port > 65535)
    throw InputError(fmt::format("port = {} is out of range: it must be in [0, 65535] (0: a free one)", c.port));
  if (c.threads < 1 || c.threads > 64)
    throw InputError(fmt::format("threads = {} is out of range: it must be in [1, 64]", c.threads));
  if (c.max_body_bytes < 1)
    throw InputError(fmt::format("max_body_bytes = {} is out of range: it must be at least 1", c.max_body_bytes));
  if (c.max_connections < 1 || c.max_connections > 10'000)
    throw InputError(
        fmt::format("max_connections = {} is out of range: it must be in [1, 10000]", c.max_connections));
  for (const auto& [name, t] : {std::pair{"read_timeout", c.read_timeout}, std::pair{"keep_alive_timeout", c.keep_alive_timeout},
                                std::pair{"write_timeout", c.write_timeout}})
    if (t.count() <= 0) throw InputError(fmt::format("{} = {} ms is out of range: it must be > 0", name, t.count()));
  if ((c.site == Site::tools) != (c.tools != nullptr))
    throw InputError("the MCP tools service is given exactly when the site is the tools server");
}

struct UiServer::Impl {
  UiContext context;
  std::mutex stop_mu;
  bool stopped = false;
  std::thread io_thread;

  // Declared last: destroyed first, while the context above still exists for
  // whatever handlers (and the connections they own) the io_context holds.
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{ioc};

  Impl(UiConfig config, CommandRunner runner) : context(std::move(config), std::move(runner)) {}

  void listen();
  net::awaitable<void> accept_loop();
  void stop();
};

// Loopback only, whatever the port: the API runs commands for whoever asks.
void UiServer::Impl::listen() {
  const int port = context.config.port;
  try {
    acceptor = tcp::acceptor(ioc, tcp::endpoint(net::ip::address_v4::loopback(), static_cast<unsigned short>(port)));
  } catch (const boost::system::system_error& e) {
    throw InputError(fmt::format("cannot listen on 127.0.0.1:{}: {}", port, e.code().message()));
  }
  context.port = acceptor.local_endpoint().port();
}

net::awaitable<void> UiServer::Impl::accept_loop() {
  net::steady_timer pause(ioc);
  for (;;) {
    error_code ec;
    tcp::socket socket = co_await acceptor.async_accept(net::redirect_error(net::use_awaitable, ec));
    if (context.stopping || !acceptor.is_open()) break;
    if (ec) {
      // Out of descriptors or the like: wait a moment rather than spin.
      pause.expires_after(std::chrono::milliseconds(20));
      co_await pause.async_wait(net::redirect_error(net::use_awaitable, ec));
      continue;
    }
    if (context.connections.size() >= context.config.max_connections) continue;  // closed as it goes
    socket.set_option(tcp::no_delay(true), ec);
    const std::uint64_t id = context.next_id++;
    auto conn = std::make_shared<UiConnection>(context, std::move(socket), id);
    context.connections.emplace(id, conn);
    net::co_spawn(ioc, [conn]() -> net::awaitable<void> { co_await conn->run(); }, report_escape);
  }
}

// The pool is joined first: its commands, cancelled at their next report,
// post their ends to the I/O thread, which then still runs; once every
// connection's coroutine has come back, the I/O thread runs out of work.
void UiServer::Impl::stop() {
  const std::lock_guard lock(stop_mu);
  if (stopped) return;
  stopped = true;
  net::post(ioc, [this] {
    context.stopping = true;
    error_code ig;
    acceptor.close(ig);
    // Held first: a connection closed here may end, and leave the table, at once.
    std::vector<std::shared_ptr<UiConnection>> open;
    for (auto& [id, weak] : context.connections)
      if (auto conn = weak.lock()) open.push_back(std::move(conn));
    for (const auto& conn : open) conn->close_for_stop();
  });
  context.pool.stop();
  work.reset();
  if (io_thread.joinable()) io_thread.join();
}

UiServer::UiServer(UiConfig config, CommandRunner runner) {
  validate(config);
  if (!runner) throw InputError("the workbench server needs a command runner");
  impl_ = std::make_unique<Impl>(std::move(config), std::move(runner));
  impl_->listen();
  impl_->work.emplace(impl_->ioc.get_executor());
  net::co_spawn(impl_->ioc, impl_->accept_loop(), report_escape);
  impl_->io_thread = std::thread([impl = impl_.get()] { impl->ioc.run(); });
}

UiServer::~UiServer() {
  if (impl_) impl_->stop();
}

int UiServer::port() const { return impl_->context.port; }
std::string UiServer::url() const { return fmt::format("http://127.0.0.1:{}/", port()); }
void UiServer::stop() { impl_->stop(); }

}  // namespace relsim::ui
