// The recording format (formats/recording.hpp, docs/replay.md): an
// exchange built as the proxy builds it reads back to the same line, its
// events cut at blank lines wherever the reads split them; a file with a
// line cut short, another version or a missing field is refused with its
// file, line and reason; a directory reads its files in name order.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "relsim/core/error.hpp"
#include "relsim/formats/recording.hpp"
#include "support/files.hpp"

// Named, not anonymous: the unit tests build as unity batches.
namespace recording_test {

using relsim::InputError;
using relsim::RecordedExchange;

const std::string kStream =
    "event: message_start\ndata: {\"type\":\"message_start\"}\n\n"
    "event: content_block_delta\r\ndata: {\"text\":\"h\\u00e9\"}\r\n\r\n"
    "event: message_stop\ndata: {}\n\n";

// An exchange fed `kStream` in reads of `step` bytes, 1 ms apart.
RecordedExchange exchange(std::size_t step) {
  RecordedExchange x;
  x.task = 7;
  x.index = 2;
  x.entry = "ok";
  x.method = "POST";
  x.path = "/v1/messages";
  x.request_headers = {{"content-type", "application/json"}, {"anthropic-version", "2023-06-01"}};
  x.request_body = R"({"model":"m","stream":true})";
  x.status = 200;
  x.response_headers = {{"content-type", "text/event-stream"}};
  x.headers_ms = 4.5;
  x.set_event_stream(true);
  for (std::size_t i = 0; i < kStream.size(); i += step)
    x.add_body(std::string_view(kStream).substr(i, step), 5.0 + static_cast<double>(i / step));
  x.finish(true, 40.25);
  x.finish(false, 99.0);  // a later call changes nothing
  return x;
}

TEST(Recording, EventsAreCutAtBlankLinesHoweverTheReadsSplitThem) {
  for (const std::size_t step : {1u, 2u, 3u, 7u, 1000u}) {
    SCOPED_TRACE(step);
    const RecordedExchange x = exchange(step);
    ASSERT_EQ(x.events().size(), 3u);
    EXPECT_EQ(x.events()[0].second, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n");
    EXPECT_EQ(x.events()[1].second.substr(x.events()[1].second.size() - 4), "\r\n\r\n");
    std::string joined;
    for (const auto& [ms, text] : x.events()) joined += text;
    EXPECT_EQ(joined, kStream);
    EXPECT_TRUE(x.complete());
    EXPECT_EQ(x.end_ms(), 40.25);
  }
}

TEST(Recording, ALineReadsBackToTheSameLine) {
  const RecordedExchange x = exchange(5);
  const RecordedExchange y = RecordedExchange::from_line(x.line(), "t:1");
  EXPECT_EQ(y.line(), x.line());
  EXPECT_EQ(y.request_body, x.request_body);
  EXPECT_EQ(y.events(), x.events());
  EXPECT_EQ(*y.status, 200);
  // An answer that is no stream keeps its body; a hop that failed, its error.
  RecordedExchange z;
  z.path = "/v1/chat/completions";
  z.dialect = relsim::Dialect::openai;
  z.error = "upstream failed before its headers";
  z.finish(false, 3.0);
  const RecordedExchange w = RecordedExchange::from_line(z.line(), "t:2");
  EXPECT_EQ(w.line(), z.line());
  EXPECT_FALSE(w.status.has_value());
  EXPECT_EQ(w.dialect, relsim::Dialect::openai);
}

TEST(Recording, BytesThatAreNotUtf8MarkTheLineLossy) {
  RecordedExchange x = exchange(1000);
  x.request_body = "\xff\xfe";
  const std::string line = x.line();
  EXPECT_NE(line.find("\"lossy\":true"), std::string::npos);
  EXPECT_TRUE(RecordedExchange::from_line(line, "t:1").lossy);
  EXPECT_EQ(exchange(1000).line().find("lossy"), std::string::npos);
}

void expect_refused(const std::string& text, const std::string& part) {
  try {
    relsim::parse_recordings(text, "rec.jsonl");
    ADD_FAILURE() << "accepted: " << text.substr(0, 120);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Recording, BadLinesAreRefusedWithFileLineAndReason) {
  const std::string good = exchange(1000).line();
  expect_refused(good + "\n" + good.substr(0, good.size() / 2) + "\n", "rec.jsonl:2: not a JSON object (a line cut short?)");
  // The good line with its first `from` written `to`.
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string line = good;
    return line.replace(line.find(from), from.size(), to);
  };
  expect_refused(with("\"relsim_recording\":1", "\"relsim_recording\":2"),
                 "rec.jsonl:1: recording version 2: this relsim reads version 1");
  expect_refused(with("\"body\":", "\"bodx\":"), "rec.jsonl:1: \"request.body\" is missing: it must be a string");
  expect_refused(with("\"status\":200", "\"status\":42"), "\"response.status\" is 42: it must be in [100, 999]");
  expect_refused(with("\"task\":7", "\"task\":-7"), "\"task\" is -7: it must be in [0, 2^63 - 1]");
  // What a replay would send again: times it can wait out, headers it can write.
  expect_refused(with("\"headers_ms\":4.5", "\"headers_ms\":1e13"),
                 "\"response.headers_ms\" is 10000000000000.0: it must be in [0, 8.64e+07] ms");
  expect_refused(with("\"end_ms\":40.25", "\"end_ms\":-1"), "\"response.end_ms\" is -1");
  expect_refused(with("{\"ms\":5", "{\"ms\":-5"), "\"response.events[].ms\" is -5");
  expect_refused(with("[\"content-type\",\"text/event-stream\"]", "[\"content-type\",\"a\\r\\nx: y\"]"),
                 "a header name must be a token and a value must hold no CR, LF or NUL");
  expect_refused(with("[\"content-type\",\"text/event-stream\"]", "[\"transfer-encoding \",\"x\"]"),
                 "a header name must be a token");
  EXPECT_EQ(relsim::parse_recordings(good + "\n\n" + good + "\n", "rec.jsonl").size(), 2u);  // blank lines skipped
}

TEST(Recording, ADirectoryIsReadInNameOrder) {
  const std::filesystem::path dir = relsim::test::scratch("recordings") / "dir";
  std::filesystem::create_directories(dir);
  EXPECT_THROW(relsim::read_recordings(dir.string()), InputError);  // none yet
  RecordedExchange a = exchange(1000), b = exchange(1000);
  a.task = 1;
  b.task = 2;
  relsim::test::write_temp("recordings", "dir/relsim-b.jsonl", b.line() + "\n");
  relsim::test::write_temp("recordings", "dir/relsim-a.jsonl", a.line() + "\n");
  relsim::test::write_temp("recordings", "dir/notes.txt", "not a recording");
  const auto all = relsim::read_recordings(dir.string());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].task, 1);
  EXPECT_EQ(all[1].task, 2);
  EXPECT_THROW(relsim::read_recordings((dir / "missing").string()), InputError);
}

}  // namespace recording_test
