// The mock server's tasks, scripts and logs: many tasks in parallel each
// served its own script in order, the request log (retry-count header, body,
// entry, times, cap), unknown tasks and exhausted scripts, set_script and
// load_plan, script parsing and config validation, the control endpoints over
// HTTP, and relsim serve (banner, SIGTERM, a bad port). Through the raw client
// of live/server_wire.hpp.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "live/server_wire.hpp"
#include "relsim/core/error.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"
#include "support/run.hpp"

namespace server_tasks_test {

using namespace relsim::test::server_wire;

// --- tasks, scripts, logs -------------------------------------------------------------

TEST(ServerTasks, FiftyTasksInParallelEachGetTheirOwnEntriesInOrder) {
  Server server(config_with(4));
  const std::vector<std::string> kinds = {"ok", "http_529", "no_stop", "http_429", "http_503", "overloaded"};
  constexpr int kTasks = 50, kRequests = 6;
  auto script_for = [&](int t) {
    std::vector<std::string> s;
    for (int i = 0; i < kRequests; ++i) s.push_back(kinds[static_cast<std::size_t>((t + i) % kinds.size())]);
    return s;
  };
  for (int t = 0; t < kTasks; ++t) {
    Json j = Json::array();
    for (const auto& k : script_for(t)) j.push_back(k);
    server.set_script(t, relsim::parse_script(j));
  }
  std::vector<std::vector<std::string>> seen(kTasks);
  std::vector<std::thread> threads;
  for (int t = 0; t < kTasks; ++t)
    threads.emplace_back([&, t] {
      Client c(server.port());
      for (int i = 0; i < kRequests; ++i) {
        const Response r = roundtrip(c, message(t));
        std::string what = fmt::format("{}", r.status);
        if (r.status == 200) {
          const auto ev = r.events();
          what += fmt::format(":{}:{}", ev.size(), ev.empty() ? "" : ev.back().name);
          if (!ev.empty())
            what += ":" + Json::parse(ev[0].data, nullptr, false)["message"]["id"].get<std::string>();
          for (const auto& e : ev)
            if (e.name == "content_block_delta" && e.data.find("task ") != std::string::npos)
              what += ":" + Json::parse(e.data)["delta"]["text"].get<std::string>();
        }
        seen[static_cast<std::size_t>(t)].push_back(what);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kTasks; ++t) {
    const auto script = script_for(t);
    std::vector<std::string> want;
    for (int i = 0; i < kRequests; ++i) {
      const auto& k = script[static_cast<std::size_t>(i)];
      const std::string id = fmt::format("msg_relsim_{}_{}", t, i);
      const std::string text = fmt::format("task {}.", t);
      if (k == "ok") want.push_back(fmt::format("200:8:message_stop:{}:{}", id, text));
      else if (k == "no_stop") want.push_back(fmt::format("200:7:message_delta:{}:{}", id, text));
      else if (k == "overloaded") want.push_back(fmt::format("200:2:error:{}", id));
      else want.push_back(k.substr(5));
    }
    EXPECT_EQ(seen[static_cast<std::size_t>(t)], want) << "task " << t;
    const auto log = server.log(t);
    ASSERT_EQ(log.requests.size(), static_cast<std::size_t>(kRequests));
    for (int i = 0; i < kRequests; ++i) {
      EXPECT_EQ(relsim::entry_name(*log.requests[static_cast<std::size_t>(i)].entry), script[static_cast<std::size_t>(i)]);
      EXPECT_EQ(log.requests[static_cast<std::size_t>(i)].index, i);
    }
  }
}

TEST(ServerTasks, LogRecordsRetryCountHeadersBodyEntryAndTimes) {
  Server server(config_with());
  server.set_script(3, script_of({"http_529", "http_529", "ok"}));
  Client c(server.port());
  for (int i = 0; i < 3; ++i) roundtrip(c, message(3, fmt::format("X-Stainless-Retry-Count: {}\r\n", i)));
  ASSERT_TRUE(server.wait_finished(3, 3, kLimit));
  const relsim::TaskLog log = server.log(3);
  EXPECT_EQ(log.task, 3);
  EXPECT_EQ(log.dropped, 0u);
  ASSERT_EQ(log.requests.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& r = log.requests[i];
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/t/3/v1/messages");
    EXPECT_EQ(r.header("x-stainless-retry-count"), std::to_string(i));
    EXPECT_EQ(r.header("X-Stainless-Retry-Count"), std::to_string(i));
    EXPECT_EQ(r.body, kBody);
    EXPECT_EQ(r.body_bytes, kBody.size());
    EXPECT_EQ(r.status, i < 2 ? 529 : 200);
    EXPECT_EQ(r.end, "complete");
    EXPECT_EQ(relsim::entry_name(*r.entry), i < 2 ? "http_529" : "ok");
    ASSERT_TRUE(r.finished_ms.has_value());
    EXPECT_LE(r.received_ms, *r.finished_ms);
  }
  const Json j = to_json(log);
  EXPECT_EQ(j["requests"][1]["headers"]["x-stainless-retry-count"], "1");
  EXPECT_EQ(j["requests"][2]["entry"], "ok");
}

TEST(ServerTasks, LogKeepsAtMostTheCapAndCountsTheRest) {
  ServerConfig config = config_with();
  config.max_log_entries = 2;
  Server server(config);
  server.set_script(1, script_of({"http_500", "http_500", "http_500", "ok"}));
  Client c(server.port());
  for (int i = 0; i < 3; ++i) roundtrip(c, message(1));
  expect_healthy_stream(roundtrip(c, message(1)), 1, 3);
  const auto log = server.log(1);
  EXPECT_EQ(log.requests.size(), 2u);
  EXPECT_EQ(log.dropped, 2u);
}

TEST(ServerTasks, UnknownTaskAndExhaustedScriptAnswer404AtOnce) {
  Server server(config_with());
  server.set_script(1, script_of({"ok"}));
  Client c(server.port());
  const Response unknown = roundtrip(c, message(99));
  expect_api_error(unknown, 404, "not_found_error");
  EXPECT_NE(unknown.json()["error"]["message"].get<std::string>().find("task 99"), std::string::npos);
  expect_healthy_stream(roundtrip(c, message(1)), 1, 0);
  const Response exhausted = roundtrip(c, message(1));
  expect_api_error(exhausted, 404, "not_found_error");
  EXPECT_NE(exhausted.json()["error"]["message"].get<std::string>().find("task 1"), std::string::npos);
  const auto log = server.log(1);
  ASSERT_EQ(log.requests.size(), 2u);
  EXPECT_FALSE(log.requests[1].entry.has_value());
  EXPECT_EQ(log.requests[1].status, 404);
}

TEST(ServerTasks, SetScriptReplacesTheRemainingEntries) {
  Server server(config_with());
  server.set_script(1, script_of({"http_500", "http_500"}));
  Client c(server.port());
  EXPECT_EQ(roundtrip(c, message(1)).status, 500);
  server.set_script(1, script_of({"ok"}));
  expect_healthy_stream(roundtrip(c, message(1)), 1, 1);
  EXPECT_EQ(roundtrip(c, message(1)).status, 404);
}

TEST(ServerTasks, LoadPlanGivesEachTaskItsPlannedRequests) {
  relsim::Plan plan;
  plan.tasks.push_back({0, {std::nullopt}});
  plan.tasks.push_back({1, {relsim::FaultKind::http_529, std::nullopt}});
  Server server(config_with());
  server.load_plan(plan);
  Client c(server.port());
  expect_healthy_stream(roundtrip(c, message(0)), 0, 0);
  EXPECT_EQ(roundtrip(c, message(1)).status, 529);
  expect_healthy_stream(roundtrip(c, message(1)), 1, 1);
}

TEST(ServerScript, EntriesParseFromNamesAndObjectsAndErrorsNameTheEntry) {
  const auto s = relsim::parse_script(
      Json::parse(R"(["ok", "cut", "empty", {"kind": "garbage"}, {"kind": "ok", "gate": "a", "chunk_delay_ms": 5}])"));
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[1], relsim::ScriptEntry::of(relsim::FaultKind::cut));
  EXPECT_EQ(relsim::entry_name(s[2]), "empty");
  EXPECT_EQ(relsim::entry_name(s[3]), "garbage");
  EXPECT_EQ(to_json(s[4]), (Json{{"kind", "ok"}, {"chunk_delay_ms", 5}, {"gate", "a"}}));
  EXPECT_EQ(to_json(s[1]), "cut");
  auto error_of = [](const char* text) {
    try {
      relsim::parse_script(Json::parse(text));
    } catch (const relsim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(R"(["ok", "bogus"])").find("responses[1]"), std::string::npos);
  EXPECT_NE(error_of(R"(["ok", "bogus"])").find("bogus"), std::string::npos);
  EXPECT_NE(error_of(R"([{"kind": "ok", "chunk_delay_ms": -1}])").find("chunk_delay_ms"), std::string::npos);
  EXPECT_NE(error_of(R"([{"kind": "ok", "gate": "a b"}])").find("gate"), std::string::npos);
  EXPECT_NE(error_of(R"([{"kind": "ok", "speed": 1}])").find("speed"), std::string::npos);
  EXPECT_NE(error_of(R"([{"gate": "a"}])").find("kind"), std::string::npos);
  EXPECT_NE(error_of(R"([3])").find("responses[0]"), std::string::npos);
}

TEST(ServerScript, ConfigOutOfRangeIsRefusedWithItsRange) {
  ServerConfig c;
  c.port = 70000;
  EXPECT_THROW(relsim::validate(c), relsim::InputError);
  c = ServerConfig{};
  c.threads = 0;
  EXPECT_THROW(relsim::validate(c), relsim::InputError);
  c = ServerConfig{};
  c.retry_after = "soon";
  EXPECT_THROW(relsim::validate(c), relsim::InputError);
  c.retry_after = "1.5";
  EXPECT_NO_THROW(relsim::validate(c));
  c = ServerConfig{};
  c.port = -1;
  EXPECT_THROW(Server{c}, relsim::InputError);
}

// --- control over HTTP --------------------------------------------------------------

TEST(ServerControl, ScriptLogReleaseGateAndHealthOverHttp) {
  Server server(config_with());
  Client ctl(server.port());
  const Response health = roundtrip(ctl, request("GET", "/control/health"));
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.json()["status"], "ok");

  const Response set = roundtrip(
      ctl, request("POST", "/control/tasks/12/script",
                   R"({"responses": ["http_529", "stall", {"kind": "ok", "gate": "go"}]})"));
  EXPECT_EQ(set.status, 200);
  EXPECT_EQ(set.json()["entries"], 3);
  const Response bad = roundtrip(ctl, request("POST", "/control/tasks/12/script", R"({"responses": ["ok", "nope"]})"));
  expect_api_error(bad, 400, "invalid_request_error");
  EXPECT_NE(bad.json()["error"]["message"].get<std::string>().find("responses[1]"), std::string::npos);
  expect_api_error(roundtrip(ctl, request("POST", "/control/tasks/12/script", "not json")), 400,
                   "invalid_request_error");

  Client c(server.port());
  EXPECT_EQ(roundtrip(c, message(12, "x-stainless-retry-count: 0\r\n")).status, 529);
  c.send(message(12, "x-stainless-retry-count: 1\r\n"));
  ASSERT_TRUE(server.wait_held(12, 1, kLimit));
  const Response rel = roundtrip(ctl, request("POST", "/control/tasks/12/release"));
  EXPECT_EQ(rel.status, 200);
  EXPECT_EQ(rel.json()["released"], 1);
  EXPECT_TRUE(read_response(c).complete);

  c.send(message(12));
  ASSERT_TRUE(server.wait_held(12, 1, kLimit));
  const Response open = roundtrip(ctl, request("POST", "/control/gates/go/open"));
  EXPECT_EQ(open.status, 200);
  EXPECT_EQ(open.json()["released"], 1);
  expect_healthy_stream(read_response(c), 12, 2);

  ASSERT_TRUE(server.wait_finished(12, 3, kLimit));
  const Response log = roundtrip(ctl, request("GET", "/control/tasks/12/log"));
  EXPECT_EQ(log.status, 200);
  const Json j = log.json();
  EXPECT_EQ(j["task"], 12);
  ASSERT_EQ(j["requests"].size(), 3u);
  EXPECT_EQ(j["requests"][0]["entry"], "http_529");
  EXPECT_EQ(j["requests"][1]["headers"]["x-stainless-retry-count"], "1");
  EXPECT_EQ(j["requests"][1]["entry"], "stall");
  EXPECT_EQ(j["requests"][2]["entry"]["gate"], "go");

  expect_api_error(roundtrip(ctl, request("GET", "/control/tasks/12/release")), 405, "invalid_request_error");
  expect_api_error(roundtrip(ctl, request("GET", "/control/nothing")), 404, "not_found_error");
  expect_api_error(roundtrip(ctl, request("POST", "/control/gates/bad%20name/open")), 400, "invalid_request_error");
}

// --- relsim serve ------------------------------------------------------------------------

TEST(ServeCommand, ListensPrintsItsAddressServesAndStopsOnSigterm) {
  relsim::test::Background serve({relsim::test::relsim_exe(), "serve", "--port", "0"});
  const std::string line = serve.read_line(10);
  const std::string prefix = "relsim serve: listening on http://127.0.0.1:";
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
  const int port = relsim::test::port_from_banner(line);
  EXPECT_GT(port, 0);
  Client ctl(port);
  EXPECT_EQ(roundtrip(ctl, request("POST", "/control/tasks/0/script", R"({"responses": ["ok"]})")).status, 200);
  expect_healthy_stream(roundtrip(ctl, message(0)), 0, 0);
  const int code = serve.stop(SIGTERM);
  EXPECT_FALSE(serve.signaled());
  EXPECT_EQ(code, 0);
}

TEST(ServeCommand, PortOutOfRangeIsOneLineAndExitCode2) {
  const relsim::test::RunResult r = relsim::test::run_relsim("serve --port 70000");
  const std::string out = r.out + r.err;
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("port = 70000"), std::string::npos) << out;
}

}  // namespace server_tasks_test
