// The server's request log (JSON Lines) for auditing a client (docs/wire.md):
// the exhausted reply and its line, every field of a line, the file equal to
// GET /control/log, shaped entries, a memory cap, an unwritable file, stop
// with replies still held, down to a SIGTERM of `relsim serve --log`. As in
// server_test.cpp and its siblings, nothing sleeps or asserts on timing: tests
// wait on conditions (wait_held, wait_finished, a log that shows a request),
// each with a 10 s safety limit that only turns a server bug into a failure
// instead of a hang. The control endpoints are in control_test.cpp.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "live/control_support.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/http_text.hpp"
#include "relsim/server/server.hpp"
#include "support/run.hpp"

namespace control_log_test {

using namespace relsim::test::control;

namespace fs = std::filesystem;

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
  EXPECT_EQ(lines[0], (Json{{"relsim_log", 1}, {"port", server.port()}, {"plan_tasks", 2}, {"retry_after", "0"},
                           {"retry_after_ms", nullptr}}));
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

// The server writes a request's line as text itself (request_journal.cpp),
// not through a Json object: each line must be exactly what the JSON
// library writes for the values it holds (read back, written again: the
// same bytes), with shaped entries, an exhausted script, nulls and a retry
// count that needs escaping (a quote, a backslash, a tab, UTF-8, and a byte
// that is not UTF-8, written as U+FFFD).
// `text` with every number written the shortest way that reads back as the
// same double (fmt's). The JSON library's writer (Grisu2) is not always the
// shortest: it may write 14.692469 as 14.692468999999999, the same double.
std::string shortest_numbers(const std::string& text) {
  static const std::regex number(R"(-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  std::string out;
  auto at = text.cbegin();
  for (std::sregex_iterator m(text.begin(), text.end(), number), end; m != end; ++m) {
    out.append(at, (*m)[0].first);
    out += fmt::format("{}", std::stod(m->str()));
    at = (*m)[0].second;
  }
  return out.append(at, text.cend());
}

TEST(ControlLog, EveryLineIsTheTextTheJsonLibraryWritesForItsValues) {
  Server server(log_config());
  auto script = script_of({"ok", "http_529", "ok"});
  script[0].chunk_delay_ms = 1;
  script[2].bytes_per_second = 1e6;
  server.set_script(3, script);
  Client c(server.port());
  c.send(log_message(3, "x-stainless-retry-count: a\"b\\c\td \xc3\xa9 \xff\r\n") + log_message(3) +
         log_message(3, "x-stainless-retry-count: 12\r\n") + log_message(3));
  ASSERT_TRUE(server.wait_finished(3, 4, kLogLimit));
  EXPECT_EQ(call(server.port(), "GET", "/t/3/v1/messages").status, 405);
  ASSERT_TRUE(server.wait_finished(3, 5, kLogLimit));
  const std::string body = call(server.port(), "GET", "/control/log").body;
  std::vector<std::string> texts;
  for (std::size_t at = 0, end; (end = body.find('\n', at)) != std::string::npos; at = end + 1)
    texts.push_back(body.substr(at, end - at));
  ASSERT_EQ(texts.size(), 6u) << body;
  for (const std::string& text : texts)
    EXPECT_EQ(shortest_numbers(relsim::http_text::json_text(Json::parse(text))), shortest_numbers(text));
  const auto lines = json_lines(body);
  EXPECT_EQ(lines[1]["retry_count"], "a\"b\\c\td \xc3\xa9 \xef\xbf\xbd");
  EXPECT_EQ(lines[1]["entry"], (Json{{"kind", "ok"}, {"chunk_delay_ms", 1}}));
  EXPECT_EQ(lines[3]["entry"], (Json{{"kind", "ok"}, {"bytes_per_second", 1e6}}));
  EXPECT_TRUE(lines[4]["exhausted"].get<bool>());
  EXPECT_TRUE(lines[5]["index"].is_null());
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
  EXPECT_EQ(lines[0], (Json{{"relsim_log", 1}, {"port", port}, {"plan_tasks", 3}, {"retry_after", "0"},
                           {"retry_after_ms", nullptr}}));
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

}  // namespace control_log_test
