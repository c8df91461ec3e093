// The mock server's held replies (stall, slow_headers, gates) through a raw
// POSIX-socket client (live/server_wire.hpp): what is sent before the hold,
// release and open_gate, a client going away while held, shaped streams, and
// stop with replies still held. Holds are observed through Server::wait_held
// (a condition variable), never by sleeping, and every wait is bounded by
// kLimit.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "live/server_wire.hpp"
#include "relsim/server/server.hpp"

namespace server_hold_test {

using namespace relsim::test::server_wire;

// --- holds: stall, slow_headers, gates ---------------------------------------------

TEST(ServerHold, StallSendsTwoEventsThenHoldsUntilReleasedAndFinishesNormally) {
  Server server(config_with());
  server.set_script(4, script_of({"stall", "ok"}));
  Client c(server.port());
  c.send(message(4));
  Response r;
  ASSERT_TRUE(read_head(c, r));
  read_chunks(c, r, 2);
  ASSERT_EQ(r.chunks.size(), 2u);
  ASSERT_TRUE(server.wait_held(4, 1, kLimit));
  // Held: the server has sent all it will until released, and nothing more is here.
  EXPECT_EQ(c.unread(), 0);
  EXPECT_TRUE(c.buf.empty());
  EXPECT_EQ(server.release(4), 1u);
  read_chunks(c, r);
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.events().size(), 8u);
  EXPECT_EQ(r.events()[2].name, "ping");
  EXPECT_EQ(Json::parse(r.events()[4].data)["delta"]["text"], "task 4.");
  expect_healthy_stream(roundtrip(c, message(4)), 4, 1);
  EXPECT_EQ(server.held(4), 0u);
}

TEST(ServerHold, StallEndsWhenTheClientGoesAway) {
  Server server(config_with());
  server.set_script(4, script_of({"stall", "ok"}));
  {
    Client c(server.port());
    c.send(message(4));
    Response r;
    ASSERT_TRUE(read_head(c, r));
    read_chunks(c, r, 2);
    ASSERT_TRUE(server.wait_held(4, 1, kLimit));
  }
  ASSERT_TRUE(server.wait_held(4, 0, kLimit));
  ASSERT_TRUE(server.wait_finished(4, 1, kLimit));
  EXPECT_EQ(server.log(4).requests.at(0).end, "client_gone");
  expect_healthy_stream(one_request(server.port(), message(4)), 4, 1);
}

TEST(ServerHold, SlowHeadersSendsNothingUntilReleasedThenAnswersOk) {
  Server server(config_with());
  server.set_script(6, script_of({"slow_headers"}));
  Client c(server.port());
  c.send(message(6));
  ASSERT_TRUE(server.wait_held(6, 1, kLimit));
  EXPECT_EQ(c.unread(), 0);  // not even a status line
  EXPECT_EQ(server.release(6), 1u);
  expect_healthy_stream(read_response(c), 6, 0);
}

TEST(ServerHold, SlowHeadersEndsWhenTheClientGoesAway) {
  Server server(config_with());
  server.set_script(6, script_of({"slow_headers", "ok"}));
  {
    Client c(server.port());
    c.send(message(6));
    ASSERT_TRUE(server.wait_held(6, 1, kLimit));
    c.abort();
  }
  ASSERT_TRUE(server.wait_held(6, 0, kLimit));
  ASSERT_TRUE(server.wait_finished(6, 1, kLimit));
  const auto log = server.log(6);
  EXPECT_EQ(log.requests.at(0).end, "client_gone");
  EXPECT_EQ(log.requests.at(0).status, 0);
  expect_healthy_stream(one_request(server.port(), message(6)), 6, 1);
}

TEST(ServerHold, ReleaseOnlyTouchesItsOwnTask) {
  Server server(config_with());
  server.set_script(1, script_of({"stall"}));
  server.set_script(2, script_of({"stall"}));
  Client a(server.port()), b(server.port());
  a.send(message(1));
  b.send(message(2));
  ASSERT_TRUE(server.wait_held(1, 1, kLimit));
  ASSERT_TRUE(server.wait_held(2, 1, kLimit));
  EXPECT_EQ(server.release(2), 1u);
  Response rb = read_response(b);
  EXPECT_TRUE(rb.complete);
  EXPECT_EQ(server.held(1), 1u);
  EXPECT_EQ(server.release(1), 1u);
  EXPECT_TRUE(read_response(a).complete);
}

TEST(ServerHold, GateHoldsAStreamBeforeItsFirstDeltaUntilOpened) {
  Server server(config_with());
  server.set_script(8, relsim::parse_script(Json::parse(R"([{"kind": "ok", "gate": "g-1"}])")));
  Client c(server.port());
  c.send(message(8));
  Response r;
  ASSERT_TRUE(read_head(c, r));
  read_chunks(c, r, 2);
  ASSERT_TRUE(server.wait_held(8, 1, kLimit));
  EXPECT_EQ(c.unread(), 0);
  EXPECT_EQ(server.release(8), 0u);  // a gate is not a stall
  EXPECT_EQ(server.open_gate("g-1"), 1u);
  read_chunks(c, r);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.events().size(), 8u);
  // An open gate stays open.
  server.set_script(9, relsim::parse_script(Json::parse(R"([{"kind": "ok", "gate": "g-1"}])")));
  expect_healthy_stream(one_request(server.port(), message(9)), 9, 0);
}

TEST(ServerHold, ShapedStreamWithDelaysSlicesAndBandwidthArrivesIntact) {
  Server server(config_with());
  server.set_script(
      2, relsim::parse_script(Json::parse(
             R"([{"kind": "ok", "chunk_delay_ms": 1, "slice_bytes": 7, "bytes_per_second": 1000000}, "ok"])")));
  Client c(server.port());
  expect_healthy_stream(roundtrip(c, message(2)), 2, 0);
  expect_healthy_stream(roundtrip(c, message(2)), 2, 1);
  EXPECT_EQ(to_json(server.log(2).requests.at(0).entry.value())["slice_bytes"], 7);
}

TEST(ServerHold, StopDoesNotHangWithHeldRepliesAndClosesThem) {
  auto server = std::make_unique<Server>(config_with(3));
  server->set_script(1, script_of({"stall"}));
  server->set_script(2, script_of({"slow_headers"}));
  server->set_script(3, relsim::parse_script(Json::parse(R"([{"kind": "ok", "gate": "never"}])")));
  Client a(server->port()), b(server->port()), c(server->port());
  a.send(message(1));
  b.send(message(2));
  c.send(message(3));
  for (int t = 1; t <= 3; ++t) ASSERT_TRUE(server->wait_held(t, 1, kLimit));
  server->stop();
  a.drain();
  b.drain();
  c.drain();
  EXPECT_FALSE(a.timed_out || b.timed_out || c.timed_out);
  EXPECT_TRUE(b.buf.empty());
  server.reset();
}

}  // namespace server_hold_test
