// The mock server against bad input, each case followed by a healthy request
// (fixture ServerBadInput): malformed request lines and random bytes, oversize
// headers and bodies, unknown paths and methods, bodies that are not
// streaming JSON, clients vanishing mid-stream, slow senders, the connection
// cap, and pipelined requests. Through the raw client of live/server_wire.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "live/server_wire.hpp"
#include "relsim/server/server.hpp"

namespace server_bad_input_test {

using namespace relsim::test::server_wire;

// --- bad input, each followed by a healthy request --------------------------------------

class ServerBadInput : public ::testing::Test {
 protected:
  ServerBadInput() : server_(make_config()) { server_.set_script(1, script_of({"ok", "ok", "ok", "ok"})); }
  static ServerConfig make_config() {
    ServerConfig c = config_with();
    c.read_timeout = 300ms;
    c.linger_timeout = 300ms;
    return c;
  }
  void expect_still_healthy() {
    const auto before = server_.log(1).requests.size();
    expect_healthy_stream(one_request(server_.port(), message(1)), 1, static_cast<std::int64_t>(before));
  }
  Server server_;
};

TEST_F(ServerBadInput, MalformedRequestLineGets400AndClose) {
  Client c(server_.port());
  const Response r = roundtrip(c, "THIS IS NOT HTTP\r\n\r\n");
  expect_api_error(r, 400, "invalid_request_error");
  EXPECT_EQ(r.header("connection"), "close");
  c.drain();
  EXPECT_TRUE(c.eof || c.reset);
  EXPECT_FALSE(c.timed_out);
  expect_still_healthy();
}

TEST_F(ServerBadInput, RandomBytesGet400AndClose) {
  Client c(server_.port());
  std::string junk;
  for (int i = 0; i < 300; ++i) junk.push_back(static_cast<char>((i * 131 + 7) % 256));
  junk += "\r\n\r\n";
  expect_api_error(roundtrip(c, junk), 400, "invalid_request_error");
  expect_still_healthy();
}

TEST_F(ServerBadInput, OversizeHeadersGet431) {
  Client c(server_.port());
  const std::string big = "x-big: " + std::string(20000, 'a') + "\r\n";
  expect_api_error(roundtrip(c, message(1, big)), 431, "request_too_large");
  expect_still_healthy();
  EXPECT_EQ(server_.log(1).requests.size(), 1u);  // the refused one took no entry
}

TEST_F(ServerBadInput, OversizeBodyGets413) {
  Client c(server_.port());
  c.send("POST /t/1/v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2000000\r\n\r\n");
  c.send(std::string(65536, ' '));
  expect_api_error(read_response(c), 413, "request_too_large");
  expect_still_healthy();
}

TEST_F(ServerBadInput, UnknownPathGets404JsonAndKeepsTheConnection) {
  Client c(server_.port());
  expect_api_error(roundtrip(c, request("POST", "/v1/messages", kBody)), 404, "not_found_error");
  expect_api_error(roundtrip(c, request("POST", "/t/-1/v1/messages", kBody)), 404, "not_found_error");
  expect_api_error(roundtrip(c, request("POST", "/t/1/v1/complete", kBody)), 404, "not_found_error");
  expect_healthy_stream(roundtrip(c, message(1)), 1, 0);
}

TEST_F(ServerBadInput, WrongMethodGets405Json) {
  Client c(server_.port());
  const Response r = roundtrip(c, request("GET", "/t/1/v1/messages"));
  expect_api_error(r, 405, "invalid_request_error");
  EXPECT_EQ(r.header("allow"), "POST");
  expect_healthy_stream(roundtrip(c, message(1)), 1, 0);
}

TEST_F(ServerBadInput, BodyNotJsonOrNotStreamingGets400WithoutTakingAnEntry) {
  Client c(server_.port());
  expect_api_error(roundtrip(c, message(1, "", "{not json")), 400, "invalid_request_error");
  expect_api_error(roundtrip(c, message(1, "", R"({"stream": false})")), 400, "invalid_request_error");
  expect_api_error(roundtrip(c, message(1, "", "[1, 2]")), 400, "invalid_request_error");
  expect_healthy_stream(roundtrip(c, message(1)), 1, 0);  // index 0: no entry was taken
  const auto log = server_.log(1);
  ASSERT_EQ(log.requests.size(), 4u);
  EXPECT_EQ(log.requests[0].status, 400);
  EXPECT_FALSE(log.requests[0].entry.has_value());
}

TEST_F(ServerBadInput, ClientVanishingMidStreamLeavesTheServerHealthy) {
  server_.set_script(2, relsim::parse_script(Json::parse(R"([{"kind": "ok", "gate": "mid"}, "stall"])")));
  {
    Client c(server_.port());
    c.send(message(2));
    Response r;
    ASSERT_TRUE(read_head(c, r));
    read_chunks(c, r, 1);
    ASSERT_TRUE(server_.wait_held(2, 1, kLimit));
    c.abort();  // a reset in the middle of the stream
  }
  ASSERT_TRUE(server_.wait_held(2, 0, kLimit));
  {
    Client c(server_.port());
    c.send(message(2));
    ASSERT_TRUE(server_.wait_held(2, 1, kLimit));
  }  // a clean close in the middle of a stall
  ASSERT_TRUE(server_.wait_finished(2, 2, kLimit));
  EXPECT_EQ(server_.log(2).requests.at(0).end, "client_gone");
  EXPECT_EQ(server_.log(2).requests.at(1).end, "client_gone");
  expect_still_healthy();
}

TEST_F(ServerBadInput, SlowSenderIsClosedAfterTheReadTimeout) {
  Client c(server_.port());
  c.send("POST /t/1/v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\n");  // and never the rest
  c.drain();                                                         // until the server closes
  EXPECT_TRUE(c.eof || c.reset);
  EXPECT_FALSE(c.timed_out);
  EXPECT_TRUE(c.buf.empty());
  Client silent(server_.port());  // connects and never sends
  silent.drain();
  EXPECT_TRUE(silent.eof || silent.reset);
  expect_still_healthy();
}

TEST_F(ServerBadInput, ConnectionsBeyondTheCapAreClosedAtAccept) {
  ServerConfig config = config_with();
  config.max_connections = 2;
  Server server(config);
  server.set_script(1, script_of({"ok", "ok", "ok"}));
  Client a(server.port()), b(server.port());
  expect_healthy_stream(roundtrip(a, message(1)), 1, 0);
  expect_healthy_stream(roundtrip(b, message(1)), 1, 1);
  Client extra(server.port());
  extra.send(message(1));
  extra.drain();
  EXPECT_TRUE(extra.buf.empty());
  EXPECT_TRUE(extra.eof || extra.reset || extra.send_failed);
  EXPECT_EQ(server.connections(), 2u);
  expect_healthy_stream(roundtrip(a, message(1)), 1, 2);
}

TEST_F(ServerBadInput, PipelinedRequestsAreAnsweredInOrder) {
  Client c(server_.port());
  c.send(message(1) + message(1) + request("GET", "/control/health"));
  expect_healthy_stream(read_response(c), 1, 0);
  expect_healthy_stream(read_response(c), 1, 1);
  EXPECT_EQ(read_response(c).status, 200);
}

}  // namespace server_bad_input_test
