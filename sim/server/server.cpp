// The fault-injecting mock server (server.hpp): its lifecycle (listening,
// accepting, the threads, stopping) and the public Server API. What it sends
// and accepts on the wire is specified in docs/wire.md; the concurrency
// design is described in connection.hpp.
#include "relsim/server/server.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/formats/plan.hpp"
#include "server/connection.hpp"
#include "server/server_state.hpp"

namespace relsim {

// The server's own names, spelled out (a using-directive here would leak into
// every file that shares this unity batch).
namespace net = mock::net;
using mock::Connection;
using mock::redirect;
using mock::ServerState;
using mock::tcp;
using mock::error_code;

struct Server::Impl {
  ServerState state;

  std::mutex stop_mu;
  bool joined = false;
  std::vector<std::thread> threads;

  // Declared last: destroyed first, while the state above still exists for
  // whatever handlers (and the connections they own) the io_context still holds.
  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  tcp::acceptor acceptor{net::make_strand(ioc)};

  explicit Impl(ServerConfig config) : state(std::move(config)) {}

  void listen();         // binds and listens; the port is known after
  void start_serving();  // accepts, on the threads
  net::awaitable<void> accept_loop();
  void stop();
};

namespace {

net::awaitable<void> run_connection(std::shared_ptr<Connection> c) { co_await c->run(); }

}  // namespace

net::awaitable<void> Server::Impl::accept_loop() {
  net::steady_timer pause(acceptor.get_executor());
  for (;;) {
    // With one thread every handler runs in order already: no strand.
    tcp::socket socket(state.config().threads > 1 ? net::any_io_executor(net::make_strand(ioc))
                                                  : ioc.get_executor());
    error_code ec;
    co_await acceptor.async_accept(socket, redirect(ec));
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor.is_open() || state.stopping()) break;
      // Out of descriptors or the like: wait a moment rather than spin.
      pause.expires_after(std::chrono::milliseconds(20));
      co_await pause.async_wait(redirect(ec));
      continue;
    }
    error_code ig;
    socket.set_option(tcp::no_delay(true), ig);
    auto conn = std::make_shared<Connection>(state, std::move(socket));
    std::uint64_t id = 0;
    if (!state.add_connection(conn, id)) {
      conn->close_for_stop();  // over the cap (or stopping): closed at accept
      if (state.stopping()) break;
      continue;
    }
    conn->set_id(id);
    net::co_spawn(conn->executor(), run_connection(conn), [](std::exception_ptr) {});
  }
}

void Server::Impl::listen() {
  const int port = state.config().port;
  const tcp::endpoint endpoint(net::ip::make_address_v4("127.0.0.1"), static_cast<unsigned short>(port));
  error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw InputError(fmt::format("cannot listen on 127.0.0.1:{}: {}", port, ec.message()));
  state.set_port(acceptor.local_endpoint().port());
}

void Server::Impl::start_serving() {
  work.emplace(ioc.get_executor());
  net::co_spawn(acceptor.get_executor(), accept_loop(), [](std::exception_ptr) {});
  for (int i = 0; i < state.config().threads; ++i)
    threads.emplace_back([this] {
      for (;;) {
        try {
          ioc.run();
          return;
        } catch (const std::exception& e) {
          std::fprintf(stderr, "relsim serve: a handler failed: %s\n", e.what());
          internal_error_caught();
        }
      }
    });
}

void Server::Impl::stop() {
  std::lock_guard stop_lock(stop_mu);
  if (joined) return;
  for (auto& c : state.begin_stop()) net::post(c->executor(), [c] { c->close_for_stop(); });
  net::post(acceptor.get_executor(), [this] {
    error_code ig;
    acceptor.close(ig);
  });
  work.reset();
  for (auto& t : threads)
    if (t.joinable()) t.join();
  threads.clear();
  // Every connection's coroutine has come back by now (its requests ended
  // "stopped" on the normal path); what has no end yet never will.
  state.journal().close(state.now_ms());
  joined = true;
}

// --- Server -------------------------------------------------------------------

Server::Server(ServerConfig config) : Server(std::move(config), nullptr) {}
Server::Server(ServerConfig config, const Plan& plan) : Server(std::move(config), &plan) {}

// The log file first (an unwritable path is an error before listening),
// then the scripts, then the journal's header once the port is known, and
// only then the first accept: the header is line 1.
Server::Server(ServerConfig config, const Plan* plan) {
  validate(config);
  impl_ = std::make_shared<Impl>(std::move(config));
  if (!impl_->state.config().log_path.empty()) impl_->state.journal().open_file(impl_->state.config().log_path);
  if (plan) load_plan(*plan);
  impl_->listen();
  const ServerConfig& c = impl_->state.config();
  Json mode = Json::object();
  if (c.chain) {
    mode["chain"] = to_json(*c.chain);
    impl_->state.set_plan_header(Json{{"source", "chain"}, {"chain", mode["chain"]}});
  }
  if (c.outage)
    mode["outage"] = Json{{"t_good", c.outage->t_good},
                          {"t_bad", c.outage->t_bad},
                          {"time_scale", c.outage->time_scale},
                          {"seed", c.outage->seed},
                          {"kinds", to_string(c.outage->kinds)}};
  impl_->state.journal().write_header(port(), plan ? std::optional<std::size_t>(plan->tasks.size()) : std::nullopt,
                                      c.retry_after, c.retry_after_ms, mode);
  impl_->start_serving();
}

Server::~Server() {
  if (impl_) impl_->stop();
}

int Server::port() const { return impl_->state.port(); }

std::string Server::base_url(std::int64_t task) const {
  return fmt::format("http://127.0.0.1:{}/t/{}", port(), task);
}

void Server::set_script(std::int64_t task, std::vector<ScriptEntry> entries,
                        std::optional<std::vector<ScriptEntry>> fallback) {
  impl_->state.set_script(task, std::move(entries), std::move(fallback));
}

namespace {

std::vector<ScriptEntry> script_of_plan(const std::vector<PlannedRequest>& requests) {
  std::vector<ScriptEntry> entries;
  entries.reserve(requests.size());
  for (const PlannedRequest& r : requests) entries.push_back(r ? ScriptEntry::of(*r) : ScriptEntry::ok());
  return entries;
}

}  // namespace

void Server::load_plan(const Plan& plan) {
  for (const TaskPlan& t : plan.tasks) {
    set_script(t.task, script_of_plan(t.requests),
               t.fallback.empty() ? std::nullopt : std::optional(script_of_plan(t.fallback)));
  }
  impl_->state.set_plan_header(plan.header);
}

TaskLog Server::log(std::int64_t task) const { return impl_->state.log(task); }
std::optional<OutageView> Server::outage_schedule() const { return impl_->state.outage_view(); }
std::size_t Server::release(std::int64_t task) { return impl_->state.release(task); }
std::size_t Server::open_gate(const std::string& name) { return impl_->state.open_gate(name); }
std::size_t Server::held(std::int64_t task) const { return impl_->state.held(task); }

bool Server::wait_held(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const {
  return impl_->state.wait_held(task, count, limit);
}

bool Server::wait_finished(std::int64_t task, std::size_t count, std::chrono::milliseconds limit) const {
  return impl_->state.wait_finished(task, count, limit);
}

std::size_t Server::connections() const { return impl_->state.connection_count(); }
std::size_t Server::accepted() const { return impl_->state.accepted(); }

std::string Server::replay_summary() const {
  const RecordingBook* book = impl_->state.book();
  if (!book) return "";
  const RecordingBook::Skipped& s = book->skipped();
  if (s.total() == 0) return fmt::format("{} recorded exchanges", book->size());
  return fmt::format("{} recorded exchanges ({} skipped: {} broken by a fault of the plan, {} cut short by their "
                     "client, {} lossy)",
                     book->size(), s.total(), s.broken, s.client_gone, s.lossy);
}
void Server::stop() { impl_->stop(); }

}  // namespace relsim
