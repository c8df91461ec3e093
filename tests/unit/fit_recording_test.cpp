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

RecordedExchange stream(std::int64_t task, std::int64_t index, const std::string& bytes, bool complete = true,
                        Dialect dialect = Dialect::anthropic, std::string entry = "ok") {
  RecordedExchange x;
  x.dialect = dialect;
  x.task = task;
  x.index = index;
  x.entry = std::move(entry);
  x.method = "POST";
  x.path = dialect == Dialect::openai ? "/v1/chat/completions" : "/v1/messages";
  x.request_body = "{}";
  x.status = 200;
  x.response_headers = {{"content-type", "text/event-stream"}};
  x.set_event_stream(true);
  x.add_body(bytes, 3.0);
  x.finish(complete, 4.0);
  return x;
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

}  // namespace fit_recording_test
