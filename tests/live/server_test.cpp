// The mock server's wire contract, byte for byte, through a raw POSIX-socket
// client (no HTTP library between the test and the bytes). Nothing here
// sleeps to create a fault or asserts on timing: held replies are observed
// through Server::wait_held (a condition variable), and every socket read
// has a 10 s safety timeout that only turns a server bug into a failure
// instead of a hang.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/live/plan.hpp"
#include "relsim/live/server/server.hpp"
#include "support/raw_client.hpp"
#include "support/run.hpp"

namespace {

using relsim::Json;
using relsim::Server;
using relsim::ServerConfig;
using relsim::script_of;
using namespace std::chrono_literals;

constexpr auto kLimit = 10s;  // safety limit of every wait; never reached when the server is right

// --- a raw HTTP/1.1 client ------------------------------------------------------

using Client = relsim::test::RawClient;

struct Event {
  std::string name, data;
};

struct Response {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::vector<std::string> chunks;
  bool chunked = false;
  bool complete = false;  // the terminating chunk, or the whole content-length

  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [k, v] : headers)
      if (k == name) return v;
    return std::nullopt;
  }
  Json json() const { return Json::parse(body, nullptr, false); }
  std::vector<Event> events() const {
    std::vector<Event> out;
    for (const auto& c : chunks) {
      Event e;
      const auto nl = c.find('\n');
      if (c.rfind("event: ", 0) == 0 && nl != std::string::npos) e.name = c.substr(7, nl - 7);
      const auto data = c.find("data: ", nl);
      if (data != std::string::npos) e.data = c.substr(data + 6, c.size() - data - 6 - 2);
      out.push_back(e);
    }
    return out;
  }
};

bool read_head(Client& c, Response& r) {
  std::size_t end;
  while ((end = c.buf.find("\r\n\r\n")) == std::string::npos)
    if (!c.fill()) return false;
  const std::string head = c.buf.substr(0, end + 2);
  c.buf.erase(0, end + 4);
  std::size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);
  if (status_line.rfind("HTTP/1.1 ", 0) != 0) return false;
  r.status = std::atoi(status_line.substr(9, 3).c_str());
  for (std::size_t pos = line_end + 2; pos < head.size();) {
    const std::size_t eol = head.find("\r\n", pos);
    const std::string line = head.substr(pos, eol - pos);
    const std::size_t colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    r.headers.emplace_back(name, value);
    pos = eol + 2;
  }
  r.chunked = r.header("transfer-encoding") == "chunked";
  return true;
}

// Reads up to `most` more chunks; stops at the terminating chunk or the end of the connection.
void read_chunks(Client& c, Response& r, std::size_t most = static_cast<std::size_t>(-1)) {
  for (std::size_t got = 0; got < most && !r.complete;) {
    std::size_t eol;
    while ((eol = c.buf.find("\r\n")) == std::string::npos)
      if (!c.fill()) return;
    const std::size_t size = std::stoul(c.buf.substr(0, eol), nullptr, 16);
    while (c.buf.size() < eol + 2 + size + 2)
      if (!c.fill()) return;
    ASSERT_EQ(c.buf.substr(eol + 2 + size, 2), "\r\n");
    if (size == 0) {
      r.complete = true;
    } else {
      r.chunks.push_back(c.buf.substr(eol + 2, size));
      r.body += r.chunks.back();
      ++got;
    }
    c.buf.erase(0, eol + 2 + size + 2);
  }
}

Response read_response(Client& c) {
  Response r;
  if (!read_head(c, r)) return r;
  if (r.chunked) {
    read_chunks(c, r);
  } else if (const auto len = r.header("content-length")) {
    const std::size_t n = std::stoul(*len);
    while (c.buf.size() < n)
      if (!c.fill()) break;
    r.complete = c.buf.size() >= n;
    r.body = c.buf.substr(0, n);
    c.buf.erase(0, std::min(n, c.buf.size()));
  }
  return r;
}

const std::string kBody = R"({"model":"claude-test","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]})";

std::string request(std::string_view method, std::string_view target, std::string_view body = "",
                    std::string_view extra = "") {
  return fmt::format("{} {} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{}\r\n{}",
                     method, target, body.size(), extra, body);
}
std::string message(std::int64_t task, std::string_view extra = "", std::string_view body = kBody) {
  return request("POST", fmt::format("/t/{}/v1/messages", task), body, extra);
}

Response roundtrip(Client& c, const std::string& bytes) {
  c.send(bytes);
  return read_response(c);
}
Response one_request(int port, const std::string& bytes) {
  Client c(port);
  return roundtrip(c, bytes);
}

ServerConfig config_with(int threads = 2) {
  ServerConfig c;
  c.threads = threads;
  return c;
}

// The eight events of a healthy stream, for task `task`, request k.
void expect_healthy_stream(const Response& r, std::int64_t task, std::int64_t k) {
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_EQ(r.header("transfer-encoding"), "chunked");
  EXPECT_EQ(r.header("request-id"), fmt::format("req_relsim_{}_{}", task, k));
  EXPECT_TRUE(r.complete);
  const auto ev = r.events();
  const std::vector<std::string> names = {"message_start",       "content_block_start", "ping",
                                          "content_block_delta", "content_block_delta", "content_block_stop",
                                          "message_delta",       "message_stop"};
  ASSERT_EQ(ev.size(), names.size());
  std::string text;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i].name, names[i]);
    const Json d = Json::parse(ev[i].data, nullptr, false);
    ASSERT_FALSE(d.is_discarded()) << ev[i].data;
    EXPECT_EQ(d["type"], names[i]);
    if (ev[i].name == "content_block_delta") text += d["delta"]["text"].get<std::string>();
  }
  const Json start = Json::parse(ev[0].data);
  EXPECT_EQ(start["message"]["id"], fmt::format("msg_relsim_{}_{}", task, k));
  EXPECT_EQ(start["message"]["type"], "message");
  EXPECT_EQ(start["message"]["role"], "assistant");
  EXPECT_EQ(start["message"]["model"], "relsim-mock");
  EXPECT_EQ(start["message"]["content"], Json::array());
  EXPECT_TRUE(start["message"]["usage"]["input_tokens"].is_number_integer());
  EXPECT_EQ(Json::parse(ev[1].data)["content_block"], (Json{{"type", "text"}, {"text", ""}}));
  EXPECT_EQ(text, fmt::format("Hello from task {}.", task));
  const Json delta = Json::parse(ev[6].data);
  EXPECT_EQ(delta["delta"]["stop_reason"], "end_turn");
  EXPECT_TRUE(delta["delta"]["stop_sequence"].is_null());
  EXPECT_TRUE(delta["usage"]["output_tokens"].is_number_integer());
}

void expect_api_error(const Response& r, int status, std::string_view type) {
  EXPECT_EQ(r.status, status);
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_TRUE(r.header("request-id").has_value());
  EXPECT_TRUE(r.complete);
  const Json j = r.json();
  ASSERT_TRUE(j.is_object()) << r.body;
  EXPECT_EQ(j["type"], "error");
  EXPECT_EQ(j["error"]["type"], type) << r.body;
  EXPECT_TRUE(j["error"]["message"].is_string());
}

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

// --- tasks, scripts, logs -------------------------------------------------------------

TEST(ServerTasks, FiftyTasksInParallelEachGetTheirOwnEntriesInOrder) {
  Server server(config_with(4));
  const std::vector<std::string> kinds = {"ok", "http_529", "no_stop", "http_429", "http_503", "overloaded"};
  constexpr int kTasks = 50, kRequests = 6;
  auto script_for = [&](int t) {
    std::vector<std::string> s;
    for (int i = 0; i < kRequests; ++i) s.push_back(kinds[static_cast<std::size_t>((t + i) % kinds.size())]);
    return s;
  };
  for (int t = 0; t < kTasks; ++t) {
    Json j = Json::array();
    for (const auto& k : script_for(t)) j.push_back(k);
    server.set_script(t, relsim::parse_script(j));
  }
  std::vector<std::vector<std::string>> seen(kTasks);
  std::vector<std::thread> threads;
  for (int t = 0; t < kTasks; ++t)
    threads.emplace_back([&, t] {
      Client c(server.port());
      for (int i = 0; i < kRequests; ++i) {
        const Response r = roundtrip(c, message(t));
        std::string what = fmt::format("{}", r.status);
        if (r.status == 200) {
          const auto ev = r.events();
          what += fmt::format(":{}:{}", ev.size(), ev.empty() ? "" : ev.back().name);
          if (!ev.empty())
            what += ":" + Json::parse(ev[0].data, nullptr, false)["message"]["id"].get<std::string>();
          for (const auto& e : ev)
            if (e.name == "content_block_delta" && e.data.find("task ") != std::string::npos)
              what += ":" + Json::parse(e.data)["delta"]["text"].get<std::string>();
        }
        seen[static_cast<std::size_t>(t)].push_back(what);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kTasks; ++t) {
    const auto script = script_for(t);
    std::vector<std::string> want;
    for (int i = 0; i < kRequests; ++i) {
      const auto& k = script[static_cast<std::size_t>(i)];
      const std::string id = fmt::format("msg_relsim_{}_{}", t, i);
      const std::string text = fmt::format("task {}.", t);
      if (k == "ok") want.push_back(fmt::format("200:8:message_stop:{}:{}", id, text));
      else if (k == "no_stop") want.push_back(fmt::format("200:7:message_delta:{}:{}", id, text));
      else if (k == "overloaded") want.push_back(fmt::format("200:2:error:{}", id));
      else want.push_back(k.substr(5));
    }
    EXPECT_EQ(seen[static_cast<std::size_t>(t)], want) << "task " << t;
    const auto log = server.log(t);
    ASSERT_EQ(log.requests.size(), static_cast<std::size_t>(kRequests));
    for (int i = 0; i < kRequests; ++i) {
      EXPECT_EQ(relsim::entry_name(*log.requests[static_cast<std::size_t>(i)].entry), script[static_cast<std::size_t>(i)]);
      EXPECT_EQ(log.requests[static_cast<std::size_t>(i)].index, i);
    }
  }
}

TEST(ServerTasks, LogRecordsRetryCountHeadersBodyEntryAndTimes) {
  Server server(config_with());
  server.set_script(3, script_of({"http_529", "http_529", "ok"}));
  Client c(server.port());
  for (int i = 0; i < 3; ++i) roundtrip(c, message(3, fmt::format("X-Stainless-Retry-Count: {}\r\n", i)));
  ASSERT_TRUE(server.wait_finished(3, 3, kLimit));
  const relsim::TaskLog log = server.log(3);
  EXPECT_EQ(log.task, 3);
  EXPECT_EQ(log.dropped, 0u);
  ASSERT_EQ(log.requests.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& r = log.requests[i];
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/t/3/v1/messages");
    EXPECT_EQ(r.header("x-stainless-retry-count"), std::to_string(i));
    EXPECT_EQ(r.header("X-Stainless-Retry-Count"), std::to_string(i));
    EXPECT_EQ(r.body, kBody);
    EXPECT_EQ(r.body_bytes, kBody.size());
    EXPECT_EQ(r.status, i < 2 ? 529 : 200);
    EXPECT_EQ(r.end, "complete");
    EXPECT_EQ(relsim::entry_name(*r.entry), i < 2 ? "http_529" : "ok");
    ASSERT_TRUE(r.finished_ms.has_value());
    EXPECT_LE(r.received_ms, *r.finished_ms);
  }
  const Json j = to_json(log);
  EXPECT_EQ(j["requests"][1]["headers"]["x-stainless-retry-count"], "1");
  EXPECT_EQ(j["requests"][2]["entry"], "ok");
}

TEST(ServerTasks, LogKeepsAtMostTheCapAndCountsTheRest) {
  ServerConfig config = config_with();
  config.max_log_entries = 2;
  Server server(config);
  server.set_script(1, script_of({"http_500", "http_500", "http_500", "ok"}));
  Client c(server.port());
  for (int i = 0; i < 3; ++i) roundtrip(c, message(1));
  expect_healthy_stream(roundtrip(c, message(1)), 1, 3);
  const auto log = server.log(1);
  EXPECT_EQ(log.requests.size(), 2u);
  EXPECT_EQ(log.dropped, 2u);
}

TEST(ServerTasks, UnknownTaskAndExhaustedScriptAnswer404AtOnce) {
  Server server(config_with());
  server.set_script(1, script_of({"ok"}));
  Client c(server.port());
  const Response unknown = roundtrip(c, message(99));
  expect_api_error(unknown, 404, "not_found_error");
  EXPECT_NE(unknown.json()["error"]["message"].get<std::string>().find("task 99"), std::string::npos);
  expect_healthy_stream(roundtrip(c, message(1)), 1, 0);
  const Response exhausted = roundtrip(c, message(1));
  expect_api_error(exhausted, 404, "not_found_error");
  EXPECT_NE(exhausted.json()["error"]["message"].get<std::string>().find("task 1"), std::string::npos);
  const auto log = server.log(1);
  ASSERT_EQ(log.requests.size(), 2u);
  EXPECT_FALSE(log.requests[1].entry.has_value());
  EXPECT_EQ(log.requests[1].status, 404);
}

TEST(ServerTasks, SetScriptReplacesTheRemainingEntries) {
  Server server(config_with());
  server.set_script(1, script_of({"http_500", "http_500"}));
  Client c(server.port());
  EXPECT_EQ(roundtrip(c, message(1)).status, 500);
  server.set_script(1, script_of({"ok"}));
  expect_healthy_stream(roundtrip(c, message(1)), 1, 1);
  EXPECT_EQ(roundtrip(c, message(1)).status, 404);
}

TEST(ServerTasks, LoadPlanGivesEachTaskItsPlannedRequests) {
  relsim::Plan plan;
  plan.tasks.push_back({0, {std::nullopt}});
  plan.tasks.push_back({1, {relsim::FaultKind::http_529, std::nullopt}});
  Server server(config_with());
  server.load_plan(plan);
  Client c(server.port());
  expect_healthy_stream(roundtrip(c, message(0)), 0, 0);
  EXPECT_EQ(roundtrip(c, message(1)).status, 529);
  expect_healthy_stream(roundtrip(c, message(1)), 1, 1);
}

TEST(ServerScript, EntriesParseFromNamesAndObjectsAndErrorsNameTheEntry) {
  const auto s = relsim::parse_script(
      Json::parse(R"(["ok", "cut", "empty", {"kind": "garbage"}, {"kind": "ok", "gate": "a", "chunk_delay_ms": 5}])"));
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[1], relsim::ScriptEntry::of(relsim::FaultKind::cut));
  EXPECT_EQ(relsim::entry_name(s[2]), "empty");
  EXPECT_EQ(relsim::entry_name(s[3]), "garbage");
  EXPECT_EQ(to_json(s[4]), (Json{{"kind", "ok"}, {"chunk_delay_ms", 5}, {"gate", "a"}}));
  EXPECT_EQ(to_json(s[1]), "cut");
  auto error_of = [](const char* text) {
    try {
      relsim::parse_script(Json::parse(text));
    } catch (const relsim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(R"(["ok", "bogus"])").find("responses[1]"), std::string::npos);
  EXPECT_NE(error_of(R"(["ok", "bogus"])").find("bogus"), std::string::npos);
  EXPECT_NE(error_of(R"([{"kind": "ok", "chunk_delay_ms": -1}])").find("chunk_delay_ms"), std::string::npos);
  EXPECT_NE(error_of(R"([{"kind": "ok", "gate": "a b"}])").find("gate"), std::string::npos);
  EXPECT_NE(error_of(R"([{"kind": "ok", "speed": 1}])").find("speed"), std::string::npos);
  EXPECT_NE(error_of(R"([{"gate": "a"}])").find("kind"), std::string::npos);
  EXPECT_NE(error_of(R"([3])").find("responses[0]"), std::string::npos);
}

TEST(ServerScript, ConfigOutOfRangeIsRefusedWithItsRange) {
  ServerConfig c;
  c.port = 70000;
  EXPECT_THROW(relsim::validate(c), relsim::InputError);
  c = ServerConfig{};
  c.threads = 0;
  EXPECT_THROW(relsim::validate(c), relsim::InputError);
  c = ServerConfig{};
  c.retry_after = "soon";
  EXPECT_THROW(relsim::validate(c), relsim::InputError);
  c.retry_after = "1.5";
  EXPECT_NO_THROW(relsim::validate(c));
  c = ServerConfig{};
  c.port = -1;
  EXPECT_THROW(Server{c}, relsim::InputError);
}

// --- control over HTTP --------------------------------------------------------------

TEST(ServerControl, ScriptLogReleaseGateAndHealthOverHttp) {
  Server server(config_with());
  Client ctl(server.port());
  const Response health = roundtrip(ctl, request("GET", "/control/health"));
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.json()["status"], "ok");

  const Response set = roundtrip(
      ctl, request("POST", "/control/tasks/12/script",
                   R"({"responses": ["http_529", "stall", {"kind": "ok", "gate": "go"}]})"));
  EXPECT_EQ(set.status, 200);
  EXPECT_EQ(set.json()["entries"], 3);
  const Response bad = roundtrip(ctl, request("POST", "/control/tasks/12/script", R"({"responses": ["ok", "nope"]})"));
  expect_api_error(bad, 400, "invalid_request_error");
  EXPECT_NE(bad.json()["error"]["message"].get<std::string>().find("responses[1]"), std::string::npos);
  expect_api_error(roundtrip(ctl, request("POST", "/control/tasks/12/script", "not json")), 400,
                   "invalid_request_error");

  Client c(server.port());
  EXPECT_EQ(roundtrip(c, message(12, "x-stainless-retry-count: 0\r\n")).status, 529);
  c.send(message(12, "x-stainless-retry-count: 1\r\n"));
  ASSERT_TRUE(server.wait_held(12, 1, kLimit));
  const Response rel = roundtrip(ctl, request("POST", "/control/tasks/12/release"));
  EXPECT_EQ(rel.status, 200);
  EXPECT_EQ(rel.json()["released"], 1);
  EXPECT_TRUE(read_response(c).complete);

  c.send(message(12));
  ASSERT_TRUE(server.wait_held(12, 1, kLimit));
  const Response open = roundtrip(ctl, request("POST", "/control/gates/go/open"));
  EXPECT_EQ(open.status, 200);
  EXPECT_EQ(open.json()["released"], 1);
  expect_healthy_stream(read_response(c), 12, 2);

  ASSERT_TRUE(server.wait_finished(12, 3, kLimit));
  const Response log = roundtrip(ctl, request("GET", "/control/tasks/12/log"));
  EXPECT_EQ(log.status, 200);
  const Json j = log.json();
  EXPECT_EQ(j["task"], 12);
  ASSERT_EQ(j["requests"].size(), 3u);
  EXPECT_EQ(j["requests"][0]["entry"], "http_529");
  EXPECT_EQ(j["requests"][1]["headers"]["x-stainless-retry-count"], "1");
  EXPECT_EQ(j["requests"][1]["entry"], "stall");
  EXPECT_EQ(j["requests"][2]["entry"]["gate"], "go");

  expect_api_error(roundtrip(ctl, request("GET", "/control/tasks/12/release")), 405, "invalid_request_error");
  expect_api_error(roundtrip(ctl, request("GET", "/control/nothing")), 404, "not_found_error");
  expect_api_error(roundtrip(ctl, request("POST", "/control/gates/bad%20name/open")), 400, "invalid_request_error");
}

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

// --- relsim serve ------------------------------------------------------------------------

TEST(ServeCommand, ListensPrintsItsAddressServesAndStopsOnSigterm) {
  relsim::test::Background serve({relsim::test::relsim_exe(), "serve", "--port", "0"});
  const std::string line = serve.read_line(10);
  const std::string prefix = "relsim serve: listening on http://127.0.0.1:";
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
  const int port = relsim::test::port_from_banner(line);
  EXPECT_GT(port, 0);
  Client ctl(port);
  EXPECT_EQ(roundtrip(ctl, request("POST", "/control/tasks/0/script", R"({"responses": ["ok"]})")).status, 200);
  expect_healthy_stream(roundtrip(ctl, message(0)), 0, 0);
  const int code = serve.stop(SIGTERM);
  EXPECT_FALSE(serve.signaled());
  EXPECT_EQ(code, 0);
}

TEST(ServeCommand, PortOutOfRangeIsOneLineAndExitCode2) {
  const relsim::test::RunResult r = relsim::test::run_relsim("serve --port 70000");
  const std::string out = r.out + r.err;
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("port = 70000"), std::string::npos) << out;
}

}  // namespace
