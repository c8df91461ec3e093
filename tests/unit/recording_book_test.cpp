// Which recording answers a replayed request (formats/recording_book.hpp,
// docs/replay.md): the same JSON body whatever its key order and spacing,
// the volatile fields left out by default, --match comparing just the
// fields it names; among equal matches a whole 2xx answer, then the
// request's own task and index, then its task, then the first; a miss names
// the nearest recording's file and line and the fields that differ; a
// --match field no recording has and a name that is not a field name are
// refused; lines the plan broke or marked lossy are skipped, and refused
// when nothing else is left.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/formats/recording_book.hpp"

// Named, not anonymous: the unit tests build as unity batches.
namespace recording_book_test {

using relsim::Dialect;
using relsim::InputError;
using relsim::RecordedExchange;
using relsim::RecordingBook;

RecordedExchange recorded(std::string body, std::int64_t task, std::int64_t index, std::string source,
                          Dialect dialect = Dialect::anthropic, bool complete = true) {
  RecordedExchange x;
  x.dialect = dialect;
  x.task = task;
  x.index = index;
  x.method = "POST";
  x.path = dialect == Dialect::openai ? "/v1/chat/completions" : "/v1/messages";
  x.request_body = std::move(body);
  x.entry = "ok";
  x.status = 200;
  x.set_event_stream(true);
  x.finish(complete, 1.0);
  x.source = std::move(source);
  return x;
}

const std::string kHi = R"({"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]})";

std::vector<RecordedExchange> three() {
  return {recorded(kHi, 0, 0, "a.jsonl:1"), recorded(kHi, 1, 0, "a.jsonl:2"), recorded(kHi, 1, 1, "a.jsonl:3"),
          recorded(R"({"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"bye"}]})", 2, 0,
                   "b.jsonl:1"),
          recorded(R"({"model":"g","messages":[]})", 0, 0, "b.jsonl:2", Dialect::openai)};
}

TEST(RecordingBook, KeyOrderSpacingAndVolatileFieldsDoNotCount) {
  const RecordingBook book(three(), {});
  const std::string same =
      R"({ "messages": [ {"content": "hi", "role": "user"} ], "stream": true, "max_tokens": 16, "model": "m",)"
      R"( "metadata": {"user_id": "u-42"}, "user": "x", "stream_options": {"include_usage": true} })";
  const RecordingBook::Found f = book.find(Dialect::anthropic, "/v1/messages?beta=1", same);
  ASSERT_EQ(f.matches.size(), 3u);
  EXPECT_EQ(f.matches[0]->source, "a.jsonl:1");
  // A value that differs, even in type (16 and 16.0), is another request.
  EXPECT_TRUE(book.find(Dialect::anthropic, "/v1/messages",
                        R"({"model":"m","max_tokens":16.0,"stream":true,"messages":[{"role":"user","content":"hi"}]})")
                  .matches.empty());
  // The other dialect's recordings answer only its own requests.
  EXPECT_TRUE(book.find(Dialect::openai, "/v1/chat/completions", kHi).matches.empty());
  EXPECT_EQ(book.find(Dialect::openai, "/v1/chat/completions", R"({"messages":[],"model":"g"})").matches.size(), 1u);
}

TEST(RecordingBook, TheRequestsOwnTaskAndIndexAnswerFirst) {
  const RecordingBook book(three(), {});
  const RecordingBook::Found f = book.find(Dialect::anthropic, "/v1/messages", kHi);
  EXPECT_EQ(f.pick(1, 1)->source, "a.jsonl:3");  // its task and index
  EXPECT_EQ(f.pick(1, 5)->source, "a.jsonl:2");  // its task's first
  EXPECT_EQ(f.pick(9, 0)->source, "a.jsonl:1");  // the first of all
}

TEST(RecordingBook, AMissNamesTheNearestRecordingAndTheFieldsThatDiffer) {
  const RecordingBook book(three(), {});
  const RecordingBook::Found f = book.find(
      Dialect::anthropic, "/v1/messages",
      R"({"model":"m","max_tokens":99,"stream":true,"messages":[{"role":"user","content":"bye"}]})");
  ASSERT_TRUE(f.matches.empty());
  EXPECT_NE(f.why.find("the nearest is b.jsonl:1 (task 2, request 0), which differs in \"max_tokens\""),
            std::string::npos)
      << f.why;
  // 16.0 is not 16: the miss names the field.
  const RecordingBook::Found typed = book.find(
      Dialect::anthropic, "/v1/messages",
      R"({"model":"m","max_tokens":16.0,"stream":true,"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_NE(typed.why.find("which differs in \"max_tokens\""), std::string::npos) << typed.why;
  const RecordingBook::Found none = RecordingBook({three()[0]}, {}).find(Dialect::openai, "/v1/chat/completions", "{}");
  EXPECT_NE(none.why.find("none in the openai dialect"), std::string::npos) << none.why;
}

TEST(RecordingBook, MatchComparesOnlyTheFieldsItNames) {
  const RecordingBook book(three(), {"model", "messages"});
  const RecordingBook::Found f = book.find(
      Dialect::anthropic, "/v1/messages",
      R"({"model":"m","max_tokens":1,"temperature":0.5,"messages":[{"role":"user","content":"bye"}]})");
  ASSERT_EQ(f.matches.size(), 1u);
  EXPECT_EQ(f.matches[0]->source, "b.jsonl:1");
  const RecordingBook::Found miss = book.find(Dialect::anthropic, "/v1/messages", R"({"model":"x","messages":[]})");
  EXPECT_NE(miss.why.find("the body fields \"model\", \"messages\" (--match)"), std::string::npos) << miss.why;
}

TEST(RecordingBook, BadMatchNamesAndLossyRecordingsAreRefused) {
  try {
    RecordingBook(three(), {"model", "temperature"});
    FAIL() << "a --match field no recording has was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--match 'temperature' is in no recording's request body (5 exchanges)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(RecordingBook(three(), {"messages.0"}), InputError);
  // With no recording yet (a record-on-miss start), any field name is taken.
  EXPECT_NO_THROW(RecordingBook({}, {"temperature"}));
  std::vector<RecordedExchange> some = three();
  some[3].lossy = true;
  some[4].entry = "cut";
  const RecordingBook kept(some, {});
  EXPECT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept.skipped().lossy, 1u);
  EXPECT_EQ(kept.skipped().broken, 1u);
  for (RecordedExchange& x : some) x.entry = "stall";
  try {
    RecordingBook(std::move(some), {});
    FAIL() << "recordings that cannot be replayed were taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("none of the 5 recorded exchanges can be replayed: 5 were broken"),
              std::string::npos)
        << e.what();
  }
}

TEST(RecordingBook, AWhole2xxAnswerComesBeforeAnErrorOrABrokenOne) {
  std::vector<RecordedExchange> xs = three();
  xs[2].status = 529;  // task 1, index 1
  xs.push_back(recorded(kHi, 0, 0, "c.jsonl:1", Dialect::anthropic, false));  // task 0, index 0, broke off
  xs.push_back(recorded(kHi, 1, 1, "c.jsonl:2"));                             // task 1, index 1, whole
  const RecordingBook book(xs, {});
  const RecordingBook::Found f = book.find(Dialect::anthropic, "/v1/messages", kHi);
  EXPECT_EQ(f.pick(1, 1)->source, "c.jsonl:2");  // whole, before the 529 at a.jsonl:3
  EXPECT_EQ(f.pick(0, 0)->source, "a.jsonl:1");  // whole, before the broken c.jsonl:1
}

TEST(RecordingBook, ARecordingAddedOnAMissAnswersTheNextRequest) {
  RecordingBook book({}, {});
  EXPECT_TRUE(book.find(Dialect::anthropic, "/v1/messages", kHi).matches.empty());
  book.add(recorded(kHi, 4, 0, ""));
  EXPECT_EQ(book.size(), 1u);
  EXPECT_EQ(book.find(Dialect::anthropic, "/v1/messages", kHi).pick(4, 0)->task, 4);
  // Bodies that are not JSON objects match by their bytes.
  book.add(recorded("not json", 5, 0, ""));
  EXPECT_EQ(book.find(Dialect::anthropic, "/v1/messages", "not json").matches.size(), 1u);
  EXPECT_TRUE(book.find(Dialect::anthropic, "/v1/messages", "not json ").matches.empty());
}

}  // namespace recording_book_test
