// The content faults and stall_first on the wire (docs/wire.md, Content
// faults), in both dialects: the mock's own streams carry each as the docs
// say (read here from the bytes: event names, stop reasons, the tool call's
// arguments parsed with nlohmann's parser, the repeated event), relsim proxy
// puts each into a real upstream's stream byte for byte as the mock does,
// and a whole chat.completion is rewritten the same way by both.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proxy_pair.hpp"
#include "server_wire.hpp"

namespace relsim {
namespace content_fault_wire_test {

using namespace relsim::test::server_wire;
using namespace relsim::test::proxy_pair;

const std::vector<std::string> kKinds = {"max_tokens", "bad_tool_args", "duplicate_event", "ok"};

// The events of an SSE body: (name, data), the name empty for a data-only event.
std::vector<Event> events_of(const std::string& body) {
  std::vector<Event> out;
  for (std::size_t at = 0; at < body.size();) {
    const std::size_t end = std::min(body.find("\n\n", at), body.size());
    Event e;
    for (std::size_t line = at; line < end;) {
      const std::size_t nl = std::min(body.find('\n', line), end);
      const std::string text = body.substr(line, nl - line);
      if (text.rfind("event: ", 0) == 0) e.name = text.substr(7);
      if (text.rfind("data: ", 0) == 0) e.data = text.substr(6);
      line = nl + 1;
    }
    out.push_back(e);
    at = end + 2;
  }
  return out;
}

std::vector<std::string> names(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) out.push_back(e.name);
  return out;
}

std::string chat(bool stream) {
  return request("POST", "/t/0/v1/chat/completions",
                 stream ? R"({"stream": true, "messages": []})" : R"({"stream": false, "messages": []})");
}

TEST(ContentFaultWire, TheMocksMessagesStreamsCarryEachFault) {
  Server mock(config_with(), one_task(kKinds));
  Client c(mock.port());
  const std::vector<Event> limit = events_of(body_of(roundtrip(c, message(0))));
  EXPECT_EQ(names(limit), (std::vector<std::string>{"message_start", "content_block_start", "ping", "content_block_delta",
                                                    "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(nlohmann::json::parse(limit[5].data)["delta"]["stop_reason"], "max_tokens");

  const std::vector<Event> tool = events_of(body_of(roundtrip(c, message(0))));
  std::string arguments;
  int tool_blocks = 0;
  for (const Event& e : tool) {
    const nlohmann::json d = nlohmann::json::parse(e.data);
    if (e.name == "content_block_start" && d["content_block"]["type"] == "tool_use") {
      ++tool_blocks;
      EXPECT_EQ(d["index"], 1);  // after the text block
    }
    if (e.name == "content_block_delta" && d["delta"]["type"] == "input_json_delta")
      arguments += d["delta"]["partial_json"].get<std::string>();
    if (e.name == "message_delta") { EXPECT_EQ(d["delta"]["stop_reason"], "tool_use"); }
  }
  EXPECT_EQ(tool_blocks, 1);
  EXPECT_EQ(arguments, R"({"city": Paris})");
  EXPECT_FALSE(nlohmann::json::accept(arguments));

  const std::vector<Event> twice = events_of(body_of(roundtrip(c, message(0))));
  ASSERT_EQ(twice.size(), 9u);
  EXPECT_EQ(twice[3].name, "content_block_delta");
  EXPECT_EQ(twice[3].name, twice[4].name);
  EXPECT_EQ(twice[3].data, twice[4].data);
  expect_healthy_stream(roundtrip(c, message(0)), 0, 3);
}

TEST(ContentFaultWire, TheMocksChatStreamsCarryEachFault) {
  Server mock(config_with(), one_task(kKinds));
  Client c(mock.port());
  const auto chunks = [&c] {
    std::vector<nlohmann::json> out;
    for (const Event& e : events_of(body_of(roundtrip(c, chat(true)))))
      if (e.data != "[DONE]") out.push_back(nlohmann::json::parse(e.data));
    return out;
  };
  const std::vector<nlohmann::json> limit = chunks();
  ASSERT_EQ(limit.size(), 3u);  // the role's, one content, the finish
  EXPECT_EQ(limit[2]["choices"][0]["finish_reason"], "length");
  std::string arguments;
  const std::vector<nlohmann::json> tool = chunks();
  for (const nlohmann::json& c : tool)
    if (c["choices"][0]["delta"].contains("tool_calls"))
      arguments += c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].get<std::string>();
  EXPECT_EQ(tool.back()["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(arguments, R"({"city": Paris})");
  const std::vector<nlohmann::json> twice = chunks();
  ASSERT_EQ(twice.size(), 5u);
  EXPECT_EQ(twice[1], twice[2]);
  EXPECT_EQ(twice[1]["choices"][0]["delta"]["content"], "Hello from ");
}

TEST(ContentFaultWire, StallFirstHoldsBeforeAnyEventInBothDialects) {
  Server mock(config_with(), one_task({"stall_first", "stall_first"}));
  for (const bool openai : {false, true}) {
    Client c(mock.port());
    c.send(openai ? chat(true) : message(0));
    Response r;
    ASSERT_TRUE(read_head(c, r));
    EXPECT_EQ(r.status, 200);
    ASSERT_TRUE(mock.wait_held(0, 1, kLimit));
    EXPECT_TRUE(c.buf.empty()) << "bytes before the hold: " << c.buf;
    mock.release(0);
    read_chunks(c, r);
    EXPECT_TRUE(r.complete);
    EXPECT_EQ(events_of(body_of(r)).size(), openai ? 5u : 8u);  // the whole healthy stream once released
  }
}

// relsim proxy in front of a healthy upstream puts each fault into the
// upstream's real stream; the bytes equal the mock's own (whose healthy
// stream the upstream sent).
TEST(ContentFaultWire, TheProxyPutsEachIntoARealStreamAsTheMockDoes) {
  for (const bool openai : {false, true}) {
    Pair pair(one_task(kKinds));
    Server mock(config_with(), one_task(kKinds));
    for (const std::string& kind : kKinds) {
      Client pc(pair.proxy.port()), mc(mock.port());
      const std::string bytes = openai ? chat(true) : message(0);
      const Response through = roundtrip(pc, bytes), own = roundtrip(mc, bytes);
      EXPECT_TRUE(through.complete && own.complete) << kind;
      std::string want = body_of(own);
      // The upstream's healthy stream names its own request (task 0, request k), as the mock's does.
      EXPECT_EQ(body_of(through), want) << (openai ? "openai " : "messages ") << kind;
    }
  }
}

TEST(ContentFaultWire, AWholeChatCompletionIsRewrittenByTheMockAndTheProxyAlike) {
  Pair pair(one_task(kKinds));
  Server mock(config_with(), one_task(kKinds));
  for (const std::string& kind : kKinds) {
    Client pc(pair.proxy.port()), mc(mock.port());
    const Response through = roundtrip(pc, chat(false)), own = roundtrip(mc, chat(false));
    EXPECT_EQ(own.status, 200) << kind;
    EXPECT_EQ(through.chunked ? body_of(through) : through.body, own.body) << kind;
    const nlohmann::json j = nlohmann::json::parse(own.body);
    const nlohmann::json& choice = j["choices"][0];
    if (kind == "max_tokens") {
      EXPECT_EQ(choice["finish_reason"], "length");
      EXPECT_EQ(choice["message"]["content"], "Hello fro");  // the first half of "Hello from task 0."
    } else if (kind == "bad_tool_args") {
      EXPECT_EQ(choice["finish_reason"], "tool_calls");
      EXPECT_FALSE(nlohmann::json::accept(choice["message"]["tool_calls"][0]["function"]["arguments"].get<std::string>()));
    } else if (kind == "duplicate_event") {
      EXPECT_EQ(choice["message"]["content"], "Hello from task 0.Hello from task 0.");
    } else {
      EXPECT_EQ(choice["message"]["content"], "Hello from task 0.");
    }
  }
}

}  // namespace content_fault_wire_test
}  // namespace relsim
