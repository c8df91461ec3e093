// relsim fit over relsim proxy's recordings (fit/records.hpp, docs/fit.md):
// a directory or a file of recordings is read as requests of their tasks in
// index order, each good or bad by the upstream's own answer (an error
// status, no headers, an error event, data that is not JSON, a stream that
// broke off or ended without its stop); an exchange the plan broke on its
// way, or one whose client went away, is skipped; a directory with --format
// csv is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/fit/records.hpp"
#include "relsim/formats/recording.hpp"
#include "support/files.hpp"

// Named, not anonymous: the unit tests build as unity batches.
namespace fit_recording_test {

using relsim::Dialect;
using relsim::RecordedExchange;
namespace fit = relsim::fit;

// A 200 answer of `content_type` whose body is `bytes`, read whole or not.
RecordedExchange answer(std::int64_t task, std::int64_t index, const std::string& bytes, bool complete,
                        Dialect dialect, std::string entry, const std::string& content_type) {
  RecordedExchange x;
  x.dialect = dialect;
  x.task = task;
  x.index = index;
  x.entry = std::move(entry);
  x.method = "POST";
  x.path = dialect == Dialect::openai ? "/v1/chat/completions" : "/v1/messages";
  x.request_body = "{}";
  x.status = 200;
  x.response_headers = {{"content-type", content_type}};
  x.set_event_stream(content_type == "text/event-stream");
  x.add_body(bytes, 3.0);
  x.finish(complete, 4.0);
  return x;
}

RecordedExchange stream(std::int64_t task, std::int64_t index, const std::string& bytes, bool complete = true,
                        Dialect dialect = Dialect::anthropic, std::string entry = "ok") {
  return answer(task, index, bytes, complete, dialect, std::move(entry), "text/event-stream");
}

RecordedExchange status(std::int64_t task, std::int64_t index, std::optional<int> code, std::string error = "") {
  RecordedExchange x = stream(task, index, "");
  x.status = code;
  x.error = std::move(error);
  x.set_event_stream(false);
  return x;
}

const std::string kStart = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n";
const std::string kStop = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

RecordedExchange broke_off(std::int64_t task, std::int64_t index) {
  RecordedExchange x = stream(task, index, kStart, false);
  x.error = "upstream http://x broke off after 40 bytes: Connection reset by peer";
  return x;
}

TEST(FitRecordings, EachExchangeIsGoodOrBadByTheUpstreamsOwnAnswer) {
  std::vector<RecordedExchange> xs = {
      stream(1, 0, kStart + kStop),
      stream(1, 1, kStart + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n"),
      stream(1, 2, kStart),                        // complete, no message_stop
      broke_off(1, 3),
      stream(1, 5, kStart, false),                 // its client went away: skipped
      stream(1, 4, kStart + "event: content_block_delta\ndata: {\"type\":\n\n" + kStop),
      status(2, 0, 529),
      status(2, 1, std::nullopt, "upstream http://x failed before its headers: Operation timed out"),
      status(2, 2, std::nullopt, "upstream http://x failed before its headers: Connection refused"),
      stream(2, 3, kStart, false, Dialect::anthropic, "cut"),  // the plan's cut: skipped
      stream(3, 0, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n"
                   "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
             true, Dialect::openai),
      stream(3, 1, "data: {\"error\":{\"type\":\"server_error\",\"code\":\"overloaded\"}}\n\n", true, Dialect::openai),
      stream(3, 2, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\ndata: [DONE]\n\n",
             true, Dialect::openai),
  };
  std::string text;
  for (const RecordedExchange& x : xs) text += x.line() + "\n";
  const std::filesystem::path dir = relsim::test::scratch("fit_recording") / "recordings";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "relsim-1.jsonl") << text;
  for (const std::string& path : {dir.string(), (dir / "relsim-1.jsonl").string()}) {
    SCOPED_TRACE(path);
    std::vector<fit::Record> got;
    const fit::ReadStats stats =
        fit::read_records(path, fit::Format::automatic, [&](const fit::Record& r) { got.push_back(r); });
    EXPECT_EQ(stats.format, "recording");
    ASSERT_EQ(got.size(), 11u);
    const std::vector<std::string> kinds = {"",      "overloaded", "no_stop",    "cut", "malformed", "http_529",
                                            "slow_headers", "reset", "",           "overloaded", "no_stop"};
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].kind, kinds[i]) << i;
      EXPECT_EQ(got[i].bad, !kinds[i].empty()) << i;
    }
    EXPECT_EQ(got[5].task, "2");
    EXPECT_EQ(got[5].order, 0);
    EXPECT_EQ(stats.skipped.size(), 2u);
  }
  EXPECT_THROW(fit::read_records(dir.string(), fit::Format::csv, [](const fit::Record&) {}), relsim::InputError);
}

// A whole, clean answer that carries a content fault (docs/model.md, Content
// faults), streamed or whole, in both dialects; the bytes typed out as the
// APIs send them.
TEST(FitRecordings, AWholeAnswerWithAContentFaultIsBadByItsKind) {
  const auto delta = [](const std::string& text) {
    return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
           "\"text_delta\",\"text\":\"" + text + "\"}}\n\n";
  };
  const auto stop = [](const std::string& reason) {
    return "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"" + reason +
           "\"}}\n\n";
  };
  const std::string tool =
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":"
      "{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
      "\"input_json_delta\",\"partial_json\":\"{\\\"a\\\": b}\"}}\n\n"
      "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n";
  const auto whole = [](std::int64_t index, const std::string& body, Dialect dialect) {
    return answer(4, index, body, true, dialect, "ok", "application/json");
  };
  std::vector<RecordedExchange> xs = {
      stream(4, 0, kStart + delta("Hel") + stop("end_turn") + kStop),
      stream(4, 1, kStart + delta("Hel") + stop("max_tokens") + kStop),
      stream(4, 2, kStart + delta("Hel") + tool + stop("tool_use") + kStop),
      stream(4, 3, kStart + delta("Hel") + delta("Hel") + stop("end_turn") + kStop),
      stream(4, 4, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n",
             true, Dialect::openai),
      whole(5, R"({"choices":[{"message":{"content":"hi"},"finish_reason":"length"}]})", Dialect::openai),
      whole(6, R"({"choices":[{"message":{"content":null,"tool_calls":[{"function":{"name":"f","arguments":"{\"a\": b}"}}]},"finish_reason":"tool_calls"}]})",
            Dialect::openai),
      whole(7, R"({"content":[{"type":"text","text":"hi"}],"stop_reason":"max_tokens"})", Dialect::anthropic),
      whole(8, R"({"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn"})", Dialect::anthropic),
  };
  std::string text;
  for (const RecordedExchange& x : xs) text += x.line() + "\n";
  const std::filesystem::path file = relsim::test::scratch("fit_recording_content") / "relsim-1.jsonl";
  std::ofstream(file) << text;
  std::vector<fit::Record> got;
  fit::read_records(file.string(), fit::Format::automatic, [&](const fit::Record& r) { got.push_back(r); });
  // A repeated delta (index 3) is no fault to fit: a real answer may repeat a token.
  const std::vector<std::string> kinds = {"",           "max_tokens",    "bad_tool_args", "",             "max_tokens",
                                          "max_tokens", "bad_tool_args", "max_tokens",    ""};
  ASSERT_EQ(got.size(), kinds.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].kind, kinds[i]) << i;
  // The one table: a 2xx answer's word for its token limit.
  EXPECT_EQ(fit::fault_kind_of("length", 200), "max_tokens");
  EXPECT_EQ(fit::fault_kind_of("openai.LengthFinishReasonError", 200), "max_tokens");
}

}  // namespace fit_recording_test
