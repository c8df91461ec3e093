// The server's side of auditing a client (docs/wire.md): GET /control/tasks,
// POST /control/tasks/{task}/outcome, the exhausted reply, and the request
// log (JSON Lines) in its file and at GET /control/log, down to a SIGTERM of
// `relsim serve --log` with replies still held. As in server_test.cpp,
// nothing sleeps or asserts on timing: tests wait on conditions
// (wait_held, wait_finished, a log that shows a request), each with a 10 s
// safety limit that only turns a server bug into a failure instead of a hang.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/live/plan.hpp"
#include "relsim/live/server/server.hpp"
#include "support/journal.hpp"
#include "support/raw_client.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using relsim::Json;
using relsim::Server;
using relsim::ServerConfig;
using relsim::script_of;
using namespace std::chrono_literals;

constexpr auto kLogLimit = 10s;

using Client = relsim::test::RawClient;

struct LogReply {
  int status = 0;
  std::string head, body;
  bool has(std::string_view header_line) const { return head.find(header_line) != std::string::npos; }
  Json json() const { return Json::parse(body, nullptr, false); }
};

const std::string kLogBody = R"({"model":"m","max_tokens":8,"stream":true,"messages":[{"role":"user","content":"hi"}]})";

std::string log_request(std::string_view method, std::string_view target, std::string_view body = "",
                        std::string_view extra = "") {
  return fmt::format("{} {} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\n{}\r\n{}", method, target,
                     body.size(), extra, body);
}
std::string log_message(std::int64_t task, std::string_view extra = "", std::string_view body = kLogBody) {
  return log_request("POST", fmt::format("/t/{}/v1/messages", task), body, extra);
}

// One request on its own connection (connection: close), read to the end.
LogReply call(int port, std::string_view method, std::string_view target, std::string_view body = "",
              std::string extra = "") {
  Client c(port);
  c.send(log_request(method, target, body, extra + "connection: close\r\n"));
  while (c.fill()) {
  }
  LogReply r;
  const auto end = c.buf.find("\r\n\r\n");
  if (c.buf.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return r;
  r.status = std::stoi(c.buf.substr(9, 3));
  r.head = c.buf.substr(0, end + 2);
  r.body = c.buf.substr(end + 4);
  return r;
}
LogReply post_outcome(int port, std::int64_t task, std::string_view body) {
  return call(port, "POST", fmt::format("/control/tasks/{}/outcome", task), body);
}

using relsim::test::json_lines;
std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
std::vector<Json> requests_of(const std::vector<Json>& lines) {
  std::vector<Json> out;
  for (std::size_t i = 1; i < lines.size(); ++i)
    if (!lines[i].contains("outcome")) out.push_back(lines[i]);
  return out;
}

// A folder of its own per test, removed at the end.
class Dir {
 public:
  Dir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            fmt::format("relsim_control_log_test.{}.{}.{}", ::getpid(), info->test_suite_name(), info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

ServerConfig log_config(const std::string& log_path = "") {
  ServerConfig c;
  c.threads = 2;
  c.log_path = log_path;
  return c;
}

relsim::Plan plan_of(std::int64_t tasks) {
  relsim::Plan plan;
  plan.header = Json{{"relsim_plan", 1}, {"tasks", tasks}, {"source", "scripted"}, {"n", 2}, {"r", 1}};
  for (std::int64_t t = 0; t < tasks; ++t) plan.tasks.push_back({t, {std::nullopt, relsim::FaultKind::cut}});
  return plan;
}

// --- GET /control/tasks ------------------------------------------------------------

TEST(ControlTasks, ListsThePlansTasksInOrderWithBaseUrlsCallsAndHeader) {
  const relsim::Plan plan = plan_of(3);
  Server server(log_config(), plan);
  server.set_script(10, script_of({"ok"}));  // a task set by hand is listed too
  const LogReply r = call(server.port(), "GET", "/control/tasks");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = r.json();
  ASSERT_EQ(j["tasks"].size(), 4u) << r.body;
  const std::vector<std::int64_t> want = {0, 1, 2, 10};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(j["tasks"][i]["task"], want[i]);
    EXPECT_EQ(j["tasks"][i]["base_url"], fmt::format("http://127.0.0.1:{}/t/{}", server.port(), want[i]));
  }
  EXPECT_EQ(j["calls"], 2);
  EXPECT_EQ(j["plan"], plan.header);
}

TEST(ControlTasks, WithoutAPlanCallsAndPlanAreNull) {
  Server server(log_config());
  const Json empty = call(server.port(), "GET", "/control/tasks").json();
  EXPECT_EQ(empty, (Json{{"tasks", Json::array()}, {"calls", nullptr}, {"plan", nullptr}}));
  server.set_script(4, script_of({"ok"}));
  const Json j = call(server.port(), "GET", "/control/tasks").json();
  ASSERT_EQ(j["tasks"].size(), 1u);
  EXPECT_EQ(j["tasks"][0]["task"], 4);
  EXPECT_TRUE(j["calls"].is_null());
}

TEST(ControlTasks, APlanHeaderWithoutNHasNullCalls) {
  relsim::Plan plan = plan_of(1);
  plan.header.erase("n");
  Server server(log_config());
  server.load_plan(plan);
  const Json j = call(server.port(), "GET", "/control/tasks").json();
  EXPECT_TRUE(j["calls"].is_null());
  EXPECT_EQ(j["plan"], plan.header);
}

TEST(ControlTasks, OtherMethodsAre405AndUnknownPathsStill404) {
  Server server(log_config());
  const LogReply r = call(server.port(), "POST", "/control/tasks");
  EXPECT_EQ(r.status, 405);
  EXPECT_TRUE(r.has("allow: GET")) << r.head;
  EXPECT_EQ(call(server.port(), "DELETE", "/control/log").status, 405);
  const LogReply unknown = call(server.port(), "GET", "/control/tasks/1/nothing");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(unknown.body.find("/control/tasks/{task}/script|log|release|outcome"), std::string::npos) << unknown.body;
}

// --- POST /control/tasks/{task}/outcome ------------------------------------------------

TEST(ControlOutcome, EveryWordIsTakenAndEveryReportLogged) {
  Server server(log_config());
  server.set_script(3, script_of({"ok"}));
  for (const auto word : relsim::kOutcomeWords) {
    const auto r = post_outcome(server.port(), 3, fmt::format(R"({{"outcome": "{}", "detail": "saw {}"}})", word, word));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (Json{{"task", 3}, {"outcome", std::string(word)}}));
  }
  EXPECT_EQ(post_outcome(server.port(), 3, R"({"outcome": "crash"})").status, 200);  // detail is optional
  const auto lines = json_lines(call(server.port(), "GET", "/control/log").body);
  ASSERT_EQ(lines.size(), 1 + relsim::kOutcomeWords.size() + 1);
  for (std::size_t i = 0; i < relsim::kOutcomeWords.size(); ++i) {
    const Json& l = lines[1 + i];
    EXPECT_EQ(l["task"], 3);
    EXPECT_EQ(l["outcome"], std::string(relsim::kOutcomeWords[i]));
    EXPECT_EQ(l["detail"], fmt::format("saw {}", relsim::kOutcomeWords[i]));
    EXPECT_TRUE(l["received_ms"].is_number());
  }
  EXPECT_EQ(lines.back()["detail"], "");
}

TEST(ControlOutcome, BadBodiesAre400NamingTheProblem) {
  Server server(log_config());
  server.set_script(3, script_of({"ok"}));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "must be a JSON object"},
      {"[1, 2]", "must be a JSON object"},
      {R"("done")", "must be a JSON object"},
      {"{}", "no \"outcome\" string"},
      {R"({"outcome": 3})", "no \"outcome\" string"},
      {R"({"outcome": null})", "no \"outcome\" string"},
      {R"({"outcome": "nope"})",
       "outcome 'nope' is not an outcome: use one of done, env_error, harness_error, crash, hang, partial_done"},
      {R"({"outcome": "DONE"})", "outcome 'DONE' is not an outcome"},
      {R"({"outcome": "done", "detail": 5})", "detail = 5 is not a string"},
      {R"({"outcome": "done", "detail": {"a": 1}})", "is not a string"},
      {R"({"outcome": "done", "extra": 1})", "field 'extra' is unknown: use outcome, detail"},
      {"{\"outcome\": \"done\", \"detail\": \"\xff\xfe\"}", "must be a JSON object"},  // not UTF-8: not JSON
      {std::string(5000, '['), "must be a JSON object"},
  };
  for (const auto& [body, want] : cases) {
    const LogReply r = post_outcome(server.port(), 3, body);
    EXPECT_EQ(r.status, 400) << body;
    const Json j = r.json();
    ASSERT_TRUE(j.is_object()) << r.body;
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    EXPECT_NE(j["error"]["message"].get<std::string>().find(want), std::string::npos)
        << body.substr(0, 80) << " -> " << r.body;
  }
  // Nothing was logged but the header.
  EXPECT_EQ(json_lines(call(server.port(), "GET", "/control/log").body).size(), 1u);
}

TEST(ControlOutcome, ATaskWithoutAScriptIs404AndGetIs405) {
  Server server(log_config());
  server.set_script(3, script_of({"ok"}));
  const LogReply r = post_outcome(server.port(), 4, R"({"outcome": "done"})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.json()["error"]["type"], "not_found_error");
  EXPECT_NE(r.body.find("task 4 has no script"), std::string::npos) << r.body;
  const LogReply get = call(server.port(), "GET", "/control/tasks/3/outcome");
  EXPECT_EQ(get.status, 405);
  EXPECT_TRUE(get.has("allow: POST"));
  EXPECT_EQ(json_lines(call(server.port(), "GET", "/control/log").body).size(), 1u);
}

TEST(ControlOutcome, AHugeDetailIsCutTo1000BytesOnACharacterBoundary) {
  Server server(log_config());
  server.set_script(0, script_of({"ok"}));
  // 999 ASCII bytes then two-byte characters: byte 1000 would split one.
  const std::string detail = std::string(999, 'a') + [] {
    std::string s;
    for (int i = 0; i < 100'000; ++i) s += "\xc3\xa9";
    return s;
  }();
  const LogReply r = post_outcome(server.port(), 0, Json{{"outcome", "hang"}, {"detail", detail}}.dump());
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 200);
  const auto lines = json_lines(call(server.port(), "GET", "/control/log").body);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["detail"], std::string(999, 'a'));
  const std::string ascii(100'000, 'x');
  ASSERT_EQ(post_outcome(server.port(), 0, Json{{"outcome", "done"}, {"detail", ascii}}.dump()).status, 200);
  EXPECT_EQ(json_lines(call(server.port(), "GET", "/control/log").body).back()["detail"], std::string(1000, 'x'));
}

// --- the exhausted reply -------------------------------------------------------------

TEST(ControlLog, AnExhaustedScriptIsA404SayingWhyAndALineMarkedExhausted) {
  Server server(log_config());
  server.set_script(1, script_of({"ok", "http_529"}));
  Client c(server.port());
  c.send(log_message(1) + log_message(1) + log_message(1, "x-stainless-retry-count: 2\r\n") + log_message(1));
  ASSERT_TRUE(server.wait_finished(1, 4, kLogLimit));
  const std::string want =
      "the script of task 1 is exhausted after 2 requests: the client sent more requests than the plan holds "
      "(make the plan with relsim plan --max-requests)";
  ASSERT_TRUE(c.read_until("message_stop"));
  ASSERT_TRUE(c.read_until("HTTP/1.1 529"));
  ASSERT_TRUE(c.read_until(want));
  const auto lines = requests_of(json_lines(call(server.port(), "GET", "/control/log").body));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["entry"], "ok");
  EXPECT_FALSE(lines[0].contains("exhausted"));
  for (int i : {2, 3}) {
    const Json& l = lines[i];
    EXPECT_EQ(l["task"], 1);
    EXPECT_EQ(l["index"], i);  // exhausted requests count too
    EXPECT_TRUE(l["entry"].is_null());
    EXPECT_EQ(l["exhausted"], true);
    EXPECT_EQ(l["status"], 404);
    EXPECT_EQ(l["end"], "complete");
  }
  EXPECT_EQ(lines[2]["retry_count"], "2");
  EXPECT_TRUE(lines[3]["retry_count"].is_null());
  EXPECT_EQ(server.log(1).requests.at(3).index, 3);
  // A new script goes on from the next index.
  server.set_script(1, script_of({"ok"}));
  Client d(server.port());
  d.send(log_message(1));
  ASSERT_TRUE(d.read_until("msg_relsim_1_4"));
}

// --- the request log ----------------------------------------------------------------

TEST(ControlLog, EachRequestIsOneLineWithEveryFieldAndTheFileEqualsGetControlLog) {
  Dir dir;
  const fs::path file = dir / "requests.jsonl";
  Server server(log_config(file.string()), plan_of(2));
  Client c(server.port());
  c.send(log_message(0, "x-stainless-retry-count: 0\r\n") + log_message(0, "X-Stainless-Retry-Count: 1\r\n"));
  ASSERT_TRUE(server.wait_finished(0, 2, kLogLimit));
  // Refused before taking an entry: logged with index and entry null.
  EXPECT_EQ(call(server.port(), "GET", "/t/1/v1/messages").status, 405);
  EXPECT_EQ(call(server.port(), "POST", "/t/1/v1/messages", "not json").status, 400);
  EXPECT_EQ(call(server.port(), "POST", "/t/1/v1/messages", R"({"stream": false})").status, 400);
  // A task without a script: not logged at all.
  EXPECT_EQ(call(server.port(), "POST", "/t/7/v1/messages", kLogBody).status, 404);
  ASSERT_TRUE(server.wait_finished(1, 3, kLogLimit));

  const LogReply log = call(server.port(), "GET", "/control/log");
  ASSERT_EQ(log.status, 200);
  EXPECT_TRUE(log.has("content-type: application/x-ndjson")) << log.head;
  EXPECT_FALSE(log.has("x-relsim-log-left-out"));
  EXPECT_EQ(read_file(file), log.body);  // the same lines, in the same order, already on disk
  const auto lines = json_lines(log.body);
  ASSERT_EQ(lines.size(), 6u) << log.body;
  EXPECT_EQ(lines[0], (Json{{"relsim_log", 1}, {"port", server.port()}, {"plan_tasks", 2}}));
  const Json& first = lines[1];
  std::vector<std::string> keys;
  for (const auto& [k, v] : first.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"task", "index", "entry", "status", "end", "received_ms", "finished_ms",
                                            "retry_count", "body_bytes"}));
  EXPECT_EQ(first["task"], 0);
  EXPECT_EQ(first["index"], 0);
  EXPECT_EQ(first["entry"], "ok");
  EXPECT_EQ(first["status"], 200);
  EXPECT_EQ(first["end"], "complete");
  EXPECT_EQ(first["retry_count"], "0");
  EXPECT_EQ(first["body_bytes"], kLogBody.size());
  EXPECT_LE(first["received_ms"].get<double>(), first["finished_ms"].get<double>());
  EXPECT_EQ(lines[2]["index"], 1);
  EXPECT_EQ(lines[2]["entry"], "cut");
  EXPECT_EQ(lines[2]["end"], "closed");
  EXPECT_EQ(lines[2]["retry_count"], "1");
  const std::vector<int> refused = {405, 400, 400};
  for (std::size_t i = 0; i < refused.size(); ++i) {
    const Json& l = lines[3 + i];
    EXPECT_EQ(l["task"], 1);
    EXPECT_TRUE(l["index"].is_null());
    EXPECT_TRUE(l["entry"].is_null());
    EXPECT_EQ(l["status"], refused[i]);
    EXPECT_EQ(l["end"], "complete");
    EXPECT_TRUE(l["retry_count"].is_null());
  }
  EXPECT_EQ(lines[3]["body_bytes"], 0);
  EXPECT_EQ(lines[4]["body_bytes"], 8);
}

TEST(ControlLog, ShapedEntriesAreLoggedInTheirObjectForm) {
  Server server(log_config());
  auto script = script_of({"ok"});
  script[0].chunk_delay_ms = 1;
  server.set_script(2, script);
  Client c(server.port());
  c.send(log_message(2));
  ASSERT_TRUE(server.wait_finished(2, 1, kLogLimit));
  const auto lines = json_lines(call(server.port(), "GET", "/control/log").body);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["entry"], (Json{{"kind", "ok"}, {"chunk_delay_ms", 1}}));
}

TEST(ControlLog, TheFileKeepsEveryLineWhenMemoryIsCapped) {
  Dir dir;
  const fs::path file = dir / "requests.jsonl";
  ServerConfig config = log_config(file.string());
  config.max_log_bytes = 100;  // the header fits, request lines do not
  Server server(config);
  server.set_script(0, script_of({"ok", "ok", "ok"}));
  Client c(server.port());
  c.send(log_message(0) + log_message(0) + log_message(0));
  // The request lines are left out of memory: wait (on the count the reply
  // reports) until all three are written.
  auto left_out = [&](int n) {
    const std::string want = fmt::format("x-relsim-log-left-out: {}\r\n", n);
    for (auto until = std::chrono::steady_clock::now() + kLogLimit; std::chrono::steady_clock::now() < until;
         std::this_thread::yield())
      if (call(server.port(), "GET", "/control/log").has(want)) return true;
    return false;
  };
  ASSERT_TRUE(left_out(3));
  ASSERT_EQ(post_outcome(server.port(), 0, R"({"outcome": "done"})").status, 200);
  ASSERT_TRUE(left_out(4));
  EXPECT_EQ(json_lines(call(server.port(), "GET", "/control/log").body).size(), 1u);
  server.stop();
  const auto lines = json_lines(read_file(file));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(requests_of(lines).size(), 3u);
  EXPECT_EQ(lines.back()["outcome"], "done");
}

TEST(ControlLog, AnUnwritableFileIsAnInputErrorBeforeListening) {
  Dir dir;
  EXPECT_THROW(Server(log_config((dir / "no/such/folder/requests.jsonl").string())), relsim::InputError);
  const relsim::test::RunResult r =
      relsim::test::run_relsim({"serve", "--port", "0", "--log", (dir / "no/such/folder/x.jsonl").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("--log"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot be written"), std::string::npos) << r.err;
}

// Every request of a stopped in-process server is in the file exactly once:
// the held ones end "stopped" (a stall with its 200, slow headers with no
// status line), the others as they ended.
TEST(ControlLog, StopWritesTheHeldRequestsAsStoppedAndEveryRequestOnce) {
  Dir dir;
  const fs::path file = dir / "requests.jsonl";
  Server server(log_config(file.string()));
  server.set_script(0, script_of({"http_529", "stall"}));
  server.set_script(1, script_of({"slow_headers"}));
  server.set_script(2, script_of({"ok"}));
  Client a(server.port()), b(server.port()), d(server.port());
  a.send(log_message(0) + log_message(0));
  b.send(log_message(1));
  d.send(log_message(2));
  ASSERT_TRUE(server.wait_held(0, 1, kLogLimit));
  ASSERT_TRUE(server.wait_held(1, 1, kLogLimit));
  ASSERT_TRUE(server.wait_finished(2, 1, kLogLimit));
  server.stop();
  const auto lines = json_lines(read_file(file));
  const auto requests = requests_of(lines);
  ASSERT_EQ(requests.size(), 4u) << read_file(file);
  std::map<std::pair<std::int64_t, std::int64_t>, Json> by_key;
  for (const Json& r : requests)
    EXPECT_TRUE(by_key.emplace(std::pair{r["task"].get<std::int64_t>(), r["index"].get<std::int64_t>()}, r).second)
        << r;
  EXPECT_EQ(by_key.at({0, 0})["end"], "complete");
  EXPECT_EQ(by_key.at({0, 1})["end"], "stopped");
  EXPECT_EQ(by_key.at({0, 1})["status"], 200);
  EXPECT_EQ(by_key.at({1, 0})["end"], "stopped");
  EXPECT_EQ(by_key.at({1, 0})["status"], 0);
  EXPECT_EQ(by_key.at({2, 0})["end"], "complete");
  server.stop();  // again: nothing more is written
  EXPECT_EQ(json_lines(read_file(file)).size(), lines.size());
}

// --- relsim serve --plan P --log F, ended by SIGTERM ------------------------------------------

// Polls the task's log until it shows `count` requests (a condition, with a safety limit).
bool wait_logged(int port, std::int64_t task, std::size_t count) {
  const auto until = std::chrono::steady_clock::now() + kLogLimit;
  while (std::chrono::steady_clock::now() < until) {
    const Json j = call(port, "GET", fmt::format("/control/tasks/{}/log", task)).json();
    std::size_t ended = 0;
    if (j.is_object())
      for (const Json& r : j["requests"]) ended += !r["end"].is_null();
    if (ended >= count) return true;
    std::this_thread::yield();
  }
  return false;
}

TEST(ServeLog, SigtermWritesTheHeldStallAsStoppedAndEveryRequestOnce) {
  Dir dir;
  const std::string plan = (dir / "plan.jsonl").string(), log = (dir / "requests.jsonl").string();
  const auto made = relsim::test::run_relsim({"plan", "--p", "0.3", "--r", "1", "--n", "1", "--tasks", "3",
                                              "--policy", "simple", "--fault", "stall", "--times", "once", "--out",
                                              plan});
  ASSERT_EQ(made.code, 0) << made.err;
  relsim::test::Background serve({relsim::test::relsim_exe(), "serve", "--port", "0", "--plan", plan, "--log", log});
  const int port = relsim::test::port_from_banner(serve.read_line(10));
  ASSERT_GT(port, 0);

  Client held(port);  // task 0's first entry is a stall: two events, then held until the stop
  held.send(log_message(0, "x-stainless-retry-count: 0\r\n"));
  ASSERT_TRUE(held.read_until("content_block_start"));
  ASSERT_EQ(call(port, "POST", "/control/tasks/2/script", R"({"responses": ["http_529", "ok"]})").status, 200);
  EXPECT_EQ(call(port, "POST", "/t/2/v1/messages", kLogBody).status, 529);
  EXPECT_EQ(call(port, "POST", "/t/2/v1/messages", kLogBody).status, 200);
  EXPECT_EQ(call(port, "POST", "/t/2/v1/messages", kLogBody).status, 404);  // exhausted
  EXPECT_EQ(call(port, "GET", "/t/1/v1/messages").status, 405);
  EXPECT_EQ(call(port, "POST", "/t/99/v1/messages", kLogBody).status, 404);  // no script: not logged
  EXPECT_EQ(post_outcome(port, 2, R"({"outcome": "partial_done", "detail": "half"})").status, 200);
  ASSERT_TRUE(wait_logged(port, 2, 3));
  ASSERT_TRUE(wait_logged(port, 1, 1));
  EXPECT_EQ(read_file(log), call(port, "GET", "/control/log").body);  // on disk as it happens

  EXPECT_EQ(serve.stop(SIGTERM), 0);
  EXPECT_FALSE(serve.signaled());
  const auto lines = json_lines(read_file(log));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], (Json{{"relsim_log", 1}, {"port", port}, {"plan_tasks", 3}}));
  const auto requests = requests_of(lines);
  ASSERT_EQ(requests.size(), 5u) << read_file(log);
  std::set<std::tuple<std::int64_t, std::int64_t, int>> seen;  // (task, index, status)
  for (const Json& r : requests) {
    const std::int64_t index = r["index"].is_null() ? -1 : r["index"].get<std::int64_t>();
    EXPECT_TRUE(seen.emplace(r["task"].get<std::int64_t>(), index, r["status"].get<int>()).second) << r;
  }
  const Json& stall = *std::find_if(requests.begin(), requests.end(), [](const Json& r) { return r["task"] == 0; });
  EXPECT_EQ(stall["entry"], "stall");
  EXPECT_EQ(stall["index"], 0);
  EXPECT_EQ(stall["status"], 200);
  EXPECT_EQ(stall["end"], "stopped");
  EXPECT_EQ(stall["retry_count"], "0");
  EXPECT_GE(stall["finished_ms"].get<double>(), stall["received_ms"].get<double>());
  EXPECT_EQ(seen.count({2, 2, 404}), 1u);
  EXPECT_EQ(seen.count({1, -1, 405}), 1u);
  std::size_t outcomes = 0;
  for (const Json& l : lines) outcomes += l.contains("outcome");
  EXPECT_EQ(outcomes, 1u);
  held.read_until("never");  // the stop closed the held connection
}

}  // namespace
