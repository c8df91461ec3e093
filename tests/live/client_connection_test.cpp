// The live client's connections: keep-alive on the mock server (each worker
// reuses one connection for its healthy tasks, none with keep-alive off, a
// fresh one after every fault), and against stub servers what the mock server
// never does: an answer for another task, a refused connection, a chunked
// body that breaks off, and connections the server keeps, marks close,
// closes while idle, or drops a request on. Same short timeouts as
// client_test.cpp (live/live_client_support.hpp); no test asserts on time.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "live/live_client_support.hpp"
#include "relsim/client/client.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/server/server.hpp"
#include "support/models.hpp"
#include "support/stub_server.hpp"

namespace relsim::client_connection_test {

using namespace relsim::test::live_client;

// ---- Keep-alive: connections reused only after a clean stream -------------

TEST(KeepAlive, EachWorkerReusesOneConnectionForItsHealthyTasks) {
  for (const bool coordinated : {false, true}) {
    Server server;
    ClientConfig config = config_for(Policy{.n = 2, .r = 2, .kind = PolicyKind::layered}, server.port());
    config.concurrency = 4;
    config.coordinated_start = coordinated;
    for (std::int64_t t = 0; t < 24; ++t) server.set_script(t, script_of({"ok", "ok"}));
    const auto live = run_live(config, 0, 24);
    for (const LiveTask& t : live) {
      EXPECT_EQ(t.outcome.name(), "done") << t.error;
      EXPECT_EQ(t.requests, 2);
      EXPECT_EQ(server.log(t.task).requests.size(), 2u);
    }
    // 48 requests over the four workers' (the four wave positions') connections.
    EXPECT_EQ(server.accepted(), 4u) << (coordinated ? "waves" : "window");
  }
}

TEST(KeepAlive, OffMeansOneConnectionPerRequestEachSayingClose) {
  Server server;
  ClientConfig config = config_for(Policy{.n = 2, .r = 2, .kind = PolicyKind::layered}, server.port());
  config.concurrency = 4;
  config.keep_alive = false;
  for (std::int64_t t = 0; t < 8; ++t) server.set_script(t, script_of({"ok", "ok"}));
  for (const LiveTask& t : run_live(config, 0, 8)) EXPECT_EQ(t.outcome.name(), "done") << t.error;
  EXPECT_EQ(server.accepted(), 16u);
  for (const LoggedRequest& r : server.log(3).requests) EXPECT_EQ(r.header("connection"), "close");
}

TEST(KeepAlive, EveryFaultClosesTheConnectionAndTheNextRequestConnectsAfresh) {
  // Call 0 leaves its connection idle; call 1's first request reuses it and
  // is reset; every later request follows a fault, even those the server
  // ended cleanly (no_stop, overloaded, malformed, the 529), so each gets a
  // fresh connection: 7 requests over 6 connections.
  Server server;
  const Policy policy{.n = 2, .r = 3, .kind = PolicyKind::layered};
  TaskPlan plan;
  plan.task = 0;
  plan.requests = {std::nullopt,        FaultKind::reset,    FaultKind::no_stop, FaultKind::overloaded,
                   FaultKind::malformed, FaultKind::http_529, std::nullopt};
  server.set_script(0, script_of_plan(plan));
  const ClientConfig config = config_for(policy, server.port());
  const LiveTask t = run_live(config, 0, 1).at(0);
  const Prediction want = predict(policy, plan, config.timing);
  EXPECT_EQ(t.outcome.name(), "done") << t.error;
  EXPECT_EQ(want.outcome.name(), "done");
  EXPECT_EQ(t.requests, 7);
  EXPECT_EQ(want.requests, 7);
  EXPECT_EQ(t.seen, plan.requests);
  EXPECT_EQ(server.log(0).requests.size(), 7u);
  EXPECT_EQ(server.accepted(), 6u);
}

// ---- Against a stub: what the mock server never does -----------------------

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

using test::StubServer;

std::string chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

const std::string kStreamHead = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";

TEST(LiveClient, AnAnswerForAnotherTaskIsACrashFlaggedAsAWrongText) {
  const std::string events =
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello from task 999.\"}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  StubServer stub(kStreamHead + chunk(events) + "0\r\n\r\n", 1);
  const ClientConfig config = config_for(Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}, stub.port());
  const LiveTask t = run_live(config, 3, 1).at(0);
  EXPECT_EQ(t.outcome.outcome, Outcome::crash);
  EXPECT_FALSE(t.outcome.kind.has_value());
  EXPECT_FALSE(t.text_ok);
  EXPECT_EQ(t.text, "Hello from task 999.");
  EXPECT_EQ(t.requests, 1);
}

TEST(LiveClient, ARefusedConnectionIsAResetRetriedAsSuch) {
  // A port that was free a moment ago: nothing listens there now.
  int port = 0;
  {
    asio::io_context ioc;
    asio::ip::tcp::acceptor a(ioc, {asio::ip::make_address("127.0.0.1"), 0});
    port = a.local_endpoint().port();
  }
  // In a wave the first connect happens before the gate; its refusal still
  // counts as the first request's.
  for (const bool coordinated : {false, true}) {
    ClientConfig simple_config = config_for(Policy{.n = 1, .r = 1, .s = 0, .kind = PolicyKind::simple}, port);
    simple_config.coordinated_start = coordinated;
    const LiveTask simple = run_live(simple_config, 0, 1).at(0);
    EXPECT_EQ(simple.outcome.name(), "env_error:reset");
    EXPECT_EQ(simple.requests, 2);
    ClientConfig naive_config = config_for(Policy{.n = 1, .r = 2, .kind = PolicyKind::naive}, port);
    naive_config.coordinated_start = coordinated;
    const LiveTask naive = run_live(naive_config, 0, 1).at(0);
    EXPECT_EQ(naive.outcome.name(), "crash:reset");
    EXPECT_EQ(naive.requests, 9);
  }
}

TEST(LiveClient, AStreamThatBreaksOffInsideTheChunkedBodyIsACut) {
  // Two events, then the connection closes without the terminating chunk.
  const std::string reply = kStreamHead + chunk("event: ping\ndata: {\"type\":\"ping\"}\n\n") +
                            chunk("event: ping\ndata: {\"type\":\"ping\"}\n\n");
  StubServer stub(reply, 3);
  const LiveTask t = run_live(config_for(Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}, stub.port()), 0, 1).at(0);
  EXPECT_EQ(t.outcome.name(), "env_error:cut");
  EXPECT_EQ(t.requests, 3);
  EXPECT_EQ(t.seen, (std::vector<std::optional<FaultKind>>(3, FaultKind::cut)));
}

// Answers every request with a healthy keep-alive stream for its task, one
// connection after another, `connections` of them; after each answer it
// goes on as `after` says. A close is a lingering one (FIN, then read until
// the client closes), so the client never sees a reset.
class KeepAliveStub {
 public:
  enum class After {
    keep,           // wait for the next request on the connection
    close,          // close at once
    read_then_close // read the next request, then close without a byte
  };
  KeepAliveStub(After after, bool say_close, int connections)
      : acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this, after, say_close, connections] {
      for (int i = 0; i < connections; ++i) {
        asio::ip::tcp::socket socket(ioc_);
        boost::system::error_code ec;
        acceptor_.accept(socket, ec);
        if (ec) return;
        ++accepted;
        beast::flat_buffer buffer;
        for (;;) {
          http::request<http::string_body> req;
          http::read(socket, buffer, req, ec);
          if (ec) break;
          ++read;
          const std::string target(req.target());
          const std::int64_t task = std::stoll(target.substr(3, target.find('/', 3) - 3));
          asio::write(socket, asio::buffer(stream(task, say_close)), ec);
          if (ec) break;
          ++answered;
          if (after == After::keep) continue;
          if (after == After::read_then_close) {
            http::request<http::string_body> next;
            http::read(socket, buffer, next, ec);
            if (ec) break;
            ++read;
          }
          // A lingering close: FIN now, then whatever comes until the client closes.
          socket.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
          char scratch[4096];
          while (!ec) socket.read_some(asio::buffer(scratch), ec);
          break;
        }
      }
    });
  }
  ~KeepAliveStub() { finish(); }
  // Waits until the stub has served its connections: the client's run is
  // over and has closed them. Read the counters only after this, since the
  // client can see an answer before the stub counts it.
  void finish() {
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return acceptor_.local_endpoint().port(); }

  static std::string stream(std::int64_t task, bool say_close) {
    const std::string delta = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                              "\"delta\":{\"type\":\"text_delta\",\"text\":\"" + expected_text(task) + "\"}}\n\n";
    return "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n" +
           std::string(say_close ? "connection: close\r\n" : "") + "\r\n" + chunk(delta) +
           chunk("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") + "0\r\n\r\n";
  }

  std::atomic<int> accepted{0}, read{0}, answered{0};

 private:
  asio::io_context ioc_;
  asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
};

ClientConfig three_calls(int port) {
  return config_for(Policy{.n = 3, .r = 2, .kind = PolicyKind::layered}, port);
}

void expect_three_clean_calls(const LiveTask& t) {
  EXPECT_EQ(t.outcome.name(), "done") << t.error;
  EXPECT_EQ(t.requests, 3);
  EXPECT_EQ(t.retry_counts, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(t.seen, (std::vector<std::optional<FaultKind>>(3, std::nullopt)));
}

TEST(KeepAlive, AStubThatKeepsTheConnectionServesEveryCallOnOne) {
  KeepAliveStub stub(KeepAliveStub::After::keep, false, 1);
  expect_three_clean_calls(run_live(three_calls(stub.port()), 0, 1).at(0));
  stub.finish();
  EXPECT_EQ(stub.accepted, 1);
  EXPECT_EQ(stub.answered, 3);
}

TEST(KeepAlive, AConnectionTheServerMarkedCloseIsNotReused) {
  // The stub would answer a second request on it; the client never asks.
  KeepAliveStub stub(KeepAliveStub::After::keep, true, 3);
  expect_three_clean_calls(run_live(three_calls(stub.port()), 0, 1).at(0));
  stub.finish();
  EXPECT_EQ(stub.accepted, 3);
  EXPECT_EQ(stub.read, 3);
}

TEST(KeepAlive, AnIdleConnectionTheServerClosedIsNeitherARequestNorAFault) {
  // Closed after each answer: the client finds it closed before the reuse,
  // or sends on it and gets a clean end before any byte; either way it
  // connects afresh and counts the request once.
  KeepAliveStub stub(KeepAliveStub::After::close, false, 3);
  expect_three_clean_calls(run_live(three_calls(stub.port()), 0, 1).at(0));
  stub.finish();
  EXPECT_EQ(stub.accepted, 3);
  EXPECT_EQ(stub.answered, 3);
}

TEST(KeepAlive, ARequestTheServerReadAndDroppedOnAReusedConnectionIsSentAgainUncounted) {
  // The server closes the moment the next request arrives: what a client
  // sees when an idle timeout fires as its request leaves. Five requests
  // reach the stub, three are answered; the task counts three.
  KeepAliveStub stub(KeepAliveStub::After::read_then_close, false, 3);
  expect_three_clean_calls(run_live(three_calls(stub.port()), 0, 1).at(0));
  stub.finish();
  EXPECT_EQ(stub.accepted, 3);
  EXPECT_EQ(stub.read, 5);
  EXPECT_EQ(stub.answered, 3);
}

}  // namespace relsim::client_connection_test
