// The workbench's HTTP server (relsim/ui/ui_server.hpp) over loopback: every
// route, status and guard header of the contract (the API paths and the
// commands they run, exit codes, bad parameters, unknown paths and methods,
// the page and its assets, the Host check, keep-alive and pipelining) and
// POST /api/audit. Against a fake CommandRunner (live/ui_server_fixture.hpp),
// so that the server is tested alone. Its limits are in
// ui_server_limits_test.cpp, the event stream and cancellation in
// ui_server_stream_test.cpp, the real commands in ui_server_commands_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "live/ui_server_fixture.hpp"
#include "relsim/core/error.hpp"
#include "relsim/ui/assets.hpp"
#include "relsim/ui/ui_server.hpp"

namespace ui_server_test {

using namespace relsim::test::ui_server;

// --- routes, statuses, headers -----------------------------------------------------

TEST(UiServer, BindsLoopbackOnAFreePortAndNamesItsUrl) {
  FakeServer s;
  EXPECT_GT(s.port, 0);
  EXPECT_EQ(s.server->url(), fmt::format("http://127.0.0.1:{}/", s.port));
}

TEST(UiServer, RefusesAnInvalidConfig) {
  FakeRunner fake;
  UiConfig c;
  c.threads = 0;
  EXPECT_THROW(UiServer(c, fake.runner()), relsim::InputError);
  c = UiConfig{};
  c.port = 70000;
  EXPECT_THROW(UiServer(c, fake.runner()), relsim::InputError);
  c = UiConfig{};
  c.read_timeout = 0ms;
  EXPECT_THROW(UiServer(c, fake.runner()), relsim::InputError);
}

TEST(UiServer, ExactRunsTheCommandAndAnswersItsBytes) {
  FakeServer s;
  const UiReply r = get(s.port, "/api/exact?p=0.3&q=0.8&r=2&n=2");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "application/json");
  expect_guard_headers(r);
  EXPECT_EQ(r.header("content-security-policy"), "(none)");
  EXPECT_EQ(r.body, "{\"ok\": true}\n");
  EXPECT_EQ(s.fake.call(0), (Args{"exact", "--p=0.3", "--q=0.8", "--r=2", "--n=2", "--json"}));
}

TEST(UiServer, EachApiPathRunsItsCommand) {
  FakeServer s;
  const int port = s.port;
  EXPECT_EQ(get(port, "/api/simulate?tasks=400").status, 200);
  EXPECT_EQ(get(port, "/api/oracle?fault=cut&times=once").status, 200);
  EXPECT_EQ(get(port, "/api/live?fault=cut&times=once").status, 200);
  const UiReply sweep = get(port, "/api/sweep?p=0.1,0.2&strict");
  EXPECT_EQ(sweep.status, 200);
  EXPECT_EQ(sweep.header("content-type"), "text/csv; charset=utf-8");
  EXPECT_EQ(s.fake.call(0), (Args{"simulate", "--tasks=400", "--json"}));
  EXPECT_EQ(s.fake.call(1), (Args{"oracle", "--fault=cut", "--times=once", "--json", "--per-task"}));
  EXPECT_EQ(s.fake.call(2), (Args{"live", "--fault=cut", "--times=once", "--json", "--timeline"}));
  EXPECT_EQ(s.fake.call(3), (Args{"sweep", "--p=0.1,0.2", "--strict"}));
}

TEST(UiServer, ExitCodesBecomeStatuses) {
  FakeServer s([](const Args& args, const CommandHooks&) -> CommandResult {
    const int code = std::stoi(args[1].substr(4));  // --p=CODE
    return {code, code == 1 ? "{\"check\": false}\n" : "", fmt::format("message of exit {}", code)};
  });
  const UiReply one = get(s.port, "/api/exact?p=1");
  EXPECT_EQ(one.status, 200);
  EXPECT_EQ(one.header("x-relsim-exit"), "1");
  EXPECT_EQ(one.body, "{\"check\": false}\n");
  expect_error(get(s.port, "/api/exact?p=2"), 400, "message of exit 2");
  expect_error(get(s.port, "/api/exact?p=3"), 500, "message of exit 3");
  EXPECT_EQ(get(s.port, "/api/exact?p=0").header("x-relsim-exit"), "(none)");
}

TEST(UiServer, ARunnerThatThrowsIsA500AndTheServerGoesOn) {
  FakeServer s([](const Args&, const CommandHooks&) -> CommandResult { throw std::logic_error("a bug"); });
  expect_error(get(s.port, "/api/exact?p=1"), 500, "a bug");
  expect_error(get(s.port, "/api/exact?p=1"), 500, "a bug");
}

TEST(UiServer, BadParametersAre400BeforeAnythingRuns) {
  FakeServer s;
  const int port = s.port;
  expect_error(get(port, "/api/exact?p=0.3&x=1"), 400, "unknown parameter 'x' for /api/exact: it takes p, q, r");
  expect_error(get(port, "/api/exact?json"), 400, "unknown parameter 'json'");
  expect_error(get(port, "/api/exact?p=0.3&p=0.4"), 400, "'p' is given twice");
  expect_error(get(port, "/api/exact?p=%zz"), 400, "percent escape");
  expect_error(get(port, "/api/simulate?tasks=100000000"), 400, "tasks = '100000000' is out of range");
  expect_error(get(port, "/api/live?times=once"), 400, "needs the parameter 'fault'");
  std::lock_guard lock(s.fake.mu);
  EXPECT_TRUE(s.fake.calls.empty());
}

TEST(UiServer, UnknownPathIs404AndWrongMethodIs405WithAllow) {
  FakeServer s;
  const int port = s.port;
  expect_error(get(port, "/nothing/here"), 404, "unknown path '/nothing/here'");
  expect_error(get(port, "/api/exactly"), 404, "unknown path");
  const UiReply post = round_trip(port, ui_request("POST", "/api/exact?p=0.3", port, "{}"));
  expect_error(post, 405, "method POST is not allowed here: use GET");
  EXPECT_EQ(post.header("allow"), "GET");
  const UiReply audit = get(port, "/api/audit");
  expect_error(audit, 405, "use POST");
  EXPECT_EQ(audit.header("allow"), "POST");
  EXPECT_EQ(round_trip(port, ui_request("DELETE", "/", port)).header("allow"), "GET");
  std::lock_guard lock(s.fake.mu);
  EXPECT_TRUE(s.fake.calls.empty());
}

TEST(UiServer, ServesThePageWithItsSecurityPolicy) {
  FakeServer s;
  const UiReply page = get(s.port, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.header("content-type").rfind("text/html", 0), 0u) << page.header("content-type");
  EXPECT_NE(page.body.find("<html"), std::string::npos);
  expect_guard_headers(page);
  EXPECT_EQ(page.header("content-security-policy"),
            "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'");
  // The page's state lives in its query, which the server does not parse.
  EXPECT_EQ(get(s.port, "/?p=0.3&lab.fault=stall&pol.s=2").body, page.body);
  for (const relsim::ui::Asset& asset : relsim::ui::assets()) {
    const UiReply r = get(s.port, std::string(asset.path));
    EXPECT_EQ(r.status, 200) << asset.path;
    EXPECT_EQ(r.body, asset.body) << asset.path;
    EXPECT_EQ(r.header("content-type"), asset.content_type) << asset.path;
  }
}

TEST(UiServer, HostOtherThanLoopbackAtItsPortIs403) {
  FakeServer s;
  const int port = s.port;
  const auto with_host = [&](const std::string& host) {
    return round_trip(port, fmt::format("GET /api/exact?p=0.3 HTTP/1.1\r\n{}\r\n", host));
  };
  EXPECT_EQ(with_host(fmt::format("Host: localhost:{}\r\n", port)).status, 200);
  EXPECT_EQ(with_host(fmt::format("Host: LocalHost:{}\r\n", port)).status, 200);
  expect_error(with_host(fmt::format("Host: evil.example:{}\r\n", port)), 403, "Host header");
  expect_error(with_host("Host: 127.0.0.1\r\n"), 403, "Host header");
  expect_error(with_host(fmt::format("Host: 127.0.0.1:{}\r\n", port + 1)), 403, "Host header");
  expect_error(with_host(""), 403, "Host header");
  EXPECT_TRUE(s.fake.wait_calls(2));
  std::lock_guard lock(s.fake.mu);
  EXPECT_EQ(s.fake.calls.size(), 2u);
}

TEST(UiServer, KeepsTheConnectionAliveAndAnswersPipelinedRequestsInOrder) {
  FakeServer s([](const Args& args, const CommandHooks&) { return CommandResult{0, args[1] + "\n", "", ""}; });
  const int port = s.port;
  RawClient c(port);
  c.send(ui_request("GET", "/api/exact?p=1", port));
  const UiReply first = read_reply(c);
  EXPECT_EQ(first.header("connection"), "keep-alive");
  EXPECT_EQ(first.body, "--p=1\n");
  c.send(ui_request("GET", "/api/exact?p=2", port) + ui_request("GET", "/", port) +
         ui_request("GET", "/api/exact?p=3", port));
  EXPECT_EQ(read_reply(c).body, "--p=2\n");
  EXPECT_EQ(read_reply(c).header("content-type").rfind("text/html", 0), 0u);
  EXPECT_EQ(read_reply(c).body, "--p=3\n");
  c.send("GET /api/exact?p=4 HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\nConnection: close\r\n\r\n");
  const UiReply last = read_reply(c);
  EXPECT_EQ(last.body, "--p=4\n");
  EXPECT_EQ(last.header("connection"), "close");
  c.drain();
  EXPECT_TRUE(c.eof || c.reset);
}

// --- POST /api/audit ------------------------------------------------------------------

TEST(UiServer, AuditWritesTheUploadToAPrivateFolderAndRemovesIt) {
  std::string plan_path, log_path, plan_text, log_text;
  FakeServer s([&](const Args& args, const CommandHooks&) {
    for (const auto& a : args) {
      if (a.rfind("--plan=", 0) == 0) plan_path = a.substr(7);
      if (a.rfind("--log=", 0) == 0) log_path = a.substr(6);
    }
    const auto read = [](const std::string& path) {
      std::ifstream in(path, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    plan_text = read(plan_path);
    log_text = read(log_path);
    return CommandResult{0, "{\"audited\": 1}\n", "", ""};
  });
  const int port = s.port;
  const Json body = {{"plan", "{\"relsim_plan\": 1}\nline 2\n"}, {"log", std::string("a\0b", 3)}};
  const UiReply r = round_trip(port, ui_request("POST", "/api/audit?policy=layered&s=2&infer", port, body.dump()));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "{\"audited\": 1}\n");
  const Args args = s.fake.call(0);
  ASSERT_EQ(args.size(), 8u);
  EXPECT_EQ((Args(args.begin(), args.begin() + 6)),
            (Args{"audit", "--policy=layered", "--s=2", "--infer", "--json", "--per-task"}));
  EXPECT_EQ(plan_text, "{\"relsim_plan\": 1}\nline 2\n");
  EXPECT_EQ(log_text, std::string("a\0b", 3));
  const std::filesystem::path dir = std::filesystem::path(plan_path).parent_path();
  EXPECT_EQ(std::filesystem::path(log_path).parent_path(), dir);
  EXPECT_EQ(dir.filename().string().rfind("relsim-ui-", 0), 0u) << dir;
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

TEST(UiServer, AuditRefusesABodyThatIsNotAPlanAndALog) {
  FakeServer s;
  const int port = s.port;
  const auto post = [&](const std::string& body) { return round_trip(port, ui_request("POST", "/api/audit", port, body)); };
  expect_error(post("not json"), 400, "the body is not JSON");
  expect_error(post("[1, 2]"), 400, "not a JSON object");
  expect_error(post(R"({"plan": "x"})"), 400, "log must be a string");
  expect_error(post(R"({"plan": 1, "log": "y"})"), 400, "plan must be a string");
  expect_error(post(R"({"plan": "x", "log": "y", "extra": 1})"), 400, "the key \"extra\"");
  expect_error(post(R"({"plan": ["x"], "log": "y"})"), 400, "must be strings");
  expect_error(post("{\"plan\": " + std::string(20'000, '[')), 400, "must be strings");
  expect_error(round_trip(port, ui_request("POST", "/api/audit?x=1", port, R"({"plan": "x", "log": "y"})")), 400,
               "unknown parameter 'x' for /api/audit");
  std::lock_guard lock(s.fake.mu);
  EXPECT_TRUE(s.fake.calls.empty());
}

TEST(UiServer, TrendRefusesABodyThatIsNotAHistory) {
  FakeServer s;
  const int port = s.port;
  const auto post = [&](const std::string& body) {
    return round_trip(port, ui_request("POST", "/api/contention/trend", port, body));
  };
  expect_error(post(R"({"plan": "x"})"), 400, "the key \"plan\": it takes only history");
  expect_error(post("{}"), 400, "history must be a string: give {\"history\": TEXT}");
  expect_error(post(R"({"history": ["x"]})"), 400, "history must be strings");
  expect_error(get(port, "/api/contention/trend"), 405, "use POST");
  std::lock_guard lock(s.fake.mu);
  EXPECT_TRUE(s.fake.calls.empty());
}

}  // namespace ui_server_test
