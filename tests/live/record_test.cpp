// relsim proxy --record (docs/replay.md): 200 exchanges in each dialect
// through the proxy in front of relsim's mock, each recording holding the
// request as sent (less its credentials and the --redact headers, which
// never reach the disk) and the upstream's answer: its status, headers, and
// events whose bytes, put together, are the body the client received,
// with arrival times in order; a broken answer is recorded as the
// upstream sent it, as far as the proxy read it; bad options are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "live/server_wire.hpp"
#include "relsim/formats/plan.hpp"
#include "support/files.hpp"
#include "support/input_error_cli.hpp"

// Named, not anonymous: the live tests build as unity batches.
namespace record_test {

using namespace relsim::test::server_wire;
using relsim::Plan;

// Headers whose values must never be written: the credentials and one --redact names.
const std::string kSecrets =
    "x-api-key: sk-ant-SECRET-0001\r\nauthorization: Bearer tok-SECRET-0002\r\nx-team-secret: hush-SECRET-0003\r\n";

Plan one_task(const std::vector<std::string>& entries) {
  std::string text = R"({"relsim_plan": 1, "tasks": 1, "source": "scripted", "n": 1, "b": 0, "g": 0})" "\n";
  std::string list;
  for (const auto& e : entries) list += (list.empty() ? "\"" : ", \"") + e + "\"";
  text += fmt::format(R"({{"task": 0, "requests": [{}]}})", list) + "\n";
  return relsim::parse_plan(text, "plan.jsonl");
}

std::vector<Json> recordings(const std::filesystem::path& dir) {
  std::vector<Json> out;
  for (const auto& file : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(file.path());
    std::string line;
    while (std::getline(in, line)) out.push_back(Json::parse(line));
  }
  // In task and index order: an exchange is written when it ends, and under
  // load a slow one ends after the next (the proxy reads the upstream to its end).
  std::stable_sort(out.begin(), out.end(), [](const Json& a, const Json& b) {
    return std::pair(a.value("task", std::int64_t{0}), a.value("index", std::int64_t{0})) <
           std::pair(b.value("task", std::int64_t{0}), b.value("index", std::int64_t{0}));
  });
  return out;
}

// The chat-completions body, streamed.
std::string chat_body(int i) {
  return fmt::format(R"({{"model":"gpt-test","stream":true,"messages":[{{"role":"user","content":"hi {}"}}]}})", i);
}

TEST(Record, EveryExchangeOfBothDialectsIsKeptWithoutItsCredentials) {
  const std::filesystem::path dir = relsim::test::scratch("record") / "recordings";
  Server upstream(config_with(), one_task(std::vector<std::string>(400, "ok")));
  ServerConfig pc = config_with();
  pc.upstream = relsim::parse_upstream(fmt::format("http://127.0.0.1:{}/t/0", upstream.port()));
  pc.record_dir = dir.string();
  pc.record_redact = {"x-team-secret"};
  std::vector<std::string> entries(400, "ok");
  Server proxy(pc, one_task(entries));

  std::vector<std::string> bodies, sent;
  Client c(proxy.port());
  for (int i = 0; i < 400; ++i) {
    const bool openai = i % 2 == 1;
    const std::string body = openai ? chat_body(i) : kBody;
    const std::string target = openai ? "/t/0/v1/chat/completions" : "/t/0/v1/messages";
    const Response r = roundtrip(c, request("POST", target, body, kSecrets));
    ASSERT_EQ(r.status, 200) << i;
    ASSERT_TRUE(r.complete) << i;
    bodies.push_back(r.body);
    sent.push_back(body);
  }
  ASSERT_TRUE(proxy.wait_finished(0, 400, kLimit));
  proxy.stop();

  const std::vector<Json> lines = recordings(dir);
  ASSERT_EQ(lines.size(), 400u);
  int anthropic = 0, openai = 0;
  for (const Json& x : lines) {
    const auto i = x["index"].get<std::size_t>();
    SCOPED_TRACE(i);
    EXPECT_EQ(x["relsim_recording"], 1);
    EXPECT_EQ(x["entry"], "ok");
    const bool is_openai = x["dialect"] == "openai";
    (is_openai ? openai : anthropic) += 1;
    EXPECT_EQ(is_openai, i % 2 == 1);
    EXPECT_EQ(x["request"]["path"], is_openai ? "/v1/chat/completions" : "/v1/messages");
    EXPECT_EQ(x["request"]["body"], sent[i]);
    for (const Json& h : x["request"]["headers"]) {
      EXPECT_NE(h[0], "x-api-key");
      EXPECT_NE(h[0], "authorization");
      EXPECT_NE(h[0], "x-team-secret");
    }
    const Json& res = x["response"];
    EXPECT_EQ(res["status"], 200);
    EXPECT_TRUE(res["complete"].get<bool>());
    std::string joined;
    double last = res["headers_ms"].get<double>();
    for (const Json& e : res["events"]) {
      joined += e["text"].get<std::string>();
      EXPECT_GE(e["ms"].get<double>(), last);
      last = e["ms"].get<double>();
    }
    EXPECT_EQ(joined, bodies[i]);
    EXPECT_EQ(res["events"].size(), is_openai ? 5u : 8u);  // OpenAI: four chunks and [DONE] (docs/wire.md)
    EXPECT_LE(last, res["end_ms"].get<double>());
  }
  EXPECT_EQ(anthropic, 200);
  EXPECT_EQ(openai, 200);
  // Not a byte of a secret on the disk.
  for (const auto& file : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(relsim::test::slurp(file.path()).find("SECRET"), std::string::npos) << file.path();
}

TEST(Record, ABrokenAnswerIsRecordedAsTheUpstreamSentIt) {
  const std::filesystem::path dir = relsim::test::scratch("record_broken") / "recordings";
  Server upstream(config_with(), one_task(std::vector<std::string>(4, "ok")));
  ServerConfig pc = config_with();
  pc.upstream = relsim::parse_upstream(fmt::format("http://127.0.0.1:{}/t/0", upstream.port()));
  pc.record_dir = dir.string();
  Server proxy(pc, one_task({"no_stop", "http_529", "ok"}));
  for (int i = 0; i < 3; ++i) {
    Client c(proxy.port());
    roundtrip(c, message(0));
  }
  ASSERT_TRUE(proxy.wait_finished(0, 3, kLimit));
  proxy.stop();
  const std::vector<Json> lines = recordings(dir);
  // http_529 is answered by the proxy and never reaches the upstream: nothing to record.
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["entry"], "no_stop");
  EXPECT_EQ(lines[1]["entry"], "ok");
  // The upstream's message_stop is in the recording, though the client never saw it.
  std::string all;
  for (const Json& e : lines[0]["response"]["events"]) all += e["text"].get<std::string>();
  EXPECT_NE(all.find("event: message_stop"), std::string::npos);
}

TEST(Record, BadOptionsAreRefused) {
  relsim::test::expect_input_error("proxy --upstream http://127.0.0.1:9 --port 0 --p 0.1 --redact x-team",
                                   "--redact applies to recordings: give --record DIR too");
  relsim::test::expect_input_error(
      "proxy --upstream http://127.0.0.1:9 --port 0 --p 0.1 --record /tmp/r --redact bad:name",
      "--redact 'bad:name' is not a header name");
  const std::filesystem::path file = relsim::test::write_temp("record_bad", "a-file", "x");
  relsim::test::expect_input_error(
      {"proxy", "--upstream", "http://127.0.0.1:9", "--port", "0", "--p", "0.1", "--record", file.string()},
      "is not a directory relsim can create or use");
  relsim::test::expect_input_error("serve --port 0 --record /tmp/r", "");
}

}  // namespace record_test
