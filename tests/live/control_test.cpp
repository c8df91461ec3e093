// The server's control endpoints for auditing a client (docs/wire.md):
// GET /control/tasks (the plan's tasks in order, with their base URLs, calls
// and the plan's header) and POST /control/tasks/{task}/outcome (every
// outcome word taken and logged, bad bodies refused naming the problem, a
// long detail cut on a character boundary). Over loopback, through
// live/control_support.hpp; nothing sleeps or asserts on timing. The request
// log itself is in control_log_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "live/control_support.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"

namespace control_test {

using namespace relsim::test::control;

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

}  // namespace control_test
