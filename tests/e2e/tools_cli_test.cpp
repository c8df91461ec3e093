// relsim tools serve and audit (docs/tools.md) from the command line: the MCP
// endpoint over raw HTTP (the transport's status codes, a JSON-RPC error for
// a body too large, a held and a dropped answer, the Host guard, a stop that
// does not wait out a held answer), the plan drawn from --p, and every bad
// input refused in one line.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/input_error_cli.hpp"
#include "support/raw_client.hpp"
#include "support/run.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using relsim::test::expect_input_error;
using relsim::test::RawClient;

std::string post(int port, const std::string& body, const std::string& type = "application/json",
                 const std::string& host = "", const std::string& path = "/mcp") {
  RawClient c(port);
  c.send("POST " + path + " HTTP/1.1\r\nHost: " + (host.empty() ? "127.0.0.1:" + std::to_string(port) : host) +
         "\r\nContent-Type: " + type + "\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body);
  c.drain();
  return c.buf;
}

using relsim::test::body_of;

std::string call(const std::string& tool, const json& args) {
  return json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}}
      .dump();
}

struct Served {
  fs::path dir;
  relsim::test::Background server;
  int port = 0;
};

fs::path fresh(const std::string& name) {
  const fs::path dir = relsim::test::scratch("tools_cli") / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ToolsCli, ServesMcpOverHttpWithTheTransportsStatusCodes) {
  const fs::path dir = fresh("http");
  std::ofstream(dir / "plan.jsonl") << "{\"fault\":\"drop\"}\n{\"fault\":\"timeout\"}\n";
  relsim::test::Background server({relsim::test::relsim_exe(), "tools", "serve", "--port", "0", "--sandbox",
                                    (dir / "box").string(), "--plan", (dir / "plan.jsonl").string(), "--hold-ms", "300"});
  const std::string banner = server.read_line(30);
  EXPECT_EQ(banner.rfind("relsim tools: listening on http://127.0.0.1:", 0), 0u) << banner;
  EXPECT_NE(banner.find("/mcp"), std::string::npos);
  const int port = relsim::test::port_from_banner(banner);
  ASSERT_GT(port, 0);

  // drop: the head and half the body, then the connection ends.
  const std::string dropped = post(port, call("dump", {{"n", 1000}}));
  EXPECT_EQ(dropped.rfind("HTTP/1.1 200 ", 0), 0u) << dropped.substr(0, 200);
  const auto length_at = dropped.find("content-length: ");
  ASSERT_NE(length_at, std::string::npos);
  const std::size_t length = std::stoul(dropped.substr(length_at + 16));
  EXPECT_EQ(body_of(dropped).size(), length / 2);
  // timeout: held, then the whole answer.
  const json held = json::parse(body_of(post(port, call("add", {{"a", 2}, {"b", 3}}))));
  EXPECT_EQ(held["result"]["content"][0]["text"], "5");
  // Past the plan: served at once.
  EXPECT_EQ(json::parse(body_of(post(port, call("add", {{"a", 20}, {"b", 22}}))))["result"]["content"][0]["text"], "42");
  // A notification: 202, no body.
  const std::string note = post(port, R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(note.rfind("HTTP/1.1 202 ", 0), 0u) << note;
  EXPECT_EQ(body_of(note), "");
  // GET: 405 (no server stream); a form body: 415; another host: 403.
  RawClient get(port);
  get.send("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\nConnection: close\r\n\r\n");
  get.drain();
  EXPECT_EQ(get.buf.rfind("HTTP/1.1 405 ", 0), 0u) << get.buf;
  EXPECT_NE(get.buf.find("allow: POST"), std::string::npos);
  EXPECT_EQ(post(port, "a=1", "application/x-www-form-urlencoded").rfind("HTTP/1.1 415 ", 0), 0u);
  EXPECT_EQ(post(port, "{}", "application/json", "evil.example:80").rfind("HTTP/1.1 403 ", 0), 0u);
  // Too large: 413 with a JSON-RPC error body.
  const std::string big = post(port, std::string(70'000, ' ') + "{}");
  EXPECT_EQ(big.rfind("HTTP/1.1 413 ", 0), 0u) << big.substr(0, 200);
  const json refusal = json::parse(body_of(big), nullptr, false);
  EXPECT_EQ(refusal["jsonrpc"], "2.0");
  EXPECT_EQ(refusal["error"]["code"], -32600);
  // Garbage bytes: a 400 or a close, and the server still answers after.
  RawClient garbage(port);
  garbage.send(std::string("\x16\x03\x01\x00\xff garbage\r\n\r\n", 17));
  garbage.drain();
  EXPECT_EQ(json::parse(body_of(post(port, R"({"jsonrpc":"2.0","id":2,"method":"ping"})")))["result"], json::object());
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

// A stop while an answer is held for 10 minutes: the server ends at once
// rather than waiting the hold out (the test's own timeout would catch a
// server that waits).
TEST(ToolsCli, StopsWithoutWaitingOutAHeldAnswer) {
  const fs::path dir = fresh("stop");
  std::ofstream(dir / "plan.jsonl") << "{\"fault\":\"timeout\"}\n";
  relsim::test::Background server({relsim::test::relsim_exe(), "tools", "serve", "--port", "0", "--sandbox",
                                    (dir / "box").string(), "--plan", (dir / "plan.jsonl").string(), "--hold-ms",
                                    "600000", "--log", (dir / "calls.jsonl").string()});
  const int port = relsim::test::port_from_banner(server.read_line(30));
  ASSERT_GT(port, 0);
  RawClient c(port);
  const std::string body = call("note_write", {{"path", "held.txt"}, {"text", "x"}});
  c.send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  // The call is logged when handled, before its answer is held.
  for (int i = 0; i < 200 && relsim::test::slurp(dir / "calls.jsonl").empty(); ++i)
    ::usleep(50'000);
  EXPECT_NE(relsim::test::slurp(dir / "calls.jsonl").find("\"fault\":\"timeout\""), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "box" / "held.txt"));  // the tool ran; only its answer waits
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

TEST(ToolsCli, DrawnFaultsFollowTheSeed) {
  const auto faults_of = [](const std::string& seed) {
    const fs::path dir = fresh("drawn" + seed);
    relsim::test::Background server({relsim::test::relsim_exe(), "tools", "serve", "--port", "0", "--sandbox",
                                      (dir / "box").string(), "--p", "0.5", "--q", "0.5", "--kinds",
                                      "exec_error=1,truncate=1", "--seed", seed, "--log", (dir / "calls.jsonl").string()});
    const int port = relsim::test::port_from_banner(server.read_line(30));
    EXPECT_GT(port, 0);
    for (int i = 0; i < 40; ++i) post(port, call("add", {{"a", i}, {"b", 1}}));
    EXPECT_EQ(server.stop(SIGTERM), 0);
    std::string faults;
    std::ifstream in(dir / "calls.jsonl");
    for (std::string line; std::getline(in, line);) faults += json::parse(line)["fault"].get<std::string>()[0];
    return faults;
  };
  const std::string a = faults_of("11"), b = faults_of("11"), c = faults_of("12");
  EXPECT_EQ(a.size(), 40u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.find_first_not_of("oet"), std::string::npos) << a;  // ok, exec_error, truncate only
}

// The shared tools over HTTP (docs/contention.md): the caller named by the
// path, a tenant's quota answered 429 with retry-after, a bad path a 404.
TEST(ToolsCli, SharedToolsKnowTheCallerFromThePathAndAnswerOverQuotaWith429) {
  const fs::path dir = fresh("shared");
  relsim::test::Background server({relsim::test::relsim_exe(), "tools", "serve", "--port", "0", "--sandbox",
                                    (dir / "box").string(), "--log", (dir / "calls.jsonl").string(), "--tool-quota",
                                    "2/3600"});
  const int port = relsim::test::port_from_banner(server.read_line(30));
  ASSERT_GT(port, 0);
  const std::string acme = "/t/acme/a/agent-1/mcp", globex = "/t/globex/a/g.1/mcp";
  EXPECT_EQ(json::parse(body_of(post(port, call("scratch_put", {{"key", "notes"}, {"value", "acme"}}), "application/json",
                                     "", acme)))["result"]["content"][0]["text"],
            R"({"version":1})");
  const std::string read = post(port, call("scratch_get", {{"key", "notes"}}), "application/json", "", globex);
  EXPECT_EQ(json::parse(json::parse(body_of(read))["result"]["content"][0]["text"].get<std::string>())["value"], "acme");
  post(port, call("add", {{"a", 1}, {"b", 1}}), "application/json", "", acme);
  const std::string over = post(port, call("add", {{"a", 1}, {"b", 1}}), "application/json", "", acme);
  EXPECT_EQ(over.rfind("HTTP/1.1 429 ", 0), 0u) << over;
  EXPECT_NE(over.find("retry-after: 3"), std::string::npos) << over;  // 3600 s, or a second less
  EXPECT_EQ(json::parse(body_of(over))["error"]["code"], -32029);
  for (const char* bad : {"/t/acme/mcp", "/t//a/x/mcp", "/t/ac%20me/a/x/mcp", "/t/acme/a/x/y/mcp", "/mcp/t/a"})
    EXPECT_EQ(post(port, call("add", {{"a", 1}, {"b", 1}}), "application/json", "", bad).rfind("HTTP/1.1 404 ", 0), 0u)
        << bad;
  EXPECT_EQ(server.stop(SIGTERM), 0);
  std::ifstream in(dir / "calls.jsonl");
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1]["tenant"], "globex");
  EXPECT_EQ(lines[1]["agent"], "g.1");
  EXPECT_EQ(lines[1]["facts"]["other_tenant"], true);
  EXPECT_EQ(lines[3]["stage"], "quota");
}

TEST(ToolsCli, RefusesBadInputInOneLine) {
  const fs::path dir = fresh("bad");
  const std::string box = (dir / "box").string();
  std::ofstream(dir / "bad_plan.jsonl") << "{\"fault\":\"timeout\"}\n{\"fault\":\"late\"}\n";
  std::ofstream(dir / "report.jsonl") << "{\"group\":\"nowhere\"}\n";
  expect_input_error("tools", "needs a subcommand");
  expect_input_error("tools serve", "sandbox");
  expect_input_error({"tools", "serve", "--sandbox", box, "--p", "1.2"}, "1.2");
  expect_input_error({"tools", "serve", "--sandbox", box, "--q", "0.5"}, "--p");
  expect_input_error({"tools", "serve", "--sandbox", box, "--p", "0.1", "--q", "0.5", "--burst-mean", "3"}, "not both");
  expect_input_error({"tools", "serve", "--sandbox", box, "--p", "0.1", "--kinds", "late=1"}, "late");
  expect_input_error({"tools", "serve", "--sandbox", box, "--plan", (dir / "bad_plan.jsonl").string(), "--p", "0.1"},
                     "not both");
  expect_input_error({"tools", "serve", "--sandbox", box, "--plan", (dir / "bad_plan.jsonl").string()}, "line 2");
  expect_input_error({"tools", "serve", "--sandbox", box, "--plan", (dir / "none.jsonl").string()}, "none.jsonl");
  expect_input_error({"tools", "serve", "--sandbox", box, "--hold-ms", "0"}, "hold-ms = 0");
  expect_input_error({"tools", "serve", "--sandbox", box, "--port", "70000"}, "70000");
  expect_input_error({"tools", "serve", "--sandbox", box, "--colour", "red"}, "--colour");
  expect_input_error({"tools", "serve", "--sandbox", box, "--tool-quota", "0/60"}, "tool quota = '0/60'");
  expect_input_error({"tools", "serve", "--sandbox", box, "--tool-quota", "5000"}, "CALLS/SECONDS");
  expect_input_error({"tools", "serve", "--sandbox", box, "--cache-threshold", "1.5"}, "cache-threshold = 1.5");
  expect_input_error({"tools", "serve", "--sandbox", box, "--queue-order", "random"}, "fifo or shuffled");
  expect_input_error({"tools", "serve", "--sandbox", box, "--queue-seed", "-1"}, "queue-seed");
  EXPECT_FALSE(fs::exists(box));  // nothing made for a refused run
  expect_input_error("tools audit", "--log");
  expect_input_error({"tools", "audit", "--log", (dir / "none.jsonl").string()}, "none.jsonl");
  expect_input_error({"tools", "audit", "--log", (dir / "report.jsonl").string()}, "report line 1");
  expect_input_error({"tools", "audit", "--log", (dir / "bad_plan.jsonl").string()}, "group");
}

}  // namespace
