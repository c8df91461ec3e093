// relsim proxy (docs/proxy.md), in process: a mock server is the upstream,
// a second server in proxy mode in front of it. Without faults the answers
// are the upstream's bytes; each fault kind of a plan does to the real
// stream what the mock's own does (docs/wire.md), pre-response faults never
// reach the upstream, credentials never reach the log, and an upstream that
// is not there is a 502, not a crash.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>
#include <sstream>
#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/formats/plan.hpp"
#include "proxy_pair.hpp"
#include "server_wire.hpp"
#include "support/files.hpp"
#include "support/journal.hpp"
#include "support/raw_client.hpp"
#include "support/stub_server.hpp"

namespace relsim {
namespace proxy_test {

using namespace relsim::test::server_wire;
using namespace relsim::test::proxy_pair;


// The names of the events of an SSE body.
std::vector<std::string> event_names(const std::string& body) {
  std::vector<std::string> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("event: ", 0) == 0) out.push_back(line.substr(7));
  return out;
}

TEST(Proxy, WithoutFaultsTheAnswersAreTheUpstreamsBytes) {
  // Two identical upstreams: one asked directly, one through the proxy.
  constexpr int kRequests = 1000;
  const Plan all_ok = one_task(std::vector<std::string>(kRequests, "ok"));
  Server direct(config_with(), one_task(std::vector<std::string>(kRequests, "ok")));
  Pair pair(all_ok, kRequests);
  Client d(direct.port()), p(pair.proxy.port());
  for (int i = 0; i < kRequests; ++i) {
    const Response a = roundtrip(d, message(0));
    const Response b = roundtrip(p, message(0));
    ASSERT_TRUE(a.complete && b.complete) << i;
    ASSERT_EQ(b.status, 200);
    ASSERT_EQ(body_of(a), body_of(b)) << "request " << i;
    ASSERT_EQ(b.header("request-id"), a.header("request-id"));
    ASSERT_EQ(b.header("content-type"), "text/event-stream");
  }
  EXPECT_EQ(pair.upstream.log(0).requests.size(), static_cast<std::size_t>(kRequests));
}

TEST(Proxy, EachInStreamFaultBreaksTheRealStreamAsTheMocksDoes) {
  Pair pair(one_task({"cut", "no_stop", "malformed", "overloaded", "ok"}));
  Client c(pair.proxy.port());
  const Response cut = roundtrip(c, message(0));
  EXPECT_FALSE(cut.complete);  // closed with no terminating chunk
  EXPECT_EQ(event_names(body_of(cut)),
            (std::vector<std::string>{"message_start", "content_block_start", "ping", "content_block_delta"}));
  Client c2(pair.proxy.port());
  const Response no_stop = roundtrip(c2, message(0));
  EXPECT_TRUE(no_stop.complete);
  EXPECT_EQ(event_names(body_of(no_stop)),
            (std::vector<std::string>{"message_start", "content_block_start", "ping", "content_block_delta",
                                      "content_block_delta", "content_block_stop", "message_delta"}));
  const Response malformed = roundtrip(c2, message(0));
  EXPECT_TRUE(malformed.complete);
  EXPECT_EQ(event_names(body_of(malformed)).size(), 9u);
  EXPECT_NE(body_of(malformed).find("data: {\"type\": \"content_block_delta\", \"index\": 0, \"delta\": {\n\n"),
            std::string::npos);
  const Response overloaded = roundtrip(c2, message(0));
  EXPECT_TRUE(overloaded.complete);
  EXPECT_EQ(event_names(body_of(overloaded)), (std::vector<std::string>{"message_start", "error"}));
  EXPECT_NE(body_of(overloaded).find("overloaded_error"), std::string::npos);
  EXPECT_EQ(event_names(body_of(roundtrip(c2, message(0)))).size(), 8u);
  // Every one of them reached the upstream: the tokens were spent.
  EXPECT_EQ(pair.upstream.log(0).requests.size(), 5u);
}

// The OpenAI dialect through the proxy: each kind does to the upstream's
// real chat.completion stream what the mock's own does to its stream
// (docs/wire.md), byte for byte but the malformed chunk's id; a 429 is
// answered here in OpenAI's shape.
TEST(Proxy, EachFaultBreaksARealOpenAiStreamAsTheMocksOwnDoes) {
  const std::vector<std::string> kinds = {"cut", "no_stop", "malformed", "overloaded", "stall", "ok", "http_429"};
  Pair pair(one_task(kinds));
  Server mock(config_with(), one_task(kinds));
  const auto chat = [](std::string_view extra = "") {
    return request("POST", "/t/0/v1/chat/completions", R"({"stream": true, "messages": []})", extra);
  };
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == "stall") {  // held after the first chunk in both, then released
      Client pc(pair.proxy.port()), mc(mock.port());
      pc.send(chat());
      mc.send(chat());
      ASSERT_TRUE(pair.proxy.wait_held(0, 1, 10s) && mock.wait_held(0, 1, 10s));
      pair.proxy.release(0);
      mock.release(0);
      EXPECT_EQ(body_of(read_response(pc)), body_of(read_response(mc))) << kinds[i];
      continue;
    }
    Client pc(pair.proxy.port()), mc(mock.port());
    const Response through = roundtrip(pc, chat()), own = roundtrip(mc, chat());
    EXPECT_EQ(through.status, own.status) << kinds[i];
    EXPECT_EQ(through.complete, own.complete) << kinds[i];
    std::string want = own.chunked ? body_of(own) : own.body;
    if (kinds[i] == "malformed") want.replace(want.find("chatcmpl-relsim_0_2\",\"object\":\"chat.completion.chunk\",\"choices\":[{"), 19, "chatcmpl-relsim");
    EXPECT_EQ(through.chunked ? body_of(through) : through.body, want) << kinds[i];
  }
  // The in-stream kinds reached the upstream, the 429 did not.
  EXPECT_EQ(pair.upstream.log(0).requests.size(), kinds.size() - 1);
}

TEST(Proxy, EachFaultBreaksAWholeOpenAiAnswerAsTheMocksOwnDoes) {
  // "stream": false: one chat.completion, read whole by the proxy and sent
  // broken, with its length, as the mock sends its own (docs/wire.md).
  const std::vector<std::string> kinds = {"cut", "no_stop", "malformed", "overloaded", "stall", "ok"};
  Pair pair(one_task(kinds));
  Server mock(config_with(), one_task(kinds));
  const std::string chat = request("POST", "/t/0/v1/chat/completions", R"({"stream": false, "messages": []})");
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    Client pc(pair.proxy.port()), mc(mock.port());
    Response through, own;
    if (kinds[i] == "stall") {  // the head, held before the body in both, then released
      pc.send(chat);
      mc.send(chat);
      ASSERT_TRUE(pair.proxy.wait_held(0, 1, 10s) && mock.wait_held(0, 1, 10s));
      pair.proxy.release(0);
      mock.release(0);
      through = read_response(pc), own = read_response(mc);
    } else {
      through = roundtrip(pc, chat), own = roundtrip(mc, chat);
    }
    EXPECT_EQ(through.status, 200) << kinds[i];
    EXPECT_EQ(through.chunked, kinds[i] == "ok") << kinds[i];  // an ok answer passes as it comes
    EXPECT_EQ(through.complete, own.complete) << kinds[i];
    EXPECT_EQ(through.chunked ? body_of(through) : through.body, own.body) << kinds[i];
  }
  EXPECT_EQ(pair.upstream.log(0).requests.size(), kinds.size());
}

// A whole JSON answer as an upstream sends it, and a proxy in front of
// such an upstream on `port`.
std::string json_answer(const std::string& body) {
  return fmt::format("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
                     body.size(), body);
}
ServerConfig proxy_to(int port) {
  ServerConfig config = config_with();
  config.upstream = parse_upstream(fmt::format("http://127.0.0.1:{}", port));
  return config;
}

TEST(Proxy, AWholeMessagesApiAnswerIsBrokenToo) {
  // A Messages API answer that is not a stream ("stream": false, which the
  // mock itself refuses), from an upstream that sends one whole message.
  const std::string message_body =
      R"({"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hi."}],)"
      R"("stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":2}})";
  test::StubServer upstream(json_answer(message_body), 4);
  Server proxy(proxy_to(upstream.port()), one_task({"ok", "no_stop", "overloaded", "cut"}));
  const std::string whole = request("POST", "/t/0/v1/messages", R"({"stream": false})");
  const Response ok = one_request(proxy.port(), whole);
  EXPECT_EQ(ok.body, message_body);
  const Response no_stop = one_request(proxy.port(), whole);
  EXPECT_TRUE(no_stop.complete);
  EXPECT_TRUE(no_stop.json()["stop_reason"].is_null());
  EXPECT_EQ(no_stop.json()["content"], Json::parse(message_body)["content"]);
  const Response overloaded = one_request(proxy.port(), whole);
  EXPECT_EQ(overloaded.status, 200);
  EXPECT_EQ(overloaded.json()["error"]["type"], "overloaded_error");
  const Response cut = one_request(proxy.port(), whole);
  EXPECT_FALSE(cut.complete);
  EXPECT_EQ(cut.header("content-length"), std::to_string(message_body.size()));
  EXPECT_EQ(cut.body, message_body.substr(0, message_body.size() / 2));
}

TEST(Proxy, AWholeAnswerWithNoStopToDropGoesAsItCameAndTheLogSaysSo) {
  // A chat completion whose choices carry no finish_reason: no_stop has
  // nothing to drop, so the answer is passed on unbroken and its log line
  // says the hop did not apply the fault (the audit then blames no client).
  const std::string body = R"({"id":"chatcmpl-1","object":"chat.completion","choices":[]})";
  test::StubServer upstream(json_answer(body), 1);
  Server proxy(proxy_to(upstream.port()), one_task({"no_stop"}));
  const Response r = one_request(proxy.port(), request("POST", "/t/0/v1/chat/completions", R"({"stream": false})"));
  EXPECT_EQ(r.body, body);
  ASSERT_TRUE(proxy.wait_finished(0, 1, kLimit));
  const std::vector<Json> lines = test::journal_requests(proxy.port());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0]["upstream"].value("error", "").find("no stop to drop: no_stop was not applied"), std::string::npos)
      << lines[0].dump();
}

TEST(Proxy, TheUpstreamIsAskedForUncompressedAnswers) {
  // gzip or brotli bytes could not be broken event by event or whole.
  Pair pair(one_task({"ok"}));
  Client c(pair.proxy.port());
  EXPECT_EQ(roundtrip(c, request("POST", "/t/0/v1/messages", kBody, "accept-encoding: gzip, deflate, br\r\n")).status, 200);
  ASSERT_EQ(pair.upstream.log(0).requests.size(), 1u);
  EXPECT_EQ(pair.upstream.log(0).requests[0].header("accept-encoding"), "identity");
}

TEST(Proxy, PreResponseFaultsAreAnsweredHereAndNeverReachTheUpstream) {
  Pair pair(one_task({"http_429", "http_500", "http_503", "http_529", "ok"}));
  Client c(pair.proxy.port());
  expect_api_error(roundtrip(c, message(0)), 429, "rate_limit_error");
  expect_api_error(roundtrip(c, message(0)), 500, "api_error");
  expect_api_error(roundtrip(c, message(0)), 503, "api_error");
  expect_api_error(roundtrip(c, message(0)), 529, "overloaded_error");
  EXPECT_EQ(pair.upstream.log(0).requests.size(), 0u);
  EXPECT_EQ(roundtrip(c, message(0)).status, 200);
  EXPECT_EQ(pair.upstream.log(0).requests.size(), 1u);
}

TEST(Proxy, AStallHoldsTheRealStreamUntilReleased) {
  Pair pair(one_task({"stall"}));
  Client c(pair.proxy.port());
  c.send(message(0));
  Response r;
  ASSERT_TRUE(read_head(c, r));
  ASSERT_TRUE(pair.proxy.wait_held(0, 1, kLimit));
  EXPECT_LE(event_names(body_of(r) + c.buf).size(), 2u);  // message_start, content_block_start
  EXPECT_EQ(pair.proxy.release(0), 1u);
  read_chunks(c, r);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(event_names(body_of(r)).size(), 8u);
}

TEST(Proxy, TheTaskComesFromThePathOrTheTaskHeaderAndThePathIsTheApis) {
  ServerConfig config = config_with();
  config.task_header = "x-relsim-task";
  Pair pair(one_task({"http_529", "ok"}, 3), 8, config);
  const std::string bare = request("POST", "/v1/messages", kBody, "x-relsim-task: 2\r\n");
  expect_api_error(one_request(pair.proxy.port(), bare), 529, "overloaded_error");
  EXPECT_EQ(one_request(pair.proxy.port(), bare).status, 200);
  EXPECT_EQ(one_request(pair.proxy.port(), request("POST", "/v1/messages", kBody)).status, 529);  // task 0
  EXPECT_EQ(one_request(pair.proxy.port(), message(1)).status, 529);
  EXPECT_EQ(pair.proxy.log(2).requests.size(), 2u);
  EXPECT_EQ(pair.proxy.log(0).requests.size(), 1u);
  // The upstream saw its own path (the base path's task 0), not the proxy's.
  ASSERT_EQ(pair.upstream.log(0).requests.size(), 1u);
  EXPECT_EQ(pair.upstream.log(0).requests[0].target, "/t/0/v1/messages");
  EXPECT_FALSE(pair.upstream.log(0).requests[0].header("x-relsim-task"));
}

TEST(Proxy, CredentialsArePassedOnAndNeverLogged) {
  const auto dir = relsim::test::scratch("proxy_credentials");
  ServerConfig config = config_with();
  config.log_path = (dir / "log.jsonl").string();
  {
    Pair pair(one_task({"ok", "http_529"}), 8, config);
    Client c(pair.proxy.port());
    const std::string keys = "x-api-key: sk-ant-secret-1\r\nauthorization: Bearer secret-2\r\n";
    EXPECT_EQ(roundtrip(c, message(0, keys)).status, 200);
    EXPECT_EQ(roundtrip(c, message(0, keys)).status, 529);
    ASSERT_EQ(pair.upstream.log(0).requests.size(), 1u);
    EXPECT_EQ(pair.upstream.log(0).requests[0].header("x-api-key"), "sk-ant-secret-1");
    EXPECT_EQ(pair.upstream.log(0).requests[0].header("authorization"), "Bearer secret-2");
    const TaskLog mine = pair.proxy.log(0);
    EXPECT_EQ(mine.requests[0].header("x-api-key"), "(present, not logged)");
    EXPECT_EQ(to_json(mine).dump().find("secret"), std::string::npos);
  }
  std::ifstream in(dir / "log.jsonl");
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(file.find("secret"), std::string::npos) << file;
  EXPECT_NE(file.find("\"upstream\":{\"status\":200"), std::string::npos) << file;
}

TEST(Proxy, AnUpstreamThatIsNotThereIsA502WithAJsonBody) {
  int closed_port = 0;
  { Server gone(config_with()); closed_port = gone.port(); }
  ServerConfig config = config_with();
  config.upstream = parse_upstream(fmt::format("http://127.0.0.1:{}", closed_port));
  config.upstream_timeout = std::chrono::milliseconds(2000);
  Server proxy(config, one_task({"ok", "ok"}));
  Client c(proxy.port());
  expect_api_error(roundtrip(c, message(0)), 502, "api_error");
  // The proxy is still there for the next request.
  expect_api_error(roundtrip(c, message(0)), 502, "api_error");
}

// The journal's "upstream.reused" of each forwarded request, in log order.
std::vector<bool> reused(int proxy_port) {
  std::vector<bool> out;
  for (const Json& line : test::journal_requests(proxy_port))
    if (line.contains("upstream")) out.push_back(line["upstream"]["reused"].get<bool>());
  return out;
}

TEST(Proxy, AKeepAliveClientKeepsOneUpstreamConnection) {
  Pair pair(one_task(std::vector<std::string>(50, "ok")), 50);
  Client c(pair.proxy.port());
  for (int i = 0; i < 50; ++i) ASSERT_EQ(roundtrip(c, message(0)).status, 200) << i;
  // The client has the last answer before the proxy has logged it.
  ASSERT_TRUE(pair.proxy.wait_finished(0, 50, kLimit));
  EXPECT_EQ(pair.upstream.accepted(), 1u);
  std::vector<bool> want(50, true);
  want[0] = false;
  EXPECT_EQ(reused(pair.proxy.port()), want);
}

TEST(Proxy, AnAnswerNotReadToItsEndEndsItsUpstreamConnection) {
  // An upstream whose events come 5 ms apart: overloaded ends the client's
  // answer after message_start and leaves the rest of the upstream's unread.
  Server upstream(config_with());
  ScriptEntry paced = ScriptEntry::ok();
  paced.chunk_delay_ms = 5;
  upstream.set_script(0, std::vector<ScriptEntry>(4, paced));
  ServerConfig config = config_with();
  config.upstream = parse_upstream(fmt::format("http://127.0.0.1:{}/t/0", upstream.port()));
  Server proxy(config, one_task({"ok", "overloaded", "ok", "http_500", "ok"}));
  Client c(proxy.port());
  for (const int status : {200, 200, 200, 500, 200}) {
    const Response r = roundtrip(c, message(0));
    ASSERT_EQ(r.status, status);
    // Each event passed on as it came, not gathered into one piece.
    if (status == 200) { EXPECT_GE(r.chunks.size(), 2u); }
  }
  ASSERT_TRUE(proxy.wait_finished(0, 5, kLimit));
  EXPECT_EQ(upstream.accepted(), 2u);
  // The proxy's own 500 takes no upstream connection and drops none.
  EXPECT_EQ(reused(proxy.port()), (std::vector<bool>{false, true, false, true}));
}

TEST(Proxy, AKeptConnectionTheUpstreamClosedIsReplacedUnseen) {
  ServerConfig up = config_with();
  up.keep_alive_timeout = std::chrono::milliseconds(20);
  Server upstream(up, one_task({"ok", "ok"}));
  ServerConfig config = config_with();
  config.upstream = parse_upstream(fmt::format("http://127.0.0.1:{}/t/0", upstream.port()));
  Server proxy(config, one_task({"ok", "ok"}));
  Client c(proxy.port());
  const std::vector<std::string> healthy = {"message_start", "content_block_start", "ping",
                                            "content_block_delta", "content_block_delta", "content_block_stop",
                                            "message_delta", "message_stop"};
  const Response first = roundtrip(c, message(0));
  EXPECT_EQ(event_names(body_of(first)), healthy);
  // Until the upstream has closed the idle connection the proxy kept (a
  // condition, polled; nothing is asserted on the time it takes).
  for (int i = 0; i < 1000 && upstream.connections() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(upstream.connections(), 0u);
  const Response second = roundtrip(c, message(0));
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(event_names(body_of(second)), healthy);
  EXPECT_NE(body_of(second).find("msg_relsim_0_1"), std::string::npos);
  ASSERT_TRUE(proxy.wait_finished(0, 2, kLimit));
  EXPECT_EQ(upstream.accepted(), 2u);
  EXPECT_EQ(reused(proxy.port()), (std::vector<bool>{false, false}));
}

TEST(Proxy, TheApisOtherEndpointsPassThroughWithoutFaultsOrEntries) {
  // The upstream is a mock, which knows none of them: its own 404 comes
  // back through the proxy and names the path it was asked for.
  Pair pair(one_task({"http_529", "ok"}), 8);
  const Response models = one_request(pair.proxy.port(), request("GET", "/v1/models?limit=2"));
  EXPECT_EQ(models.status, 404);
  EXPECT_NE(body_of(models).find("unknown path '/t/0/v1/models'"), std::string::npos) << body_of(models);
  const Response count = one_request(pair.proxy.port(), request("POST", "/t/0/v1/messages/count_tokens", kBody));
  EXPECT_NE(body_of(count).find("'/t/0/v1/messages/count_tokens'"), std::string::npos) << body_of(count);
  // Neither took the plan's first entry, nor is in the request log.
  expect_api_error(one_request(pair.proxy.port(), message(0)), 529, "overloaded_error");
  ASSERT_TRUE(pair.proxy.wait_finished(0, 1, kLimit));
  EXPECT_EQ(test::journal_requests(pair.proxy.port()).size(), 1u);
  // Not under /v1/: the proxy's own 404.
  const Response other = one_request(pair.proxy.port(), request("GET", "/v2/models"));
  EXPECT_EQ(other.status, 404);
  EXPECT_NE(other.body.find("the proxy forwards"), std::string::npos) << other.body;
}

TEST(Proxy, AHeadAnswerHasNoBodyAndExpectIsNotPassedOn) {
  Pair pair(one_task({"ok", "ok"}), 8);
  // HEAD: the upstream's head as it is (its content-length, no chunked framing), and nothing after it.
  test::RawClient c(pair.proxy.port());
  c.send(request("HEAD", "/v1/models", "", "connection: close\r\n"));
  c.drain();
  ASSERT_EQ(c.buf.rfind("HTTP/1.1 404 ", 0), 0u) << c.buf;
  EXPECT_EQ(c.buf.find("transfer-encoding"), std::string::npos) << c.buf;
  EXPECT_NE(c.buf.find("content-length"), std::string::npos) << c.buf;
  EXPECT_EQ(c.buf.find("\r\n\r\n") + 4, c.buf.size()) << c.buf;
  // Expect: 100-continue is the proxy's to answer; the upstream never sees it.
  Client d(pair.proxy.port());
  Response r = roundtrip(d, message(0, "expect: 100-continue\r\n"));
  if (r.status == 100) r = read_response(d);  // the proxy's own interim answer, when it came before the body
  EXPECT_EQ(r.status, 200);
  ASSERT_EQ(pair.upstream.log(0).requests.size(), 1u);
  EXPECT_FALSE(pair.upstream.log(0).requests[0].header("expect"));
}

TEST(Proxy, UpstreamUrlsAreCheckedInOneLine) {
  const Upstream u = parse_upstream("http://api.example.test:8443/base/");
  EXPECT_EQ(u.host, "api.example.test");
  EXPECT_EQ(u.port, 8443);
  EXPECT_EQ(u.base_path, "/base");
  EXPECT_EQ(parse_upstream("http://127.0.0.1").port, 80);
  const Upstream tls = parse_upstream("https://api.anthropic.com");
  EXPECT_TRUE(tls.tls);
  EXPECT_EQ(tls.port, 443);
  EXPECT_EQ(tls.base_path, "");
  EXPECT_EQ(parse_upstream("http://127.0.0.1:9/t/{task}").base_path, "/t/{task}");
  for (const char* bad : {"ftp://x", "http://", "http://h:0", "http://h:99999", "http://h/p?q=1", "https://", "h:80",
                          "http://h/t/{x}", "http://h/{task}/{task}", "http://h/t/}"})
    EXPECT_THROW(parse_upstream(bad), InputError) << bad;
}

}  // namespace proxy_test
}  // namespace relsim
