// The mock server's wire contract (docs/wire.md), byte for byte, through a
// raw POSIX-socket client (live/server_wire.hpp; no HTTP library between the
// test and the bytes): a healthy stream and the in-stream faults (cut,
// no_stop, malformed, overloaded), the HTTP statuses with their API error
// bodies, and the TCP-level faults (reset, empty, garbage). Nothing here
// sleeps to create a fault or asserts on timing. Held replies are in
// server_hold_test.cpp, tasks, scripts, logs and relsim serve in
// server_tasks_test.cpp, bad input in server_bad_input_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "live/server_wire.hpp"
#include "relsim/server/server.hpp"

namespace server_test {

using namespace relsim::test::server_wire;

// --- script kinds -----------------------------------------------------------------

TEST(ServerStream, OkIsEightEventsInOrderNamingTheTaskAndKeepsTheConnection) {
  Server server(config_with());
  server.set_script(7, script_of({"ok", "ok"}));
  Client c(server.port());
  expect_healthy_stream(roundtrip(c, message(7)), 7, 0);
  expect_healthy_stream(roundtrip(c, message(7)), 7, 1);  // same connection: keep-alive
}

TEST(ServerStream, OkIsExactlyTheseBytes) {
  Server server(config_with());
  server.set_script(7, script_of({"ok"}));
  Client c(server.port());
  c.send(message(7));
  while (c.buf.size() < 5 || c.buf.compare(c.buf.size() - 5, 5, "0\r\n\r\n") != 0)
    if (!c.fill()) break;
  const std::string want =
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
      "transfer-encoding: chunked\r\nrequest-id: req_relsim_7_0\r\nconnection: keep-alive\r\n\r\n"
      "f4\r\nevent: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_relsim_7_0\","
      "\"type\":\"message\",\"role\":\"assistant\",\"model\":\"relsim-mock\",\"content\":[],\"stop_reason\":null,"
      "\"stop_sequence\":null,\"usage\":{\"input_tokens\":24,\"output_tokens\":1}}}\n\n\r\n"
      "75\r\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
      "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\r\n"
      "23\r\nevent: ping\ndata: {\"type\":\"ping\"}\n\n\r\n"
      "7e\r\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello from \"}}\n\n\r\n"
      "7a\r\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"text_delta\",\"text\":\"task 7.\"}}\n\n\r\n"
      "49\r\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\r\n"
      "89\r\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
      "\"stop_sequence\":null},\"usage\":{\"output_tokens\":6}}\n\n\r\n"
      "33\r\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n\r\n"
      "0\r\n\r\n";
  EXPECT_EQ(c.buf, want);
}

TEST(ServerStream, EachEventIsOneChunkInTheApiFormat) {
  Server server(config_with());
  server.set_script(3, script_of({"ok"}));
  const Response r = one_request(server.port(), message(3));
  ASSERT_EQ(r.chunks.size(), 8u);
  for (const auto& chunk : r.chunks) {
    EXPECT_EQ(chunk.rfind("event: ", 0), 0u) << chunk;
    EXPECT_NE(chunk.find("\ndata: {"), std::string::npos) << chunk;
    EXPECT_EQ(chunk.substr(chunk.size() - 3), "}\n\n") << chunk;
  }
}

TEST(ServerStream, CutSendsTheFirstDeltaThenClosesWithoutTheTerminatingChunk) {
  Server server(config_with());
  server.set_script(1, script_of({"cut"}));
  Client c(server.port());
  const Response r = roundtrip(c, message(1));
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_TRUE(c.eof || c.reset);
  EXPECT_FALSE(c.timed_out);
  const auto ev = r.events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].name, "message_start");
  EXPECT_EQ(ev[1].name, "content_block_start");
  EXPECT_EQ(ev[2].name, "content_block_delta");
  EXPECT_EQ(Json::parse(ev[2].data)["delta"]["text"], "Hello from ");
}

TEST(ServerStream, NoStopEndsCleanlyWithoutMessageStop) {
  Server server(config_with());
  server.set_script(1, script_of({"no_stop", "ok"}));
  Client c(server.port());
  const Response r = roundtrip(c, message(1));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.complete);
  const auto ev = r.events();
  ASSERT_EQ(ev.size(), 7u);
  EXPECT_EQ(ev.back().name, "message_delta");
  for (const auto& e : ev) EXPECT_NE(e.name, "message_stop");
  expect_healthy_stream(roundtrip(c, message(1)), 1, 1);  // a clean end keeps the connection
}

TEST(ServerStream, MalformedHasExactlyOneEventWhoseDataIsNotJson) {
  Server server(config_with());
  server.set_script(2, script_of({"malformed"}));
  const Response r = one_request(server.port(), message(2));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.complete);
  const auto ev = r.events();
  ASSERT_EQ(ev.size(), 8u);
  EXPECT_EQ(ev[0].name, "message_start");
  EXPECT_EQ(ev[1].name, "content_block_start");
  int bad = 0;
  for (const auto& e : ev) bad += Json::parse(e.data, nullptr, false).is_discarded();
  EXPECT_EQ(bad, 1);
  EXPECT_TRUE(Json::parse(ev[2].data, nullptr, false).is_discarded());
  EXPECT_EQ(ev.back().name, "message_stop");
}

TEST(ServerStream, OverloadedIsAnErrorEventInsideA200Stream) {
  Server server(config_with());
  server.set_script(2, script_of({"overloaded"}));
  const Response r = one_request(server.port(), message(2));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.complete);
  const auto ev = r.events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].name, "message_start");
  EXPECT_EQ(ev[1].name, "error");
  EXPECT_EQ(Json::parse(ev[1].data),
            (Json{{"type", "error"}, {"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}}));
}

TEST(ServerStatus, HttpKindsAnswerTheirStatusWithAnApiErrorBody) {
  ServerConfig config = config_with();
  config.retry_after = "3";
  Server server(config);
  server.set_script(5, script_of({"http_429", "http_500", "http_503", "http_529", "http_400", "ok"}));
  Client c(server.port());
  const Response r429 = roundtrip(c, message(5));
  expect_api_error(r429, 429, "rate_limit_error");
  EXPECT_EQ(r429.header("retry-after"), "3");
  EXPECT_EQ(r429.header("request-id"), "req_relsim_5_0");
  expect_api_error(roundtrip(c, message(5)), 500, "api_error");
  expect_api_error(roundtrip(c, message(5)), 503, "api_error");
  const Response r529 = roundtrip(c, message(5));
  expect_api_error(r529, 529, "overloaded_error");
  EXPECT_EQ(r529.header("x-should-retry"), "true");
  EXPECT_FALSE(r429.header("x-should-retry").has_value());
  expect_api_error(roundtrip(c, message(5)), 400, "invalid_request_error");
  expect_healthy_stream(roundtrip(c, message(5)), 5, 5);  // all on one keep-alive connection
}

TEST(ServerStatus, RetryAfterDefaultsToZero) {
  Server server(config_with());
  server.set_script(1, script_of({"http_429"}));
  EXPECT_EQ(one_request(server.port(), message(1)).header("retry-after"), "0");
}

TEST(ServerTcp, ResetSendsNoByteBeforeTheReset) {
  Server server(config_with());
  server.set_script(1, script_of({"reset"}));
  Client c(server.port());
  c.send(message(1));
  c.drain();
  EXPECT_TRUE(c.buf.empty());
  EXPECT_TRUE(c.reset);
  ASSERT_TRUE(server.wait_finished(1, 1, kLimit));
  EXPECT_EQ(server.log(1).requests.at(0).end, "reset");
}

TEST(ServerTcp, EmptyClosesCleanlyWithoutAByte) {
  Server server(config_with());
  server.set_script(1, script_of({"empty"}));
  Client c(server.port());
  c.send(message(1));
  c.drain();
  EXPECT_TRUE(c.buf.empty());
  EXPECT_TRUE(c.eof);
}

TEST(ServerTcp, GarbageIsAFewHundredBytesThatAreNotHttpThenClose) {
  Server server(config_with());
  server.set_script(1, script_of({"garbage"}));
  Client c(server.port());
  c.send(message(1));
  c.drain();
  EXPECT_TRUE(c.eof);
  EXPECT_GE(c.buf.size(), 256u);
  EXPECT_LT(c.buf.size(), 512u);
  EXPECT_NE(c.buf.rfind("HTTP", 0), 0u);
}

}  // namespace server_test
