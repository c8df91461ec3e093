// Server-sent events on canned bytes: the parser (sse.hpp) wherever the
// bytes are split, and the Messages stream's event semantics (MessageStream
// in client.hpp): what is an answer, and how each broken stream is named.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "relsim/client/client.hpp"
#include "relsim/client/sse.hpp"

namespace relsim {
namespace {

// The healthy stream of task 7, as the Messages API sends it.
std::string healthy(const std::string& eol = "\n") {
  const std::vector<std::pair<std::string, std::string>> events = {
      {"message_start", R"({"type":"message_start","message":{"id":"msg_7","type":"message","role":"assistant","content":[]}})"},
      {"content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"},
      {"ping", R"({"type":"ping"})"},
      {"content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello from "}})"},
      {"content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"task 7."}})"},
      {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
      {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":6}})"},
      {"message_stop", R"({"type":"message_stop"})"},
  };
  std::string s;
  for (const auto& [name, data] : events) s += "event: " + name + eol + "data: " + data + eol + eol;
  return s;
}

std::vector<SseEvent> feed_in_pieces(const std::string& bytes, std::size_t piece) {
  std::vector<SseEvent> out;
  SseParser parser;
  for (std::size_t i = 0; i < bytes.size(); i += piece)
    parser.feed(std::string_view(bytes).substr(i, piece), [&](const SseEvent& e) { out.push_back(e); });
  return out;
}

TEST(SseParser, DecodesTheHealthyStreamIntoEightEvents) {
  const auto events = parse_sse(healthy());
  ASSERT_EQ(events.size(), 8u);
  EXPECT_EQ(events[0].event, "message_start");
  EXPECT_EQ(events[3].event, "content_block_delta");
  EXPECT_EQ(events[7].event, "message_stop");
  EXPECT_EQ(events[7].data, R"({"type":"message_stop"})");
}

TEST(SseParser, GivesTheSameEventsWhereverTheBytesAreSplit) {
  const std::string bytes = healthy();
  const auto whole = parse_sse(bytes);
  for (std::size_t piece : {1u, 2u, 3u, 7u, 64u}) EXPECT_EQ(feed_in_pieces(bytes, piece), whole) << "piece " << piece;
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    std::vector<SseEvent> out;
    SseParser parser;
    const auto sink = [&](const SseEvent& e) { out.push_back(e); };
    parser.feed(std::string_view(bytes).substr(0, cut), sink);
    parser.feed(std::string_view(bytes).substr(cut), sink);
    ASSERT_EQ(out, whole) << "split at byte " << cut;
  }
}

TEST(SseParser, TreatsCrlfCrAndLfLineEndsAlike) {
  const auto lf = parse_sse(healthy("\n"));
  EXPECT_EQ(parse_sse(healthy("\r\n")), lf);
  EXPECT_EQ(parse_sse(healthy("\r")), lf);
  // A CRLF split between two reads is one line end, not an empty line.
  EXPECT_EQ(feed_in_pieces(healthy("\r\n"), 1), lf);
  const auto split = [] {
    std::vector<SseEvent> out;
    SseParser parser;
    const auto sink = [&](const SseEvent& e) { out.push_back(e); };
    parser.feed("data: a\r", sink);
    parser.feed("\ndata: b\r\n\r", sink);
    parser.feed("\n", sink);
    return out;
  }();
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split[0].data, "a\nb");
}

TEST(SseParser, JoinsMultiLineDataWithNewlines) {
  const auto events = parse_sse("event: note\ndata: first\ndata:second\ndata\ndata:  indented\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "note");
  // One leading space is stripped, no more; a bare `data` is an empty line.
  EXPECT_EQ(events[0].data, "first\nsecond\n\n indented");
}

TEST(SseParser, IgnoresCommentsUnknownFieldsAndRetry) {
  const auto events = parse_sse(": keep-alive\n\n:comment\nretry: 100\nfoo: bar\ndata: x\n: inside\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x");
  EXPECT_EQ(events[0].event, "");
}

TEST(SseParser, DispatchesOnlyAtABlankLine) {
  SseParser parser;
  std::vector<SseEvent> out;
  const auto sink = [&](const SseEvent& e) { out.push_back(e); };
  parser.feed("\n\n\nevent: ping\ndata: {}\n", sink);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(parser.pending());
  parser.feed("\n", sink);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(parser.pending());
  EXPECT_EQ(parser.events(), 1u);
  // An event name alone still makes an event (as the Anthropic SDKs decode).
  EXPECT_EQ(parse_sse("event: message_stop\n\n").size(), 1u);
  // A trailing event without its blank line never comes out.
  EXPECT_TRUE(parse_sse("event: message_stop\ndata: {}\n").empty());
}

TEST(SseParser, KeepsTheIdAndStripsALeadingByteOrderMark) {
  const auto events = parse_sse("\xEF\xBB\xBF" "id: 42\ndata: x\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].id, "42");
  EXPECT_EQ(events[0].data, "x");
}

TEST(SseParser, RefusesALineLongerThanItsLimit) {
  SseParser parser;
  const std::string line(SseParser::kMaxLine + 1, 'x');
  EXPECT_THROW(parser.feed(line, [](const SseEvent&) {}), std::length_error);
}

MessageStream fold(const std::string& bytes) {
  MessageStream message;
  SseParser parser;
  parser.feed(bytes, [&](const SseEvent& e) { message.on_event(e); });
  return message;
}

FaultKind kind_of_failure(const std::string& bytes) {
  try {
    fold(bytes).on_end();
  } catch (const ClientError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error for: " << bytes;
  return FaultKind::http_400;
}

TEST(MessageStream, AssemblesTheAnswerOfAHealthyStream) {
  const MessageStream m = fold(healthy("\r\n"));
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.text(), "Hello from task 7.");
  EXPECT_NO_THROW(m.on_end());
}

TEST(MessageStream, NeverTakesAStreamWithoutMessageStopAsAnAnswer) {
  std::string bytes = healthy();
  bytes.resize(bytes.find("event: message_stop"));
  const MessageStream m = fold(bytes);
  EXPECT_EQ(m.text(), "Hello from task 7.");  // the whole text, still no answer
  EXPECT_EQ(kind_of_failure(bytes), FaultKind::no_stop);
}

TEST(MessageStream, NamesInvalidJsonDataMalformed) {
  std::string bytes = healthy();
  bytes.replace(bytes.find(R"({"type":"ping"})"), 15, R"({"type":"ping")");
  EXPECT_EQ(kind_of_failure(bytes), FaultKind::malformed);
  EXPECT_EQ(kind_of_failure("event: content_block_delta\ndata: [1,2]\n\n"), FaultKind::malformed);
  EXPECT_EQ(kind_of_failure("event: content_block_delta\ndata: {\"delta\":{\"type\":\"text_delta\"}}\n\n"),
            FaultKind::malformed);
  EXPECT_THROW(fold("data: not json\n\n"), StreamError);
}

TEST(MessageStream, RaisesAnErrorEventAsOverloaded) {
  const std::string bytes =
      "event: message_start\ndata: {\"type\":\"message_start\"}\n\n"
      "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
  EXPECT_THROW(fold(bytes), StreamEventError);
  EXPECT_EQ(kind_of_failure(bytes), FaultKind::overloaded);
}

}  // namespace
}  // namespace relsim
