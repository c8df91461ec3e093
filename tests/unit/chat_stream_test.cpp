// relsim's client reading the OpenAI dialect's events (MessageStream with
// Dialect::openai, sim/client/chat_stream.cpp): the text from the deltas,
// done only with a finish_reason, and each broken form the mock sends
// (docs/wire.md, "The OpenAI dialect") as the fault kind it is.
#include <gtest/gtest.h>

#include <string>

#include "relsim/client/client.hpp"

namespace {

using relsim::Dialect;
using relsim::FaultKind;
using relsim::MessageStream;
using relsim::SseEvent;

SseEvent data(std::string d) {
  SseEvent e;
  e.data = std::move(d);
  return e;
}

std::string chunk(const std::string& delta, const std::string& finish = "null") {
  return R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":)" + delta +
         R"(,"finish_reason":)" + finish + "}]}";
}

TEST(ChatStream, TheDeltasMakeTheTextAndAFinishReasonEndsIt) {
  MessageStream m(Dialect::openai);
  for (const std::string& d : {chunk(R"({"role":"assistant","content":""})"), chunk(R"({"content":"Hello from "})"),
                               chunk(R"({"content":"task 3."})"), chunk("{}", R"("stop")"), std::string("[DONE]")})
    m.on_event(data(d));
  EXPECT_EQ(m.text(), "Hello from task 3.");
  EXPECT_TRUE(m.stopped());
  EXPECT_NO_THROW(m.on_end());
  m.on_event(data(R"({"id":"c","choices":[],"usage":{"total_tokens":9}})"));  // a usage chunk: nothing to read
  EXPECT_EQ(m.text(), "Hello from task 3.");
}

TEST(ChatStream, EachBrokenFormIsItsFaultKind) {
  const auto kind_of = [](const auto& feed) {
    MessageStream m(Dialect::openai);
    try {
      feed(m);
      m.on_end();
    } catch (const relsim::ClientError& e) {
      return std::optional<FaultKind>(e.kind());
    }
    return std::optional<FaultKind>();
  };
  // No finish_reason before [DONE]: no_stop.
  EXPECT_EQ(kind_of([](MessageStream& m) {
              m.on_event(data(chunk(R"({"content":"Hello"})")));
              m.on_event(data("[DONE]"));
            }),
            FaultKind::no_stop);
  // A chunk that is not JSON, or has no choices: malformed.
  EXPECT_EQ(kind_of([](MessageStream& m) { m.on_event(data(R"({"id":"c","choices":[{)")); }), FaultKind::malformed);
  EXPECT_EQ(kind_of([](MessageStream& m) { m.on_event(data(R"({"id":"c"})")); }), FaultKind::malformed);
  EXPECT_EQ(kind_of([](MessageStream& m) { m.on_event(data(chunk(R"({"content":7})"))); }), FaultKind::malformed);
  // An error object as a chunk: overloaded.
  EXPECT_EQ(kind_of([](MessageStream& m) {
              m.on_event(data(R"({"error":{"message":"Overloaded","type":"server_error","code":"overloaded"}})"));
            }),
            FaultKind::overloaded);
  // And the whole stream: no fault.
  EXPECT_EQ(kind_of([](MessageStream& m) { m.on_event(data(chunk("{}", R"("length")"))); }), std::nullopt);
}

}  // namespace
