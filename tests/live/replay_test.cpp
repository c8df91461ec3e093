// relsim serve --replay (docs/replay.md), in process. Exchanges recorded
// through relsim proxy in front of relsim's mock are replayed: every body
// byte for byte, each event its own chunk as recorded (the SSE framing),
// none sent before its recorded time times the pace; the plan's faults on
// top of a replay hold the oracle for relsim's client in both dialects; a
// request no recording matches gets a 404 in its dialect naming the
// nearest recording and the fields that differ, or with an upstream is
// forwarded, recorded and matched from then on; bad options are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "live_client_support.hpp"
#include "relsim/formats/recording.hpp"
#include "relsim/live/oracle.hpp"
#include "server_wire.hpp"
#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/run.hpp"

// Named, not anonymous: the live tests build as unity batches.
namespace relsim {
namespace replay_test {

using namespace relsim::test::server_wire;
using Ms = std::chrono::duration<double, std::milli>;

constexpr int kThreads = 8, kPerThread = 50;  // 400 exchanges, half in each dialect

// A server that answers every request of any task ok: chain mode with p = 0.
ServerConfig always_ok() {
  ServerConfig c = config_with();
  c.chain = RequestChainConfig{0.0, 0.0};
  return c;
}

// The request body; `run` goes into the Messages API's metadata, a volatile field the match leaves out.
std::string body_of(int thread, int i, bool openai, std::string_view run = "a") {
  return openai ? fmt::format(R"({{"model":"gpt-test","stream":true,"messages":[{{"role":"user","content":"{} {}"}}]}})",
                              thread, i)
                : fmt::format(R"({{"model":"claude-test","max_tokens":16,"stream":true,"metadata":{{"user_id":"{}"}},)"
                              R"("messages":[{{"role":"user","content":"{} {}"}}]}})",
                              run, thread, i);
}

std::string target_of(int thread, bool openai) {
  return fmt::format("/t/{}/v1/{}", thread, openai ? "chat/completions" : "messages");
}

// One exchange as a client saw it: the response, and when each chunk had
// arrived (ms since the request was sent).
struct Seen {
  Response r;
  std::vector<double> at;
};

Seen timed(Client& c, const std::string& bytes) {
  Seen s;
  const auto t0 = std::chrono::steady_clock::now();
  c.send(bytes);
  if (!read_head(c, s.r)) return s;
  while (!s.r.complete) {
    const std::size_t before = s.r.chunks.size();
    read_chunks(c, s.r, 1);
    if (s.r.chunks.size() == before && !s.r.complete) break;
    if (s.r.chunks.size() > before) s.at.push_back(Ms(std::chrono::steady_clock::now() - t0).count());
  }
  return s;
}

// Every thread's requests, each thread on its own task and connection; key (thread, i).
std::map<std::pair<int, int>, Seen> drive(int port, std::string_view run = "a", int per_thread = kPerThread) {
  std::vector<std::vector<Seen>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Client c(port);
      for (int i = 0; i < per_thread; ++i) {
        const bool openai = i % 2 == 1;
        got[t].push_back(timed(c, request("POST", target_of(t, openai), body_of(t, i, openai, run))));
      }
    });
  for (std::thread& th : threads) th.join();
  std::map<std::pair<int, int>, Seen> out;
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < per_thread; ++i) out[{t, i}] = std::move(got[t][i]);
  return out;
}

// Records kThreads x per_thread exchanges through a proxy in front of
// `upstream` (a URL); returns what the client got.
std::map<std::pair<int, int>, Seen> record_through(const std::string& upstream, const std::filesystem::path& dir,
                                                   int per_thread = kPerThread) {
  ServerConfig pc = always_ok();
  pc.upstream = parse_upstream(upstream);
  pc.record_dir = dir.string();
  Server proxy(pc);
  auto seen = drive(proxy.port(), "a", per_thread);
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(proxy.wait_finished(t, static_cast<std::size_t>(per_thread), kLimit));
  return seen;
}

// The same in front of relsim's mock, whose task t paces its events 1 + t ms apart.
std::map<std::pair<int, int>, Seen> record(const std::filesystem::path& dir, int per_thread = kPerThread) {
  Server upstream(config_with());
  for (int t = 0; t < kThreads; ++t)
    upstream.set_script(t, std::vector<ScriptEntry>(kPerThread, parse_script_entry(Json{{"kind", "ok"},
                                                                                          {"chunk_delay_ms", 1 + t}})));
  return record_through(fmt::format("http://127.0.0.1:{}/t/{{task}}", upstream.port()), dir, per_thread);
}

// The recordings of `dir` by (task, index).
std::map<std::pair<std::int64_t, std::int64_t>, RecordedExchange> by_request(const std::filesystem::path& dir) {
  std::map<std::pair<std::int64_t, std::int64_t>, RecordedExchange> out;
  for (RecordedExchange& x : read_recordings(dir.string())) out[{x.task, x.index}] = std::move(x);
  return out;
}

ServerConfig replaying(const std::filesystem::path& dir, double pace) {
  ServerConfig c = config_with();
  c.replay_dir = dir.string();
  c.replay_pace = pace;
  return c;
}

// Replays `dir` at pace 1 and checks each exchange against its recording
// and against what the client got from `upstream` through the proxy.
void expect_round_trip(const std::filesystem::path& dir, const std::map<std::pair<int, int>, Seen>& upstream,
                       std::string_view name) {
  const auto recorded = by_request(dir);
  ASSERT_EQ(recorded.size(), static_cast<std::size_t>(kThreads * kPerThread));
  std::map<std::pair<int, int>, Seen> replayed;
  {
    Server replay(replaying(dir, 1.0));
    replayed = drive(replay.port(), "b");  // another metadata.user_id
  }
  int within = 0, checked = 0, dialects[2] = {0, 0};
  double worst_late = 0.0;
  for (const auto& [key, seen] : replayed) {
    const auto [t, i] = key;
    SCOPED_TRACE(testing::Message() << "task " << t << " request " << i);
    const RecordedExchange& x = recorded.at({t, i});
    dialects[x.dialect == Dialect::openai] += 1;
    ASSERT_EQ(seen.r.status, 200);
    ASSERT_TRUE(seen.r.complete);
    EXPECT_EQ(seen.r.body, upstream.at(key).r.body);  // byte for byte what the upstream sent through the proxy
    ASSERT_EQ(seen.r.chunks.size(), x.events().size());
    ASSERT_EQ(seen.at.size(), x.events().size());
    for (std::size_t e = 0; e < x.events().size(); ++e) {
      EXPECT_EQ(seen.r.chunks[e], x.events()[e].second) << e;  // one chunk an event, as recorded
      const double want = x.events()[e].first;
      // The request left the client before the server read it: an event can only be late.
      EXPECT_GE(seen.at[e], want - 0.01) << e;
      EXPECT_LE(seen.at[e], want + 1000.0) << e;
      // The time to first token and each gap after it, against the recording's.
      const double got_gap = e == 0 ? seen.at[0] : seen.at[e] - seen.at[e - 1];
      const double want_gap = e == 0 ? want : want - x.events()[e - 1].first;
      within += std::abs(got_gap - want_gap) <= std::max(5.0, 0.1 * want_gap);
      ++checked;
      worst_late = std::max(worst_late, seen.at[e] - want);
    }
  }
  EXPECT_EQ(dialects[0], kThreads * kPerThread / 2);
  EXPECT_EQ(dialects[1], kThreads * kPerThread / 2);
  // A figure, not a bound (the machines are noisy): docs/replay.md quotes it.
  std::printf("replay timing (%s): %d of %d first-token times and gaps within 5 ms or 10%% of the recording; latest event "
              "%.1f ms after its recorded time\n",
              std::string(name).c_str(), within, checked, worst_late);
  ::testing::Test::RecordProperty(fmt::format("{}_timing_within", name), within);
  ::testing::Test::RecordProperty(fmt::format("{}_timing_checked", name), checked);
}

TEST(Replay, EveryBodyComesBackByteForByteAndNoEventBeforeItsTime) {
  const std::filesystem::path dir = test::scratch("replay_roundtrip") / "recordings";
  const auto upstream = record(dir);
  expect_round_trip(dir, upstream, "relsim serve");
}

// The same through an upstream written apart from relsim, in Python
// (tests/support/paced_upstream.py): its own bytes, framing and pacing.
TEST(Replay, AnUpstreamWrittenInPythonRoundTripsToo) {
  if (test::find_program("python3").empty()) RELSIM_SKIP_OR_FAIL("python3 is not on PATH");
  test::Background python({"python3", test::source_dir() + "/tests/support/paced_upstream.py"});
  const int port = test::port_from_banner(python.read_line(10));
  ASSERT_GT(port, 0);
  const std::filesystem::path dir = test::scratch("replay_python") / "recordings";
  const auto upstream = record_through(fmt::format("http://127.0.0.1:{}", port), dir);
  for (const auto& [key, seen] : upstream) ASSERT_EQ(seen.r.header("x-upstream"), "python");
  expect_round_trip(dir, upstream, "python");
}



TEST(Replay, PaceScalesTheRecordedTimesAndZeroSendsAtOnce) {
  const std::filesystem::path dir = test::scratch("replay_pace") / "recordings";
  const auto upstream = record(dir, 6);
  const auto recorded = by_request(dir);
  for (const double pace : {3.0, 0.0}) {
    SCOPED_TRACE(pace);
    Server replay(replaying(dir, pace));
    Client c(replay.port());
    const int t = kThreads - 1;  // 8 ms between events
    double spans = 0.0, recorded_spans = 0.0, ends = 0.0, recorded_ends = 0.0;
    for (int i = 0; i < 6; ++i) {
      const Seen s = timed(c, request("POST", target_of(t, i % 2 == 1), body_of(t, i, i % 2 == 1)));
      ASSERT_TRUE(s.r.complete);
      EXPECT_EQ(s.r.body, upstream.at({t, i}).r.body);
      const RecordedExchange& x = recorded.at({t, i});
      ASSERT_EQ(s.at.size(), x.events().size());
      for (std::size_t e = 0; e < s.at.size(); ++e) EXPECT_GE(s.at[e], pace * x.events()[e].first - 0.01) << e;
      spans += s.at.back() - s.at.front();
      recorded_spans += x.events().back().first - x.events().front().first;
      ends += s.at.back();
      recorded_ends += x.events().back().first;
    }
    // Bounds a load can only widen: at pace 3 the events keep at least half
    // their stretched spread (a replay that sent them together would not);
    // at pace 0 the six answers end in less than half their recorded time.
    if (pace > 0) EXPECT_GE(spans, 0.5 * pace * recorded_spans);
    else EXPECT_LT(ends, 0.5 * recorded_ends);
  }
}

// The reference experiment (p = 0.3, q = 0.8, r = 2, n = 2; every fault kind
// the oracle knows) over a replay of a clean recorded run.
TEST(Replay, ThePlansFaultsOverAReplayHoldTheOracleInBothDialects) {
  constexpr std::int64_t kTasks = 400;
  const Policy policy{.n = 2, .r = 2, .kind = PolicyKind::simple};
  const std::filesystem::path dir = test::scratch("replay_faults") / "recordings";
  ClientConfig client = test::live_client::config_for(policy, 0);
  client.concurrency = 16;
  // Long timeouts for the clean run (an answer a sanitizer slowed is not
  // given up on and recorded cut short), then 1 s over the replay: the
  // stalls wait it out, an ok answer through one server never does.
  client.timing.header_timeout = 5.0;
  client.timing.idle_timeout = 5.0;
  const auto run_both = [&](int port) {
    std::vector<LiveTask> out;
    client.port = static_cast<std::uint16_t>(port);
    for (const Dialect d : {Dialect::anthropic, Dialect::openai}) {
      client.dialect = d;
      for (LiveTask& t : run_live(client, d == Dialect::openai ? kTasks / 2 : 0, kTasks / 2)) out.push_back(std::move(t));
    }
    return out;
  };
  {  // the clean run, recorded: every task's n calls, each answered once
    Server upstream(always_ok());
    ServerConfig pc = always_ok();
    pc.upstream = parse_upstream(fmt::format("http://127.0.0.1:{}/t/{{task}}", upstream.port()));
    pc.record_dir = dir.string();
    Server proxy(pc);
    for (const LiveTask& t : run_both(proxy.port())) ASSERT_EQ(t.outcome.name(), "done") << t.task;
  }
  SimConfig sim;
  sim.tasks = kTasks;
  sim.kinds = parse_fault_weights("cut=1,no_stop=1,malformed=1,overloaded=1,stall=1,http_529=1,http_500=1,reset=1");
  const Plan plan = generate_plan(Model{.p = 0.3, .q = 0.8}, policy, sim);
  std::vector<LiveTask> live;
  std::int64_t sent = 0;
  std::string metrics;
  client.timing.header_timeout = 1.0;
  client.timing.idle_timeout = 1.0;
  {
    Server replay(replaying(dir, 0.0), plan);
    live = run_both(replay.port());
    for (const LiveTask& t : live) {
      sent += t.requests;
      ASSERT_TRUE(replay.wait_finished(t.task, static_cast<std::size_t>(t.requests), kLimit));
    }
    metrics = one_request(replay.port(), request("GET", "/metrics")).body;
  }
  ASSERT_EQ(live.size(), static_cast<std::size_t>(kTasks));
  int mismatches = 0, faults = 0, done = 0;
  for (const LiveTask& got : live) {
    const TaskPlan& task = plan.tasks[static_cast<std::size_t>(got.task)];
    const Prediction want = predict(policy, task, client.timing);
    for (std::int64_t j = 0; j < want.requests; ++j) faults += task.requests[static_cast<std::size_t>(j)].has_value();
    const bool same = got.outcome.name() == want.outcome.name() && got.requests == want.requests;
    mismatches += !same;
    EXPECT_TRUE(same) << "task " << got.task << ": live " << got.outcome.name() << " in " << got.requests
                      << ", oracle " << want.outcome.name() << " in " << want.requests << " (" << got.error << ")";
    if (want.outcome.outcome == Outcome::done) {
      ++done;
      EXPECT_EQ(got.text, expected_text(got.task)) << got.task;  // the task's own recorded answers
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(faults, 200);
  EXPECT_GT(done, 100);
  EXPECT_LT(done, kTasks);
  // Every request matched a recording: the faults answered before the
  // upstream's answer included (a fault is drawn after the match).
  for (const std::string d : {"anthropic", "openai"})
    EXPECT_NE(metrics.find(fmt::format("relsim_replay_requests_total{{dialect=\"{}\",result=\"missed\"}} 0", d)),
              std::string::npos)
        << metrics;
  std::printf("faults over replay: %zu tasks, %lld requests, %d faulted, %d done, %d oracle mismatches\n", live.size(),
              static_cast<long long>(sent), faults, done, mismatches);
}

TEST(Replay, ARequestNoRecordingMatchesIsA404NamingTheNearest) {
  const std::filesystem::path dir = test::scratch("replay_miss") / "recordings";
  record(dir, 6);
  Server replay(replaying(dir, 0.0));
  Client c(replay.port());
  std::string body = body_of(2, 4, false);
  body.replace(body.find("\"max_tokens\":16"), 15, "\"max_tokens\":17");
  const Response r = roundtrip(c, request("POST", target_of(2, false), body));
  expect_api_error(r, 404, "not_found_error");
  const std::string why = r.json()["error"]["message"].get<std::string>();
  EXPECT_NE(why.find(".jsonl:"), std::string::npos) << why;
  EXPECT_NE(why.find("(task 2, request 4), which differs in \"max_tokens\""), std::string::npos) << why;
  // The OpenAI dialect's error shape; the path without /t/{task}/ is task 0.
  std::string chat = body_of(0, 1, true);
  chat.replace(chat.find("gpt-test"), 8, "gpt-else");
  const Response o = roundtrip(c, request("POST", "/v1/chat/completions", chat));
  EXPECT_EQ(o.status, 404);
  EXPECT_EQ(o.json()["error"]["code"], "not_found") << o.body;
  EXPECT_NE(o.body.find("differs in \\\"model\\\""), std::string::npos) << o.body;
  const Response ok = roundtrip(c, request("POST", "/v1/chat/completions", body_of(0, 1, true)));
  EXPECT_EQ(ok.status, 200);
  EXPECT_TRUE(ok.complete);
}

// Hand-written recordings: an upstream that failed before its headers, one
// that broke off mid-stream, a whole JSON answer (broken by a no_stop entry
// as the proxy breaks one) and a 529 with the reason phrase the proxy sends.
TEST(Replay, RecordedBreaksAndWholeAnswersReplayAsTheyCame) {
  const auto exchange = [](std::string body, Dialect dialect) {
    RecordedExchange x;
    x.dialect = dialect;
    x.entry = "ok";
    x.method = "POST";
    x.path = dialect == Dialect::openai ? "/v1/chat/completions" : "/v1/messages";
    x.request_body = std::move(body);
    x.headers_ms = 2.0;
    return x;
  };
  RecordedExchange failed = exchange(R"({"n":1})", Dialect::anthropic);
  failed.error = "upstream http://127.0.0.1:9 failed before its headers: Connection refused";
  failed.finish(false, 2.0);
  RecordedExchange broke = exchange(R"({"n":2})", Dialect::anthropic);
  broke.status = 200;
  broke.response_headers = {{"content-type", "text/event-stream"}};
  broke.set_event_stream(true);
  broke.add_body("event: message_start\ndata: {\"type\":\"message_start\"}\n\n", 3.0);
  broke.finish(false, 4.0);
  broke.error = "upstream http://127.0.0.1:9 broke off after 52 bytes: end of stream";
  const std::string completion =
      R"({"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},)"
      R"("finish_reason":"stop"}]})";
  RecordedExchange whole = exchange(R"({"n":3})", Dialect::openai);
  whole.status = 200;
  whole.response_headers = {{"content-type", "application/json"}, {"content-length", "999"}};
  whole.add_body(completion, 3.0);
  whole.finish(true, 4.0);
  RecordedExchange busy = exchange(R"({"n":4})", Dialect::anthropic);
  busy.status = 529;
  busy.response_headers = {{"content-type", "application/json"}};
  busy.add_body(R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})", 3.0);
  busy.finish(true, 3.0);
  const std::filesystem::path dir = test::scratch("replay_breaks") / "recordings";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "hand.jsonl") << failed.line() << "\n" << broke.line() << "\n" << whole.line() << "\n"
                                     << busy.line() << "\n";

  Server replay(replaying(dir, 0.0));
  replay.set_script(1, script_of({"no_stop", "ok"}));
  const Response r502 = one_request(replay.port(), request("POST", "/t/0/v1/messages", R"({"n":1})"));
  expect_api_error(r502, 502, "api_error");
  EXPECT_NE(r502.body.find("Connection refused"), std::string::npos) << r502.body;
  const Response cut = one_request(replay.port(), request("POST", "/t/0/v1/messages", R"({"n":2})"));
  EXPECT_EQ(cut.status, 200);
  EXPECT_FALSE(cut.complete);  // closed without the terminating chunk, as the upstream broke off
  EXPECT_EQ(cut.body, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n");
  Client c(replay.port());
  const Response no_stop = roundtrip(c, request("POST", "/t/1/v1/chat/completions", R"({"n":3})"));
  EXPECT_EQ(no_stop.status, 200);
  EXPECT_EQ(no_stop.header("content-length"), std::to_string(no_stop.body.size()));  // its own length, not the recorded one
  EXPECT_TRUE(no_stop.json()["choices"][0]["finish_reason"].is_null()) << no_stop.body;
  const Response ok = roundtrip(c, request("POST", "/t/1/v1/chat/completions", R"({"n":3})"));
  EXPECT_EQ(ok.body, completion);
  c.send(request("POST", "/t/0/v1/messages", R"({"n":4})"));
  c.fill();
  EXPECT_EQ(c.buf.rfind("HTTP/1.1 529 Overloaded\r\n", 0), 0u) << c.buf.substr(0, 80);
}

TEST(Replay, WithAnUpstreamAMissIsRecordedAndMatchedFromThen) {
  const std::filesystem::path dir = test::scratch("replay_on_miss") / "recordings";
  Server upstream(always_ok());
  ServerConfig c = replaying(dir, 0.0);
  c.upstream = parse_upstream(fmt::format("http://127.0.0.1:{}/t/{{task}}", upstream.port()));
  c.record_dir = dir.string();
  std::string first;
  {
    Server replay(c);
    Client cl(replay.port());
    first = roundtrip(cl, request("POST", target_of(3, false), body_of(3, 0, false))).body;
    const Response again = roundtrip(cl, request("POST", target_of(3, false), body_of(3, 0, false)));
    EXPECT_EQ(again.body, first);
    const std::string m = one_request(replay.port(), request("GET", "/metrics")).body;
    EXPECT_NE(m.find("relsim_replay_requests_total{dialect=\"anthropic\",result=\"matched\"} 1"), std::string::npos) << m;
    EXPECT_NE(m.find("relsim_replay_requests_total{dialect=\"anthropic\",result=\"missed\"} 1"), std::string::npos) << m;
    EXPECT_EQ(upstream.log(3).requests.size(), 1u);  // the second never reached the upstream
  }
  EXPECT_EQ(read_recordings(dir.string()).size(), 1u);
  Server offline(replaying(dir, 0.0));  // and offline, from the disk
  Client cl(offline.port());
  EXPECT_EQ(roundtrip(cl, request("POST", target_of(3, false), body_of(3, 0, false))).body, first);
}

TEST(Replay, BadOptionsAndRecordingsAreRefused) {
  test::expect_input_error("serve --port 0 --pace 2", "--pace applies to a replay: give --replay DIR too");
  test::expect_input_error("serve --port 0 --match model", "--match applies to a replay");
  test::expect_input_error("serve --port 0 --upstream http://127.0.0.1:9", "--upstream applies to a replay");
  const std::filesystem::path good = test::write_temp("replay_bad_empty", "a.jsonl", "").parent_path();
  test::expect_input_error({"serve", "--port", "0", "--replay", good.string(), "--pace", "2000"},
                           "pace = 2000 is out of range: it must be in [0, 1000]");
  test::expect_input_error({"serve", "--port", "0", "--replay", good.string()}, "holds no recording");
  const std::string line = R"({"relsim_recording": 1, "dialect": "anthropic", "task": 0, "index": 0, "entry": "ok",)"
                           R"( "request": {"method": "POST", "path": "/v1/messages", "headers": [], "body": "{\"model\":\"m\"}"},)"
                           R"( "response": {"status": 200, "headers": [], "headers_ms": 1, "body": "{}", "complete": true,)"
                           R"( "end_ms": 2}})";
  const std::filesystem::path cut = test::write_temp("replay_bad_cut", "a.jsonl", line + "\n" + line.substr(0, 40));
  test::expect_input_error({"serve", "--port", "0", "--replay", cut.parent_path().string()},
                           cut.string() + ":2: not a JSON object (a line cut short?)");
  std::string v2 = line;
  v2.replace(v2.find("1,"), 1, "2");
  const std::filesystem::path other = test::write_temp("replay_bad_v2", "a.jsonl", v2 + "\n");
  test::expect_input_error({"serve", "--port", "0", "--replay", other.parent_path().string()},
                           other.string() + ":1: recording version 2: this relsim reads version 1");
  const std::filesystem::path one = test::write_temp("replay_bad_one", "a.jsonl", line + "\n");
  test::expect_input_error({"serve", "--port", "0", "--replay", one.parent_path().string(), "--match", "model,tools"},
                           "--match 'tools' is in no recording's request body (1 exchanges)");
}

}  // namespace replay_test
}  // namespace relsim
