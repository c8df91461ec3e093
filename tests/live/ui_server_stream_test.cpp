// The workbench's HTTP server runs commands off its I/O thread: the page
// loads while a command runs, /api/.../stream sends progress events then the
// result (or an error event), and a client leaving, or stop, cancels the
// command at its next progress report. Against the fake CommandRunner of
// live/ui_server_fixture.hpp; runners hold on a Gate the test opens.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>

#include "live/ui_server_fixture.hpp"

namespace ui_server_stream_test {

using namespace relsim::test::ui_server;

// --- commands off the I/O thread, the event stream, cancellation ---------------------

TEST(UiServer, ThePageLoadsWhileACommandRuns) {
  Gate gate;
  FakeServer s([&](const Args&, const CommandHooks&) {
    gate.wait();
    return CommandResult{0, "{}\n", "", ""};
  }, config(1));
  const int port = s.port;
  RawClient busy(port);
  busy.send(ui_request("GET", "/api/simulate?tasks=400", port));
  ASSERT_TRUE(s.fake.wait_calls(1));
  EXPECT_EQ(get(port, "/").status, 200);
  gate.open();
  EXPECT_EQ(read_reply(busy).status, 200);
}

TEST(UiServer, StreamSendsProgressThenTheResult) {
  Gate gate;
  FakeServer s([&](const Args&, const CommandHooks& hooks) {
    hooks.progress(100, 400);
    gate.wait();  // until the test has seen that progress event
    hooks.progress(400, 400);
    return CommandResult{0, "{\"successes\": 310}\n", "", ""};
  });
  const int port = s.port;
  RawClient c(port);
  c.send(ui_request("GET", "/api/simulate/stream?tasks=400&seed=20261001", port));
  ASSERT_TRUE(c.read_until("data: {\"done\":100,\"total\":400}\n\n"));
  EXPECT_EQ(c.buf.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  gate.open();
  const UiReply r = read_reply(c);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_EQ(r.header("transfer-encoding"), "chunked");
  EXPECT_EQ(r.header("connection"), "close");
  expect_guard_headers(r);
  const auto events = events_of(r.body);
  ASSERT_GE(events.size(), 2u) << r.body;
  EXPECT_EQ(events.front(), (std::pair<std::string, std::string>{"progress", "{\"done\":100,\"total\":400}"}));
  EXPECT_EQ(events.back(), (std::pair<std::string, std::string>{"result", "{\"successes\": 310}"}));
  for (std::size_t i = 0; i + 1 < events.size(); ++i) EXPECT_EQ(events[i].first, "progress");
  EXPECT_EQ(s.fake.call(0), (Args{"simulate", "--tasks=400", "--seed=20261001", "--json"}));
  c.drain();
  EXPECT_TRUE(c.eof || c.reset);
}

TEST(UiServer, StreamEndsWithAnErrorEventForBadInput) {
  FakeServer s([](const Args&, const CommandHooks&) {
    return CommandResult{2, "", "p = 1.2 is out of range: p must be in [0, 1]", ""};
  });
  const UiReply r = get(s.port, "/api/simulate/stream?p=1.2");
  EXPECT_EQ(r.status, 200);
  const auto events = events_of(r.body);
  ASSERT_EQ(events.size(), 1u) << r.body;
  EXPECT_EQ(events[0].first, "error");
  EXPECT_EQ(Json::parse(events[0].second),
            (Json{{"error", "p = 1.2 is out of range: p must be in [0, 1]"}, {"code", 2}}));
}

TEST(UiServer, ClosingTheStreamCancelsTheCommandAtItsNextReport) {
  FakeServer s(until_cancelled("simulate"));
  const int port = s.port;
  {
    RawClient c(port);
    c.send(ui_request("GET", "/api/simulate/stream?tasks=10000000", port));
    ASSERT_TRUE(c.read_until("event: progress\n"));
  }  // closed here
  EXPECT_TRUE(s.fake.wait_cancelled());
  expect_still_serving(port);
}

TEST(UiServer, AClientLeavingAPlainRequestCancelsItsCommandToo) {
  FakeServer s(until_cancelled("sweep"));
  {
    RawClient c(s.port);
    c.send(ui_request("GET", "/api/sweep?p=0.1", s.port));
    ASSERT_TRUE(s.fake.wait_calls(1));
  }
  EXPECT_TRUE(s.fake.wait_cancelled());
}

TEST(UiServer, StopCancelsRunningCommandsAndClosesConnections) {
  FakeServer s(until_cancelled("simulate"));
  const int port = s.port;
  RawClient running(port), idle(port);
  running.send(ui_request("GET", "/api/simulate?tasks=10000000", port));
  idle.send(ui_request("GET", "/", port));
  EXPECT_EQ(read_reply(idle).status, 200);
  ASSERT_TRUE(s.fake.wait_calls(1));
  s.server->stop();
  EXPECT_TRUE(s.fake.wait_cancelled());
  running.drain();
  idle.drain();
  EXPECT_FALSE(running.timed_out || idle.timed_out);
  s.server->stop();  // idempotent
  RawClient after(port);
  after.send(ui_request("GET", "/", port));
  EXPECT_EQ(read_reply(after).status, 0);
}

}  // namespace ui_server_stream_test
