// The readers of `relsim fit` (include/relsim/fit/records.hpp): one small
// hand-written file per format, auto-detection, and every bad input the
// issue names (a malformed row with its line, an empty log, mixed formats,
// no usable record), with the rows skipped and why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/fit/records.hpp"
#include "support/files.hpp"

namespace relsim::fit {
namespace {

struct Read {
  ReadStats stats;
  std::vector<Record> records;
};

std::string write(const std::string& name, const std::string& text) {
  return test::write_temp("fit_records", name, text).string();
}

Read read(const std::string& name, const std::string& text, Format format = Format::automatic) {
  Read out;
  out.stats = read_records(write(name, text), format, [&](const Record& r) { out.records.push_back(r); });
  return out;
}

// The InputError's message; fails the test when none is thrown.
std::string error_of(const std::string& name, const std::string& text, Format format = Format::automatic) {
  try {
    read(name, text, format);
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << name << ": no InputError";
  return "";
}

bool has_note(const ReadStats& stats, const std::string& part) {
  for (const auto& n : stats.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

constexpr std::int64_t kNoon = 1714564800LL * 1'000'000'000;  // 2024-05-01T12:00:00Z

TEST(FitRecords, ParseFormat) {
  EXPECT_EQ(parse_format("auto"), Format::automatic);
  EXPECT_EQ(parse_format("relsim"), Format::relsim);
  EXPECT_EQ(parse_format("csv"), Format::csv);
  EXPECT_EQ(parse_format("jsonl"), Format::csv);
  EXPECT_EQ(parse_format("otlp"), Format::otlp);
  EXPECT_EQ(parse_format("litellm"), Format::litellm);
  EXPECT_THROW(parse_format("xml"), InputError);
}

TEST(FitRecords, CsvOutcomes) {
  const Read r = read("a.csv",
                      "task,request,outcome\n"
                      "t1,0,ok\n"
                      "t1,1,cut\n"
                      "t1,2,429\n"
                      "t1,3,200\n"
                      "t2,0,http_503\n"
                      "t2,1,anthropic.RateLimitError\n");
  EXPECT_EQ(r.stats.format, "csv");
  EXPECT_EQ(r.stats.records, 6);
  ASSERT_EQ(r.records.size(), 6u);
  EXPECT_FALSE(r.records[0].bad);
  EXPECT_EQ(r.records[0].kind, "");
  EXPECT_TRUE(r.records[1].bad);
  EXPECT_EQ(r.records[1].kind, "cut");
  EXPECT_EQ(r.records[2].kind, "http_429");
  EXPECT_FALSE(r.records[3].bad);
  EXPECT_EQ(r.records[4].kind, "http_503");
  EXPECT_EQ(r.records[5].kind, "http_429");  // the SDK class, by the one table
  EXPECT_EQ(r.records[5].task, "t2");
  EXPECT_EQ(r.records[5].order, 1);
}

TEST(FitRecords, CsvQuotesCrlfBomAndExtraColumns) {
  const Read r = read("b.csv",
                      "\xEF\xBB\xBFtask,call,note,request,outcome\r\n"
                      "\r\n"
                      "\"a,b\",0,\"he said \"\"hi\"\"\",0,ok\r\n"
                      " x , 1 , , 5 , stall \r\n"
                      "x,,n,6,ok");  // no final newline
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].task, "a,b");
  EXPECT_EQ(r.records[1].task, "x");
  EXPECT_EQ(r.records[1].order, 5);
  EXPECT_EQ(r.records[1].kind, "stall");
  EXPECT_EQ(r.records[2].order, 6);
  EXPECT_TRUE(has_note(r.stats, "columns not used: note"));
}

TEST(FitRecords, CsvTimes) {
  const Read r = read("c.csv",
                      "task,time,outcome\n"
                      "t,2024-05-01T12:00:00Z,ok\n"
                      "t,2024-05-01T12:00:00.25Z,ok\n"
                      "t,2024-05-01T14:00:00.000000001+02:00,ok\n"
                      "t,1714564800.5,ok\n"
                      "t,1714564801,ok\n"
                      "t,1.7145648015e9,ok\n");
  ASSERT_EQ(r.records.size(), 6u);
  EXPECT_EQ(r.records[0].order, kNoon);
  EXPECT_EQ(r.records[1].order, kNoon + 250'000'000);
  EXPECT_EQ(r.records[2].order, kNoon + 1);
  EXPECT_EQ(r.records[3].order, kNoon + 500'000'000);
  EXPECT_EQ(r.records[4].order, kNoon + 1'000'000'000);
  EXPECT_NEAR(static_cast<double>(r.records[5].order), static_cast<double>(kNoon + 1'500'000'000), 1e3);
  EXPECT_TRUE(has_note(r.stats, "time column"));
}

TEST(FitRecords, CsvMalformedRowsNameTheirLine) {
  const std::string head = "task,request,outcome\nt,0,ok\n";
  EXPECT_NE(error_of("m1.csv", head + "t,1\n").find("m1.csv:3:"), std::string::npos);
  EXPECT_NE(error_of("m2.csv", head + "\nt,1,o k\n").find("m2.csv:4: outcome = 'o k'"), std::string::npos);
  EXPECT_NE(error_of("m3.csv", head + "t,-1,ok\n").find("m3.csv:3: request"), std::string::npos);
  EXPECT_NE(error_of("m4.csv", head + "\"t,1,ok\n").find("m4.csv:3:"), std::string::npos);
  EXPECT_NE(error_of("m5.csv", head + ",1,ok\n").find("m5.csv:3: task"), std::string::npos);
  EXPECT_NE(error_of("m6.csv", head + "t,1,999\n").find("m6.csv:3: outcome"), std::string::npos);
  EXPECT_NE(error_of("m7.csv", "task,time,outcome\nt,2024-13-01T00:00:00Z,ok\n").find("m7.csv:2: time"),
            std::string::npos);
  EXPECT_NE(error_of("m10.csv", "task,time,outcome\nt,9999-12-31T23:59:59Z,ok\n").find("m10.csv:2: time"),
            std::string::npos);  // beyond 64-bit ns
  EXPECT_NE(error_of("m8.csv", "task,outcome\nt,ok\n").find("lacks 'request'"), std::string::npos);
  EXPECT_NE(error_of("m9.csv", "task,task,request,outcome\n").find("twice"), std::string::npos);
}

TEST(FitRecords, EmptyAndUnusable) {
  EXPECT_NE(error_of("empty.csv", "").find("empty log"), std::string::npos);
  EXPECT_NE(error_of("blank.csv", "\n  \n\r\n").find("empty log"), std::string::npos);
  EXPECT_NE(error_of("header.csv", "task,request,outcome\n").find("no usable record"), std::string::npos);
  EXPECT_NE(error_of("missing.csv", "", Format::csv).find("empty log"), std::string::npos);
  EXPECT_THROW(read_records("/no/such/file.csv", Format::automatic, [](const Record&) {}), InputError);
}

TEST(FitRecords, MixedFormats) {
  const std::string m1 = error_of("mix1.csv", "task,request,outcome\nt,0,ok\n{\"task\":\"t\",\"request\":1,\"outcome\":\"ok\"}\n");
  EXPECT_NE(m1.find("mix1.csv:3:"), std::string::npos) << m1;
  EXPECT_NE(m1.find("mixed formats"), std::string::npos) << m1;
  const std::string m2 = error_of("mix2.jsonl", "{\"task\":\"t\",\"request\":0,\"outcome\":\"ok\"}\n{\"resourceSpans\":[]}\n");
  EXPECT_NE(m2.find("mix2.jsonl:2:"), std::string::npos) << m2;
  EXPECT_NE(m2.find("mixed formats"), std::string::npos) << m2;
  const std::string m3 = error_of("mix3.otlp", "{\"resourceSpans\":[]}\n\n{\"trace_id\":\"a\",\"status\":\"success\",\"startTime\":1}\n");
  EXPECT_NE(m3.find("mix3.otlp:3:"), std::string::npos) << m3;
  EXPECT_NE(m3.find("mixed formats"), std::string::npos) << m3;
  const std::string m4 = error_of("mix4.log",
                                  "{\"relsim_log\":1,\"port\":1,\"plan_tasks\":null}\n"
                                  "{\"task\":\"t\",\"request\":0,\"outcome\":\"ok\"}\n");
  EXPECT_NE(m4.find("mix4.log:2:"), std::string::npos) << m4;
  EXPECT_NE(m4.find("mixed formats"), std::string::npos) << m4;
  const std::string m5 = error_of("mix5.jsonl", "{\"trace_id\":\"a\",\"status\":\"success\",\"startTime\":1}\n{\"task\":\"t\",\"request\":0,\"outcome\":\"ok\"}\n");
  EXPECT_NE(m5.find("mix5.jsonl:2:"), std::string::npos) << m5;
}

TEST(FitRecords, JsonLines) {
  const Read r = read("d.jsonl",
                      "{\"task\":\"a\",\"time\":\"2024-05-01T12:00:00Z\",\"outcome\":\"ok\"}\n"
                      "{\"task\":7,\"time\":1714564800.5,\"outcome\":529,\"call\":0}\n"
                      "{\"task\":\"a\",\"time\":\"1714564801\",\"outcome\":\"reset\",\"call\":null}\n");
  EXPECT_EQ(r.stats.format, "jsonl");
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].order, kNoon);
  EXPECT_EQ(r.records[1].task, "7");
  EXPECT_EQ(r.records[1].kind, "http_529");
  EXPECT_EQ(r.records[2].order, kNoon + 1'000'000'000);
  EXPECT_EQ(r.records[2].kind, "reset");
  EXPECT_NE(error_of("e.jsonl", "{\"task\":\"a\",\"request\":0,\"outcome\":\"ok\"}\n{\"task\":\"a\",\"outcome\":\"ok\"}\n")
                .find("e.jsonl:2: missing \"request\""),
            std::string::npos);
  EXPECT_NE(error_of("f.jsonl", "{\"task\":\"a\",\"request\":0,\"outcome\":\"ok\"}\n{\"task\":\"a\",\"request\n")
                .find("f.jsonl:2: not JSON"),
            std::string::npos);
}

TEST(FitRecords, RelsimLogSortsAndSkips) {
  const std::string request =
      R"({"task": %T, "index": %I, "entry": %E, "status": 200, "end": "complete", "received_ms": 0.0, "finished_ms": 1.0, "retry_count": null, "body_bytes": 86%X})";
  const auto line = [&](const std::string& t, const std::string& i, const std::string& e, const std::string& x = "") {
    std::string s = request;
    s.replace(s.find("%T"), 2, t);
    s.replace(s.find("%I"), 2, i);
    s.replace(s.find("%E"), 2, e);
    s.replace(s.find("%X"), 2, x);
    return s + "\n";
  };
  const Read r = read("g.log", "{\"relsim_log\": 1, \"port\": 8080, \"plan_tasks\": 2}\n" + line("1", "1", "\"ok\"") +
                                   line("1", "0", "{\"kind\": \"stall\"}") + line("0", "0", "\"http_529\"") +
                                   line("0", "null", "null") + line("0", "1", "null", ", \"exhausted\": true") +
                                   "{\"task\": 0, \"outcome\": \"done\", \"detail\": \"\", \"received_ms\": 5.0}\n");
  EXPECT_EQ(r.stats.format, "relsim");
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].task, "0");
  EXPECT_EQ(r.records[0].kind, "http_529");
  EXPECT_EQ(r.records[1].task, "1");
  EXPECT_EQ(r.records[1].order, 0);
  EXPECT_EQ(r.records[1].kind, "stall");
  EXPECT_EQ(r.records[2].order, 1);
  EXPECT_FALSE(r.records[2].bad);
  EXPECT_EQ(r.stats.skipped.size(), 3u);
  for (const auto& [reason, n] : r.stats.skipped) EXPECT_EQ(n, 1) << reason;
  const std::string none = error_of("h.log", "{\"relsim_log\": 1, \"port\": 8080, \"plan_tasks\": 2}\n" + line("0", "null", "null"));
  EXPECT_NE(none.find("no usable record"), std::string::npos) << none;
  EXPECT_NE(none.find("refused"), std::string::npos) << none;
}

TEST(FitRecords, PlanFile) {
  const Read r = read("p.jsonl",
                      "{\"relsim_plan\": 1, \"tasks\": 2, \"source\": \"scripted\"}\n"
                      "{\"task\": 0, \"requests\": [\"cut\", \"ok\"]}\n"
                      "{\"task\": 1, \"requests\": [\"ok\"]}\n",
                      Format::relsim);
  EXPECT_EQ(r.stats.format, "plan");
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].kind, "cut");
  EXPECT_EQ(r.records[1].order, 1);
  EXPECT_EQ(r.records[2].task, "1");
  EXPECT_TRUE(has_note(r.stats, "plan"));
}

// An OTLP/JSON span: attributes in the {"key", "value": {"stringValue"...}} shape.
std::string span(const std::string& trace, const std::string& id, const std::string& parent, const std::string& start,
                 const std::string& status, const std::string& attributes) {
  return "{\"traceId\":\"" + trace + "\",\"spanId\":\"" + id + "\",\"parentSpanId\":\"" + parent +
         "\",\"name\":\"x\",\"kind\":3,\"startTimeUnixNano\":" + start + ",\"endTimeUnixNano\":\"1\",\"status\":" +
         status + ",\"attributes\":[" + attributes + "]}";
}
std::string attr(const std::string& key, const std::string& value) {
  return "{\"key\":\"" + key + "\",\"value\":" + value + "}";
}
std::string str(const std::string& s) { return "{\"stringValue\":\"" + s + "\"}"; }
std::string request(const std::string& spans, const std::string& scope = "s") {
  return "{\"resourceSpans\":[{\"resource\":{\"attributes\":[]},\"scopeSpans\":[{\"scope\":{\"name\":\"" + scope +
         "\"},\"spans\":[" + spans + "]}]}]}\n";
}
const std::string kChat = attr("gen_ai.operation.name", str("chat"));

TEST(FitRecords, OtlpChatSpansOnly) {
  const std::string text =
      request(span("t2", "s1", "", "\"300\"", "{}", kChat + "," + attr("gen_ai.provider.name", str("anthropic"))) + "," +
              span("t1", "s2", "", "200", "{\"code\":2}", kChat + "," + attr("gen_ai.system", str("openai")))) +
      request(span("t1", "s3", "", "\"100\"", "{\"code\":\"STATUS_CODE_OK\"}", kChat) + "," +
              span("t1", "s4", "s3", "\"150\"", "{}", attr("db.system", str("x"))) + "," +
              span("t1", "s5", "", "\"250\"", "{}",
                   kChat + "," + attr("error.type", str("overloaded_error")) + "," + attr("gen_ai.conversation.id", str("c9"))) +
              "," + span("t1", "s6", "", "\"260\"", "{\"code\":\"STATUS_CODE_ERROR\"}", attr("gen_ai.operation.name", str("embeddings"))));
  const Read r = read("o.jsonl", text);
  EXPECT_EQ(r.stats.format, "otlp");
  ASSERT_EQ(r.records.size(), 4u);
  // Sorted by task ("c9" < "t1" < "t2"), then start time.
  EXPECT_EQ(r.records[0].task, "c9");
  EXPECT_EQ(r.records[0].kind, "http_529");  // overloaded_error with no status: before the stream
  EXPECT_EQ(r.records[1].task, "t1");
  EXPECT_EQ(r.records[1].order, 100);
  EXPECT_FALSE(r.records[1].bad);
  EXPECT_EQ(r.records[2].order, 200);
  EXPECT_EQ(r.records[2].kind, "error");
  EXPECT_EQ(r.records[3].task, "t2");
  EXPECT_TRUE(has_note(r.stats, "per-call outcomes only: retries inside a model-call span are not seen"));
  EXPECT_TRUE(has_note(r.stats, "anthropic (1)"));
  EXPECT_TRUE(has_note(r.stats, "gen_ai.system"));
  std::int64_t skipped = 0;
  for (const auto& [reason, n] : r.stats.skipped) skipped += n;
  EXPECT_EQ(skipped, 2);
}

TEST(FitRecords, OtlpHttpChildSpansAreTheRequests) {
  const std::string http = attr("http.request.method", str("POST"));
  const auto code = [](const std::string& c) { return attr("http.response.status_code", "{\"intValue\":\"" + c + "\"}"); };
  const auto resend = [](int n) { return attr("http.request.resend_count", "{\"intValue\":" + std::to_string(n) + "}"); };
  // The children come before their parent (another batch line), and two attempts share a start time.
  const std::string text =
      request(span("t", "h2", "c", "\"20\"", "{}", http + "," + code("200") + "," + resend(2)) + "," +
              span("t", "h1", "c", "\"20\"", "{}", http + "," + code("529") + "," + resend(1)) + "," +
              span("t", "h0", "c", "\"10\"", "{\"code\":2}", http + "," + attr("error.type", str("ECONNRESET")))) +
      request(span("t", "c", "", "\"5\"", "{}", kChat) + "," + span("t", "d", "", "\"50\"", "{}", kChat) + "," +
              span("u", "h9", "x", "\"1\"", "{}", http + "," + code("200")));
  const Read r = read("h.otlp", text);
  ASSERT_EQ(r.records.size(), 4u);
  EXPECT_EQ(r.records[0].order, 10);
  EXPECT_EQ(r.records[0].kind, "reset");
  EXPECT_EQ(r.records[1].kind, "http_529");
  EXPECT_FALSE(r.records[2].bad);
  EXPECT_EQ(r.records[3].order, 50);  // the chat span without HTTP children
  EXPECT_FALSE(has_note(r.stats, "per-call outcomes only: retries"));
  EXPECT_TRUE(has_note(r.stats, "1 of 2 model-call spans have no HTTP child spans"));
  EXPECT_EQ(r.stats.skipped.at("model-call spans replaced by their HTTP attempts"), 1);
  EXPECT_EQ(r.stats.skipped.at("HTTP spans outside a model-call span"), 1);
}

TEST(FitRecords, OtlpWholeDocumentAndErrors) {
  const std::string doc =
      "{\n  \"resourceSpans\": [\n    {\"scopeSpans\": [{\"spans\": [\n" +
      span("t", "a", "", "\"7\"", "{}", kChat + "," + attr("gen_ai.conversation.id", str("conv"))) + "\n]}]}\n  ]\n}\n";
  const Read r = read("doc.json", doc, Format::otlp);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].task, "conv");
  EXPECT_TRUE(has_note(r.stats, "tasks: gen_ai.conversation.id"));
  const std::string bad_status = error_of("o1.otlp", request(span("t", "a", "", "\"7\"", "{\"code\":9}", kChat)));
  EXPECT_NE(bad_status.find("o1.otlp:1: resourceSpans[0].scopeSpans[0].spans[0]: status.code"), std::string::npos) << bad_status;
  const std::string no_time = error_of("o2.otlp", request("{\"traceId\":\"t\",\"spanId\":\"a\",\"attributes\":[" + kChat + "]}"));
  EXPECT_NE(no_time.find("startTimeUnixNano"), std::string::npos) << no_time;
  const std::string bad_attr = error_of("o3.otlp", request(span("t", "a", "", "\"7\"", "{}", "{\"value\":{}}")));
  EXPECT_NE(bad_attr.find("has no \"key\""), std::string::npos) << bad_attr;
  const std::string none = error_of("o4.otlp", request(span("t", "a", "", "\"7\"", "{}", "")));
  EXPECT_NE(none.find("no usable record"), std::string::npos) << none;
  EXPECT_NE(error_of("o5.otlp", "{\"resourceSpans\":[]}\n{\"resourceSpans\":\n").find("o5.otlp:2: not JSON"),
            std::string::npos);
  EXPECT_NE(error_of("o6.otlp", "{ not json\n").find("o6.otlp:1: not JSON"), std::string::npos);
}

// The official TypeScript SDK's own spans (its source, lib/internal/tracing:
// one span per create() with http.request.method, http.request.resend_count =
// attempts - 1 when it retried, status OK after message_stop, ERROR with
// error.type on a failure, unset when the caller aborted the stream).
TEST(FitRecords, OtlpSdkSpansStandForTheirHiddenRetriesAndAbortedStreams) {
  const std::string sdk = "com.anthropic.sdk.typescript";
  const std::string call = kChat + "," + attr("http.request.method", str("POST")) + "," +
                           attr("gen_ai.conversation.id", str("task-1"));
  const auto code = [](int c) { return attr("http.response.status_code", "{\"intValue\":" + std::to_string(c) + "}"); };
  const auto resend = [](int n) { return attr("http.request.resend_count", "{\"intValue\":" + std::to_string(n) + "}"); };
  const std::string stop = attr("anthropic.message.stop_reason", str("end_turn"));
  const std::string text = request(
      span("t", "a", "", "\"10\"", "{\"code\":1}", call + "," + code(200) + "," + resend(2) + "," + stop) + "," +
          span("t", "b", "", "\"20\"", "{\"code\":2}",
               call + "," + code(529) + "," + resend(2) + "," + attr("error.type", str("overloaded_error"))) +
          "," + span("t", "c", "", "\"30\"", "{}", call + "," + code(200)) + "," +
          span("t", "d", "", "\"40\"", "{\"code\":2}", call + "," + code(200) + "," + attr("error.type", str("overloaded_error"))) +
          "," + span("t", "e", "", "\"50\"", "{}", call + "," + code(200) + "," + stop),
      sdk);
  const Read r = read("sdk.otlp", text);
  // a: two hidden failures, then good; b: two hidden, then 529; c: aborted;
  // d: overloaded inside the stream; e: closed by the caller after its stop reason: good.
  ASSERT_EQ(r.records.size(), 9u);
  const std::vector<std::string> kinds = {"sdk_retry", "sdk_retry", "",         "sdk_retry", "sdk_retry",
                                          "http_529",  "stall",     "overloaded", ""};
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    EXPECT_EQ(r.records[i].kind, kinds[i]) << i;
    EXPECT_EQ(r.records[i].bad, !kinds[i].empty()) << i;
    EXPECT_EQ(r.records[i].task, "task-1");
  }
  EXPECT_EQ(r.stats.records, 9);
  EXPECT_TRUE(has_note(r.stats, "5 model-call spans record their own attempts (http.request.method): 2 of them carry "
                                "http.request.resend_count, whose 4 earlier attempts"));
  EXPECT_TRUE(has_note(r.stats, "1 model-call spans end with status unset and no stop or finish reason"));
  EXPECT_FALSE(has_note(r.stats, "per-call outcomes only"));
}

TEST(FitRecords, OtlpAnUnsetSpanIsAbortedOnlyWhereItsScopeRecordsReasons) {
  // Scope "quiet" never records a reason: its unset spans stay good, and a
  // note says why; scope "loud" does, so its reasonless unset span is a
  // fault, and so is one whose reasons are an empty list (OpenTelemetry's
  // OpenAI instrumentation, for a stream that ended without a finish_reason).
  const std::string finish = attr("gen_ai.response.finish_reasons", "{\"arrayValue\":{\"values\":[\"stop\"]}}");
  const std::string none = attr("gen_ai.response.finish_reasons", "{\"arrayValue\":{}}");
  const std::string text =
      request(span("q", "a", "", "\"1\"", "{}", kChat) + "," + span("q", "b", "", "\"2\"", "{}", kChat), "quiet") +
      request(span("l", "c", "", "\"1\"", "{}", kChat + "," + finish) + "," + span("l", "d", "", "\"2\"", "{}", kChat) +
                  "," + span("l", "e", "", "\"3\"", "{}", kChat + "," + none),
              "loud");
  const Read r = read("scopes.otlp", text);
  ASSERT_EQ(r.records.size(), 5u);
  EXPECT_FALSE(r.records[0].bad);  // task "l", span c: its finish reason
  EXPECT_EQ(r.records[1].kind, "stall");
  EXPECT_EQ(r.records[2].kind, "stall");
  EXPECT_FALSE(r.records[3].bad);
  EXPECT_FALSE(r.records[4].bad);
  EXPECT_TRUE(has_note(r.stats, "the spans of scope 'quiet' record no stop or finish reason"));
  EXPECT_FALSE(has_note(r.stats, "scope 'loud'"));
}

TEST(FitRecords, OneKindTableForEveryFormat) {
  // The same failure, said three ways, is one kind.
  for (const char* said : {"529", "http_529", "overloaded_error", "OverloadedError", "anthropic.OverloadedError"})
    EXPECT_EQ(fault_kind_of(said), "http_529") << said;
  EXPECT_EQ(fault_kind_of("overloaded_error", 200), "overloaded");  // an error event inside the stream
  EXPECT_EQ(fault_kind_of("overloaded_error", 529), "http_529");
  EXPECT_EQ(fault_kind_of("rate_limit_error"), "http_429");
  EXPECT_EQ(fault_kind_of("client_error", 503), "http_503");  // the status wins
  EXPECT_EQ(fault_kind_of("connection_error"), "reset");
  EXPECT_EQ(fault_kind_of("client_timeout_error"), "slow_headers");
  EXPECT_EQ(fault_kind_of("client_error", 200), "client_error");  // no kind stands for it: kept, listed apart
  EXPECT_EQ(fault_kind_of("cut"), "cut");
  // CSV, JSON Lines and OTLP agree.
  const Read csv = read("k.csv", "task,request,outcome\nt,0,overloaded_error\nt,1,529\n");
  const Read otlp = read("k.otlp", request(span("t", "a", "", "\"1\"", "{\"code\":2}",
                                                kChat + "," + attr("error.type", str("529")))));
  EXPECT_EQ(csv.records[0].kind, "http_529");
  EXPECT_EQ(csv.records[1].kind, "http_529");
  EXPECT_EQ(otlp.records[0].kind, "http_529");
  // LiteLLM: the status wins over the class there too.
  const Read litellm = read("k.litellm", "{\"id\":\"1\",\"trace_id\":\"A\",\"startTime\":1.0,\"status\":\"failure\","
                                         "\"error_information\":{\"error_class\":\"InternalServerError\","
                                         "\"error_code\":529}}\n");
  EXPECT_EQ(litellm.records[0].kind, "http_529");
}

TEST(FitRecords, OpenAisErrorTypesAndCodesAreTheSameKinds) {
  // OpenAI's error object ({"error": {"type", "code"}}, its API reference)
  // and the openai SDKs' classes, which share the Anthropic SDKs' names.
  EXPECT_EQ(fault_kind_of("rate_limit_exceeded"), "http_429");
  EXPECT_EQ(fault_kind_of("insufficient_quota"), "insufficient_quota");  // no retry mends it: apart
  EXPECT_EQ(fault_kind_of("openai.NotFoundError"), "http_404");
  EXPECT_EQ(fault_kind_of("openai.RateLimitError"), "http_429");
  EXPECT_EQ(fault_kind_of("server_error"), "http_500");
  EXPECT_EQ(fault_kind_of("openai.APIConnectionError"), "reset");
  EXPECT_EQ(fault_kind_of("openai.APITimeoutError"), "slow_headers");
  EXPECT_EQ(fault_kind_of("server_error", 503), "http_503");  // the status wins
  // Inside a 200 stream: OpenAI's error chunk (code "overloaded" from a
  // server that copies the 529's meaning) is the overloaded kind; a bare
  // server_error there names no kind and is listed apart.
  EXPECT_EQ(fault_kind_of("overloaded", 200), "overloaded");
  EXPECT_EQ(fault_kind_of("server_error", 200), "server_error");
  // OTLP spans of an OpenAI call read as an Anthropic call's.
  const Read otlp = read("o.otlp", request(span("t", "a", "", "\"1\"", "{\"code\":2}",
                                                kChat + "," + attr("gen_ai.provider.name", str("openai")) + "," +
                                                    attr("error.type", str("rate_limit_exceeded")))));
  EXPECT_EQ(otlp.records[0].kind, "http_429");
  EXPECT_TRUE(has_note(otlp.stats, "providers: openai (1)"));
  // OpenTelemetry's OpenAI instrumentation gives every 5xx the class
  // InternalServerError; the status is in the error's message, "529 Overloaded".
  const auto failed = [&](const std::string& message) {
    return read("m.otlp", request(span("t", "a", "", "\"1\"", "{\"code\":2,\"message\":\"" + message + "\"}",
                                       kChat + "," + attr("error.type", str("InternalServerError")))))
        .records[0]
        .kind;
  };
  EXPECT_EQ(failed("529 Overloaded"), "http_529");
  EXPECT_EQ(failed("503 status code (no body)"), "http_503");
  EXPECT_EQ(failed("Overloaded"), "http_500");  // no status in it: the class says 500
  EXPECT_EQ(failed("999 bottles"), "http_500");
}

TEST(FitRecords, LiteLlmPayloadsOfBothProvidersAndItsMadeUpStatuses) {
  // LiteLLM (litellm/exceptions.py) gives a connection error status 500 and
  // a timeout 408, and a stream that broke after it began its cause's status
  // or 503: no server sent those, so the class is read.
  const auto line = [](const std::string& id, const std::string& provider, const std::string& error) {
    return "{\"id\":\"" + id + "\",\"trace_id\":\"A\",\"startTime\":" + id +
           ",\"status\":\"failure\",\"custom_llm_provider\":\"" + provider +
           "\",\"error_information\":" + error + "}\n";
  };
  const Read r = read("b.jsonl",
                      line("1", "openai", R"({"error_class":"litellm.APIConnectionError","error_code":"500"})") +
                          line("2", "openai", R"({"error_class":"litellm.Timeout","error_code":"408"})") +
                          line("3", "openai", R"({"error_class":"litellm.MidStreamFallbackError","error_code":"503"})") +
                          line("4", "anthropic", R"({"error_class":"litellm.InternalServerError","error_code":"529"})") +
                          line("5", "openai", R"({"error_class":"litellm.ServiceUnavailableError","error_code":"503"})") +
                          line("6", "anthropic", R"({"error_class":"litellm.RateLimitError","error_code":"429"})"));
  ASSERT_EQ(r.records.size(), 6u);
  EXPECT_EQ(r.records[0].kind, "reset");
  EXPECT_EQ(r.records[1].kind, "slow_headers");
  EXPECT_EQ(r.records[2].kind, "MidStreamFallbackError");
  EXPECT_EQ(r.records[3].kind, "http_529");
  EXPECT_EQ(r.records[4].kind, "http_503");
  EXPECT_EQ(r.records[5].kind, "http_429");
  EXPECT_TRUE(has_note(r.stats, "providers: anthropic (2), openai (4)"));
  // Any other class is read only when there is no status: a class that is
  // not a plain word does not stop a 429 from being read.
  const Read odd = read("c.jsonl", line("1", "openai", R"({"error_class":"my class!","error_code":"429"})"));
  EXPECT_EQ(odd.records[0].kind, "http_429");
}

TEST(FitRecords, OtlpAResendCountPastAnySdkIsRefused) {
  // One span may not stand for more requests than any SDK retries.
  const std::string call = kChat + "," + attr("http.request.method", str("POST"));
  const auto resend = [](const std::string& n) { return attr("http.request.resend_count", "{\"intValue\":\"" + n + "\"}"); };
  EXPECT_EQ(read("r1.otlp", request(span("t", "a", "", "\"1\"", "{}", call + "," + resend("1000")))).records.size(),
            1001u);
  const std::string e = error_of("r2.otlp", request(span("t", "a", "", "\"1\"", "{}", call + "," + resend("1000000000000000"))));
  EXPECT_NE(e.find("http.request.resend_count = 1000000000000000 is out of range: it must be an integer in [0, 1000]"),
            std::string::npos)
      << e;
  // A status code alone does not make a call span record its attempts.
  const Read status_only = read("r3.otlp", request(span("t", "a", "", "\"1\"", "{}",
                                                        kChat + "," + attr("http.response.status_code", "{\"intValue\":200}"))));
  EXPECT_TRUE(has_note(status_only.stats, "per-call outcomes only"));
}

TEST(FitRecords, LiteLlm) {
  const Read r = read("l.jsonl",
                      "{\"id\":\"1\",\"trace_id\":\"A\",\"startTime\":1714564801.0,\"status\":\"success\"}\n"
                      "{\"id\":\"2\",\"trace_id\":\"A\",\"startTime\":1714564800.0,\"status\":\"failure\","
                      "\"error_information\":{\"error_class\":\"RateLimitError\",\"error_code\":\"429\"}}\n"
                      "{\"id\":\"3\",\"trace_id\":\"B\",\"startTime\":\"2024-05-01T12:00:00Z\",\"status\":\"failure\","
                      "\"error_information\":{\"error_class\":\"\",\"error_code\":503}}\n"
                      "{\"id\":\"4\",\"trace_id\":null,\"startTime\":1.0,\"status\":\"success\"}\n");
  EXPECT_EQ(r.stats.format, "litellm");
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].kind, "http_429");
  EXPECT_EQ(r.records[0].order, kNoon);
  EXPECT_FALSE(r.records[1].bad);
  EXPECT_EQ(r.records[2].kind, "http_503");
  EXPECT_EQ(r.stats.skipped.at("payloads without a trace_id"), 1);
  const std::string bad = error_of("l2.jsonl", "{\"trace_id\":\"A\",\"startTime\":1,\"status\":\"maybe\"}\n");
  EXPECT_NE(bad.find("l2.jsonl:1: \"status\""), std::string::npos) << bad;
}

TEST(FitRecords, ExplicitFormatMustMatch) {
  const std::string csv = "task,request,outcome\nt,0,ok\n";
  EXPECT_EQ(read("x.csv", csv, Format::csv).stats.format, "csv");
  EXPECT_NE(error_of("y.csv", csv, Format::otlp).find("--format otlp"), std::string::npos);
  EXPECT_NE(error_of("z.jsonl", "{\"foo\":1}\n").find("not one of the formats"), std::string::npos);
}

}  // namespace
}  // namespace relsim::fit
