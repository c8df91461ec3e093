// The workbench's HTTP server at its limits: whatever the bytes (a long
// target, a big body, garbage, a header flood, a slowloris, connections over
// the cap), an answer or a close, and the next client is still served.
// Against the fake CommandRunner of live/ui_server_fixture.hpp.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "live/ui_server_fixture.hpp"

namespace ui_server_limits_test {

using namespace relsim::test::ui_server;

// --- limits: whatever the bytes, an answer or a close, and the next client is served ---

TEST(UiServer, TargetOverEightKibIs414) {
  FakeServer s;
  const int port = s.port;
  for (const std::size_t size : {9'000u, 40'000u, 200'000u}) {
    const UiReply r = get(port, "/api/exact?p=" + std::string(size, '1'));
    expect_error(r, 414, "8192");
    EXPECT_EQ(r.header("connection"), "close");
    expect_still_serving(port);
  }
}

TEST(UiServer, BodyOverTheLimitIs413) {
  FakeServer s({}, config([](UiConfig& c) { c.max_body_bytes = 1000; }));
  const int port = s.port;
  expect_error(round_trip(port, ui_request("POST", "/api/audit", port, std::string(1001, 'x'))), 413, "at most 1000");
  expect_error(round_trip(port, ui_request("POST", "/api/contention/trend", port, std::string(1001, 'x'))), 413,
               "at most 1000");
  // Elsewhere the limit is 64 KiB, chunked or not.
  expect_error(round_trip(port, ui_request("GET", "/api/exact", port, std::string(70'000, 'x'))), 413, "too large");
  const std::string chunked = fmt::format("GET /api/exact HTTP/1.1\r\nHost: 127.0.0.1:{}\r\ntransfer-encoding: chunked\r\n"
                                          "\r\n{:x}\r\n{}\r\n0\r\n\r\n",
                                          port, 70'000, std::string(70'000, 'y'));
  expect_error(round_trip(port, chunked), 413, "too large");
  expect_still_serving(port);
  std::lock_guard lock(s.fake.mu);
  EXPECT_EQ(s.fake.calls.size(), 1u);
}

TEST(UiServer, GarbageBytesGet400OrACloseAndTheServerGoesOn) {
  // A request only begun is closed at this timeout, well before the client gives up.
  FakeServer s({}, config([](UiConfig& c) { c.read_timeout = 2s; }));
  const int port = s.port;
  std::string noise;
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 4096; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    noise += static_cast<char>(x & 0xff);
  }
  for (const std::string& bytes : {noise, std::string("\r\n\r\n"), std::string("GET / HTTP/9.9\r\n\r\n"),
                                   std::string("GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n"), std::string(1, '\0')}) {
    RawClient c(port);
    c.send(bytes);
    const UiReply r = read_reply(c);
    EXPECT_TRUE(r.status == 0 || r.status == 400) << r.status;
    c.drain();
    EXPECT_TRUE(c.eof || c.reset) << "the connection was neither answered nor closed";
    expect_still_serving(port);
  }
}

TEST(UiServer, HeaderFloodIs431) {
  FakeServer s;
  const int port = s.port;
  std::string flood = fmt::format("GET / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", port);
  for (int i = 0; i < 5000; ++i) flood += fmt::format("x-flood-{}: {}\r\n", i, i);
  const UiReply r = round_trip(port, flood + "\r\n");
  expect_error(r, 431, "headers exceed");
  expect_still_serving(port);
}

TEST(UiServer, SlowlorisIsClosedAtTheReadTimeout) {
  FakeServer s({}, config([](UiConfig& c) { c.read_timeout = 300ms; }));
  const int port = s.port;
  RawClient slow(port);
  slow.send("GET /api/exact?p=0.3 HTTP/1.1\r\nHost: 127.0.0.1");
  slow.drain();  // the server closes it (RawClient gives up after 10 s: timed_out)
  EXPECT_TRUE(slow.eof || slow.reset) << "timed out: the server kept a slow client";
  EXPECT_TRUE(slow.buf.empty()) << slow.buf;
  expect_still_serving(port);
}

TEST(UiServer, ConnectionsOverTheCapAreClosed) {
  FakeServer s({}, config([](UiConfig& c) { c.max_connections = 2; }));
  const int port = s.port;
  RawClient a(port), b(port);
  for (RawClient* client : {&a, &b}) {
    client->send(ui_request("GET", "/", port));
    EXPECT_EQ(read_reply(*client).status, 200);
  }
  RawClient over(port);
  over.send(ui_request("GET", "/", port));
  over.drain();
  EXPECT_TRUE(over.eof || over.reset);
  EXPECT_TRUE(over.buf.empty());
  // Once one closes, a new client is served (the server notices the close
  // at once, but asynchronously: a bounded number of tries, no timing).
  a.close();
  bool served = false;
  for (int i = 0; i < 500 && !served; ++i) {
    served = get(port, "/").status == 200;
    if (!served) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(served);
}

}  // namespace ui_server_limits_test
