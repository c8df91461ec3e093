// The mock's OpenAI dialect (docs/wire.md, "The OpenAI dialect"): POST
// /t/{task}/v1/chat/completions answers the same script entries as
// /v1/messages in OpenAI's shapes. The healthy stream's bytes, errors in
// OpenAI's {"error": {message, type, param, code}} with x-request-id, a 429's
// rate-limit headers, and the request log's "dialect". What the official
// openai SDK makes of every fault kind is tests/sdk/check_openai_sdk.mjs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "live/control_support.hpp"

namespace openai_dialect_test {

using namespace relsim::test::control;

inline std::string chat(std::int64_t task, std::string_view body, std::string_view method = "POST") {
  return log_request(method, fmt::format("/t/{}/v1/chat/completions", task), body);
}

// Each event, as its chunk carries it.
std::string chunked(const std::vector<std::string>& events) {
  std::string out;
  for (const std::string& e : events) out += fmt::format("{:x}\r\n{}\r\n", e.size(), e);
  return out + "0\r\n\r\n";
}

std::string chunk_of(std::string_view delta, std::string_view finish) {
  return fmt::format(R"(data: {{"id":"chatcmpl-relsim_7_0","object":"chat.completion.chunk","created":0,)"
                     R"("model":"relsim-mock","choices":[{{"index":0,"delta":{},"logprobs":null,"finish_reason":{}}}]}})"
                     "\n\n",
                     delta, finish);
}

TEST(OpenAiDialect, TheHealthyStreamIsTheDocumentedBytes) {
  Server server(log_config());
  server.set_script(7, script_of({"ok"}));
  Client c(server.port());
  c.send(chat(7, kLogBody));
  ASSERT_TRUE(c.read_until("0\r\n\r\n"));
  const std::string want =
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
      "transfer-encoding: chunked\r\nx-request-id: req_relsim_7_0\r\nconnection: keep-alive\r\n\r\n" +
      chunked({chunk_of(R"({"role":"assistant","content":""})", "null"), chunk_of(R"({"content":"Hello from "})", "null"),
               chunk_of(R"({"content":"task 7."})", "null"), chunk_of("{}", R"("stop")"), "data: [DONE]\n\n"});
  EXPECT_EQ(c.buf, want);
  // As many events as fleet --live paces a stream by (healthy_stream_events).
  std::size_t events = 0;
  for (std::size_t at = c.buf.find("data: "); at != std::string::npos; at = c.buf.find("data: ", at + 1)) ++events;
  EXPECT_EQ(events, static_cast<std::size_t>(relsim::healthy_stream_events(relsim::Dialect::openai)));
}

TEST(OpenAiDialect, ErrorsAreOpenAiShapedWithXRequestId) {
  Server server(log_config());
  server.set_script(1, script_of({"http_429", "http_529"}));
  const LogReply get = call(server.port(), "GET", "/t/1/v1/chat/completions");
  EXPECT_EQ(get.status, 405);
  EXPECT_TRUE(get.has("allow: POST"));
  EXPECT_TRUE(get.has("x-request-id: "));
  EXPECT_EQ(get.json(), Json::parse(R"({"error": {"message": "method GET is not allowed here: use POST",
                                        "type": "invalid_request_error", "param": null, "code": null}})"));
  const LogReply bad = call(server.port(), "POST", "/t/1/v1/chat/completions", "not json");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json()["error"]["type"], "invalid_request_error");
  EXPECT_EQ(bad.json()["error"]["message"], "request body is not valid JSON");
  const LogReply none = call(server.port(), "POST", "/t/5/v1/chat/completions", kLogBody);
  EXPECT_EQ(none.status, 404);
  EXPECT_EQ(none.json()["error"]["code"], "not_found");

  const LogReply r429 = call(server.port(), "POST", "/t/1/v1/chat/completions", kLogBody);
  EXPECT_EQ(r429.status, 429);
  EXPECT_TRUE(r429.has("retry-after: 0\r\n")) << r429.head;
  EXPECT_TRUE(r429.has("x-ratelimit-remaining-requests: 0\r\n")) << r429.head;
  EXPECT_TRUE(r429.has("x-ratelimit-reset-requests: 0ms\r\n")) << r429.head;
  EXPECT_EQ(r429.json(), Json::parse(R"({"error": {"message": "Rate limited", "type": "requests", "param": null,
                                         "code": "rate_limit_exceeded"}})"));
  const LogReply r529 = call(server.port(), "POST", "/t/1/v1/chat/completions", kLogBody);
  EXPECT_EQ(r529.status, 529);
  EXPECT_TRUE(r529.has("x-should-retry: true\r\n")) << r529.head;
  EXPECT_EQ(r529.json()["error"]["code"], "overloaded");
}

TEST(OpenAiDialect, AWholeCompletionAndWhatEachFaultLeavesOfIt) {
  Server server(log_config());
  server.set_script(4, script_of({"ok", "no_stop", "overloaded", "cut"}));
  const std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi!!!"}]})";  // 60 bytes: 15 tokens
  ASSERT_EQ(body.size(), 60u);
  const LogReply ok = call(server.port(), "POST", "/t/4/v1/chat/completions", body);
  EXPECT_EQ(ok.status, 200);
  EXPECT_TRUE(ok.has("content-type: application/json\r\n")) << ok.head;
  EXPECT_EQ(ok.json(), Json::parse(R"({"id": "chatcmpl-relsim_4_0", "object": "chat.completion", "created": 0,
      "model": "relsim-mock", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello from task 4."},
      "logprobs": null, "finish_reason": "stop"}], "usage": {"prompt_tokens": 15, "completion_tokens": 6,
      "total_tokens": 21}})"));
  const LogReply no_stop = call(server.port(), "POST", "/t/4/v1/chat/completions", body);
  EXPECT_TRUE(no_stop.json()["choices"][0]["finish_reason"].is_null());
  const LogReply overloaded = call(server.port(), "POST", "/t/4/v1/chat/completions", body);
  EXPECT_EQ(overloaded.status, 200);
  EXPECT_EQ(overloaded.json()["error"]["code"], "overloaded");
  const LogReply cut = call(server.port(), "POST", "/t/4/v1/chat/completions", body);
  EXPECT_EQ(cut.status, 200);
  EXPECT_TRUE(cut.has(fmt::format("content-length: {}\r\n", ok.body.size()))) << cut.head;
  std::string half = ok.body.substr(0, ok.body.size() / 2);
  half.replace(half.find("relsim_4_0"), 10, "relsim_4_3");
  EXPECT_EQ(cut.body, half);
  ASSERT_TRUE(server.wait_finished(4, 4, kLogLimit));
  EXPECT_EQ(server.log(4).requests.at(3).end, "closed");
}

TEST(OpenAiDialect, TheRequestLogSaysWhichDialectOnlyForOpenAi) {
  Server server(log_config());
  server.set_script(2, script_of({"ok", "ok"}));
  Client c(server.port());
  c.send(chat(2, kLogBody) + log_message(2));
  ASSERT_TRUE(server.wait_finished(2, 2, kLogLimit));
  const auto lines = json_lines(call(server.port(), "GET", "/control/log").body);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1]["dialect"], "openai");
  EXPECT_FALSE(lines[2].contains("dialect"));
}

}  // namespace openai_dialect_test
