// The workbench's HTTP server (relsim/ui/ui_server.hpp) over loopback: every
// route, status and guard header of the contract, its limits, the event
// stream and its cancellation, and then the real commands (relsim::run_command)
// answering the very bytes the relsim executable prints.
//
// Most tests run a UiServer with a fake CommandRunner that records its
// arguments and answers as scripted, so the server is tested alone. Nothing
// waits for a time to pass: a runner that must hold on does so on a Gate the
// test opens, and each wait has a generous safety limit (kUiLimit) that only
// turns a server bug into a failure instead of a hang.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "relsim/cli/cli.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/ui/assets.hpp"
#include "relsim/ui/ui_server.hpp"
#include "support/raw_client.hpp"
#include "support/run.hpp"

namespace {

namespace http = boost::beast::http;
using relsim::Json;
using relsim::test::RawClient;
using relsim::ui::CommandHooks;
using relsim::ui::CommandResult;
using relsim::ui::UiConfig;
using relsim::ui::UiServer;
using Args = std::vector<std::string>;
using namespace std::chrono_literals;

constexpr auto kUiLimit = 30s;  // safety limit of every wait; never reached when the server is right

// --- HTTP through Beast's parser, over the raw client ----------------------------

struct UiReply {
  int status = 0;  // 0: no whole response came
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;

  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string("(none)") : it->second;
  }
  Json json() const { return Json::parse(body, nullptr, false); }
};

// One response from the client's bytes; what follows it stays in c.buf.
UiReply read_reply(RawClient& c) {
  http::response_parser<http::string_body> parser;
  parser.body_limit(1u << 30);
  parser.eager(true);
  for (;;) {
    boost::system::error_code ec;
    const std::size_t used = c.buf.empty() ? 0 : parser.put(boost::asio::buffer(c.buf), ec);
    c.buf.erase(0, used);
    if (parser.is_done()) break;
    if (ec && ec != http::error::need_more) return {};
    if (used == 0 && !c.fill()) return {};
  }
  UiReply r;
  r.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    std::string name(field.name_string());
    for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    r.headers[name] = std::string(field.value());
  }
  r.body = parser.get().body();
  return r;
}

std::string ui_request(const std::string& method, const std::string& target, int port, const std::string& body = "",
                       const std::string& extra = "") {
  return fmt::format("{} {} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\ncontent-length: {}\r\n{}\r\n{}", method, target, port,
                     body.size(), extra, body);
}

UiReply round_trip(int port, const std::string& bytes) {
  RawClient c(port);
  c.send(bytes);
  return read_reply(c);
}
UiReply get(int port, const std::string& target) { return round_trip(port, ui_request("GET", target, port)); }

// The events of a text/event-stream body: (name, data) in order.
std::vector<std::pair<std::string, std::string>> events_of(const std::string& body) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(body);
  std::string line, name, data;
  while (std::getline(in, line)) {
    if (line.rfind("event: ", 0) == 0) name = line.substr(7);
    else if (line.rfind("data: ", 0) == 0) data = line.substr(6);
    else if (line.empty() && !name.empty()) out.emplace_back(std::exchange(name, ""), std::exchange(data, ""));
  }
  return out;
}

void expect_guard_headers(const UiReply& r) {
  EXPECT_EQ(r.header("cache-control"), "no-store");
  EXPECT_EQ(r.header("x-content-type-options"), "nosniff");
}

void expect_error(const UiReply& r, int status, const std::string& part) {
  EXPECT_EQ(r.status, status);
  EXPECT_EQ(r.header("content-type"), "application/json");
  expect_guard_headers(r);
  const Json j = r.json();
  ASSERT_TRUE(j.is_object()) << r.body;
  EXPECT_EQ(j.size(), 1u) << r.body;
  ASSERT_TRUE(j.contains("error") && j["error"].is_string()) << r.body;
  const std::string message = j["error"].get<std::string>();
  EXPECT_NE(message.find(part), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// --- a fake runner ----------------------------------------------------------------

// A latch the test opens; a runner waits on it.
class Gate {
 public:
  void open() {
    const std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kUiLimit, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Records every command line; answers with `script` (default: exit 0 with
// a small JSON object and a newline, as the CLI prints).
struct FakeRunner {
  std::function<CommandResult(const Args&, const CommandHooks&)> script;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Args> calls;
  bool saw_cancelled = false;

  relsim::ui::CommandRunner runner() {
    return [this](const Args& args, const CommandHooks& hooks) {
      {
        const std::lock_guard lock(mu);
        calls.push_back(args);
        cv.notify_all();
      }
      try {
        return script ? script(args, hooks) : CommandResult{0, "{\"ok\": true}\n", ""};
      } catch (const relsim::Cancelled&) {
        const std::lock_guard lock(mu);
        saw_cancelled = true;
        cv.notify_all();
        return CommandResult{relsim::ui::kCommandCancelled, "", "cancelled"};
      }
    };
  }
  bool wait_calls(std::size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, kUiLimit, [&] { return calls.size() >= n; });
  }
  bool wait_cancelled() {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, kUiLimit, [&] { return saw_cancelled; });
  }
  Args call(std::size_t i) {
    const std::lock_guard lock(mu);
    return i < calls.size() ? calls[i] : Args{};
  }
};

// A script under which `command` reports progress until the hook throws
// Cancelled (caught by FakeRunner); any other command answers at once.
auto until_cancelled(const std::string& command) {
  return [command](const Args& args, const CommandHooks& hooks) {
    if (args[0] != command) return CommandResult{0, "{}\n", ""};
    for (std::int64_t i = 0;; ++i) {
      hooks.progress(i, 1'000'000'000);
      std::this_thread::sleep_for(1ms);  // only to spare the CPU; nothing depends on it
    }
  };
}

UiConfig config(int threads = 2) {
  UiConfig c;
  c.threads = threads;
  return c;
}
UiConfig config(const std::function<void(UiConfig&)>& tweak) {
  UiConfig c = config();
  tweak(c);
  return c;
}

// A UiServer over a FakeRunner with this script (empty: the default answer),
// set before the server's threads start.
struct FakeServer {
  explicit FakeServer(std::function<CommandResult(const Args&, const CommandHooks&)> script = {},
                      const UiConfig& c = config()) {
    fake.script = std::move(script);
    server.emplace(c, fake.runner());
    port = server->port();
  }
  FakeRunner fake;
  std::optional<UiServer> server;  // declared after fake: stopped before it goes
  int port = 0;
};

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
  FakeServer s([](const Args& args, const CommandHooks&) { return CommandResult{0, args[1] + "\n", ""}; });
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
    return CommandResult{0, "{\"audited\": 1}\n", ""};
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

// --- limits: whatever the bytes, an answer or a close, and the next client is served ---

void expect_still_serving(int port) { EXPECT_EQ(get(port, "/api/exact?p=0.3").status, 200); }

TEST(UiServer, TargetOverEightKibIs414) {
  FakeServer s;
  const int port = s.port;
  for (const std::size_t size : {9'000u, 40'000u, 200'000u}) {
    const UiReply r = get(port, "/api/exact?p=" + std::string(size, '1'));
    expect_error(r, 414, "8192");
    EXPECT_EQ(r.header("connection"), "close");
    expect_still_serving(port);
  }
}

TEST(UiServer, BodyOverTheLimitIs413) {
  FakeServer s({}, config([](UiConfig& c) { c.max_body_bytes = 1000; }));
  const int port = s.port;
  expect_error(round_trip(port, ui_request("POST", "/api/audit", port, std::string(1001, 'x'))), 413, "at most 1000");
  // Elsewhere the limit is 64 KiB, chunked or not.
  expect_error(round_trip(port, ui_request("GET", "/api/exact", port, std::string(70'000, 'x'))), 413, "too large");
  const std::string chunked = fmt::format("GET /api/exact HTTP/1.1\r\nHost: 127.0.0.1:{}\r\ntransfer-encoding: chunked\r\n"
                                          "\r\n{:x}\r\n{}\r\n0\r\n\r\n",
                                          port, 70'000, std::string(70'000, 'y'));
  expect_error(round_trip(port, chunked), 413, "too large");
  expect_still_serving(port);
  std::lock_guard lock(s.fake.mu);
  EXPECT_EQ(s.fake.calls.size(), 1u);
}

TEST(UiServer, GarbageBytesGet400OrACloseAndTheServerGoesOn) {
  // A request only begun is closed at this timeout, well before the client gives up.
  FakeServer s({}, config([](UiConfig& c) { c.read_timeout = 2s; }));
  const int port = s.port;
  std::string noise;
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 4096; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    noise += static_cast<char>(x & 0xff);
  }
  for (const std::string& bytes : {noise, std::string("\r\n\r\n"), std::string("GET / HTTP/9.9\r\n\r\n"),
                                   std::string("GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n"), std::string(1, '\0')}) {
    RawClient c(port);
    c.send(bytes);
    const UiReply r = read_reply(c);
    EXPECT_TRUE(r.status == 0 || r.status == 400) << r.status;
    c.drain();
    EXPECT_TRUE(c.eof || c.reset) << "the connection was neither answered nor closed";
    expect_still_serving(port);
  }
}

TEST(UiServer, HeaderFloodIs431) {
  FakeServer s;
  const int port = s.port;
  std::string flood = fmt::format("GET / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", port);
  for (int i = 0; i < 5000; ++i) flood += fmt::format("x-flood-{}: {}\r\n", i, i);
  const UiReply r = round_trip(port, flood + "\r\n");
  expect_error(r, 431, "headers exceed");
  expect_still_serving(port);
}

TEST(UiServer, SlowlorisIsClosedAtTheReadTimeout) {
  FakeServer s({}, config([](UiConfig& c) { c.read_timeout = 300ms; }));
  const int port = s.port;
  RawClient slow(port);
  slow.send("GET /api/exact?p=0.3 HTTP/1.1\r\nHost: 127.0.0.1");
  slow.drain();  // the server closes it (RawClient gives up after 10 s: timed_out)
  EXPECT_TRUE(slow.eof || slow.reset) << "timed out: the server kept a slow client";
  EXPECT_TRUE(slow.buf.empty()) << slow.buf;
  expect_still_serving(port);
}

TEST(UiServer, ConnectionsOverTheCapAreClosed) {
  FakeServer s({}, config([](UiConfig& c) { c.max_connections = 2; }));
  const int port = s.port;
  RawClient a(port), b(port);
  for (RawClient* client : {&a, &b}) {
    client->send(ui_request("GET", "/", port));
    EXPECT_EQ(read_reply(*client).status, 200);
  }
  RawClient over(port);
  over.send(ui_request("GET", "/", port));
  over.drain();
  EXPECT_TRUE(over.eof || over.reset);
  EXPECT_TRUE(over.buf.empty());
  // Once one closes, a new client is served (the server notices the close
  // at once, but asynchronously: a bounded number of tries, no timing).
  a.close();
  bool served = false;
  for (int i = 0; i < 500 && !served; ++i) {
    served = get(port, "/").status == 200;
    if (!served) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(served);
}

// --- commands off the I/O thread, the event stream, cancellation ---------------------

TEST(UiServer, ThePageLoadsWhileACommandRuns) {
  Gate gate;
  FakeServer s([&](const Args&, const CommandHooks&) {
    gate.wait();
    return CommandResult{0, "{}\n", ""};
  }, config(1));
  const int port = s.port;
  RawClient busy(port);
  busy.send(ui_request("GET", "/api/simulate?tasks=400", port));
  ASSERT_TRUE(s.fake.wait_calls(1));
  EXPECT_EQ(get(port, "/").status, 200);
  gate.open();
  EXPECT_EQ(read_reply(busy).status, 200);
}

TEST(UiServer, StreamSendsProgressThenTheResult) {
  Gate gate;
  FakeServer s([&](const Args&, const CommandHooks& hooks) {
    hooks.progress(100, 400);
    gate.wait();  // until the test has seen that progress event
    hooks.progress(400, 400);
    return CommandResult{0, "{\"successes\": 310}\n", ""};
  });
  const int port = s.port;
  RawClient c(port);
  c.send(ui_request("GET", "/api/simulate/stream?tasks=400&seed=20261001", port));
  ASSERT_TRUE(c.read_until("data: {\"done\":100,\"total\":400}\n\n"));
  EXPECT_EQ(c.buf.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  gate.open();
  const UiReply r = read_reply(c);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_EQ(r.header("transfer-encoding"), "chunked");
  EXPECT_EQ(r.header("connection"), "close");
  expect_guard_headers(r);
  const auto events = events_of(r.body);
  ASSERT_GE(events.size(), 2u) << r.body;
  EXPECT_EQ(events.front(), (std::pair<std::string, std::string>{"progress", "{\"done\":100,\"total\":400}"}));
  EXPECT_EQ(events.back(), (std::pair<std::string, std::string>{"result", "{\"successes\": 310}"}));
  for (std::size_t i = 0; i + 1 < events.size(); ++i) EXPECT_EQ(events[i].first, "progress");
  EXPECT_EQ(s.fake.call(0), (Args{"simulate", "--tasks=400", "--seed=20261001", "--json"}));
  c.drain();
  EXPECT_TRUE(c.eof || c.reset);
}

TEST(UiServer, StreamEndsWithAnErrorEventForBadInput) {
  FakeServer s([](const Args&, const CommandHooks&) {
    return CommandResult{2, "", "p = 1.2 is out of range: p must be in [0, 1]"};
  });
  const UiReply r = get(s.port, "/api/simulate/stream?p=1.2");
  EXPECT_EQ(r.status, 200);
  const auto events = events_of(r.body);
  ASSERT_EQ(events.size(), 1u) << r.body;
  EXPECT_EQ(events[0].first, "error");
  EXPECT_EQ(Json::parse(events[0].second),
            (Json{{"error", "p = 1.2 is out of range: p must be in [0, 1]"}, {"code", 2}}));
}

TEST(UiServer, ClosingTheStreamCancelsTheCommandAtItsNextReport) {
  FakeServer s(until_cancelled("simulate"));
  const int port = s.port;
  {
    RawClient c(port);
    c.send(ui_request("GET", "/api/simulate/stream?tasks=10000000", port));
    ASSERT_TRUE(c.read_until("event: progress\n"));
  }  // closed here
  EXPECT_TRUE(s.fake.wait_cancelled());
  expect_still_serving(port);
}

TEST(UiServer, AClientLeavingAPlainRequestCancelsItsCommandToo) {
  FakeServer s(until_cancelled("sweep"));
  {
    RawClient c(s.port);
    c.send(ui_request("GET", "/api/sweep?p=0.1", s.port));
    ASSERT_TRUE(s.fake.wait_calls(1));
  }
  EXPECT_TRUE(s.fake.wait_cancelled());
}

TEST(UiServer, StopCancelsRunningCommandsAndClosesConnections) {
  FakeServer s(until_cancelled("simulate"));
  const int port = s.port;
  RawClient running(port), idle(port);
  running.send(ui_request("GET", "/api/simulate?tasks=10000000", port));
  idle.send(ui_request("GET", "/", port));
  EXPECT_EQ(read_reply(idle).status, 200);
  ASSERT_TRUE(s.fake.wait_calls(1));
  s.server->stop();
  EXPECT_TRUE(s.fake.wait_cancelled());
  running.drain();
  idle.drain();
  EXPECT_FALSE(running.timed_out || idle.timed_out);
  s.server->stop();  // idempotent
  RawClient after(port);
  after.send(ui_request("GET", "/", port));
  EXPECT_EQ(read_reply(after).status, 0);
}

// --- the real commands: the bytes relsim prints -----------------------------------

relsim::ui::CommandRunner real_runner() {
  return [](const Args& args, const CommandHooks& hooks) { return relsim::run_command(args, hooks); };
}

std::string cli_out(const std::string& args) {
  const auto run = relsim::test::run_relsim(args);
  EXPECT_EQ(run.code, 0) << args << ": " << run.err;
  return run.out;
}

TEST(UiServerCommands, ExactAnswersWhatTheCliPrints) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/exact?p=0.3&q=0.8&r=2&n=2");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, cli_out("exact --p 0.3 --q 0.8 --r 2 --n 2 --json"));
  EXPECT_EQ(fmt::format("{:.6f}", r.json()["success"].get<double>()), "0.763675");
}

TEST(UiServerCommands, SimulateAnswersWhatTheCliPrints) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/simulate?p=0.3&q=0.8&r=2&n=2&tasks=400&seed=20261001");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, cli_out("simulate --p 0.3 --q 0.8 --r 2 --n 2 --tasks 400 --seed 20261001 --json"));
  EXPECT_EQ(r.json()["successes"], 310);
}

TEST(UiServerCommands, StreamResultIsTheCliJsonOnOneLine) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/simulate/stream?p=0.3&q=0.8&r=2&n=2&tasks=400&seed=20261001");
  EXPECT_EQ(r.status, 200);
  const auto events = events_of(r.body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().first, "result");
  std::string cli = cli_out("simulate --p 0.3 --q 0.8 --r 2 --n 2 --tasks 400 --seed 20261001 --json");
  while (!cli.empty() && cli.back() == '\n') cli.pop_back();
  EXPECT_EQ(events.back().second, cli);
}

TEST(UiServerCommands, SweepAnswersTheCliCsv) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/sweep?p=0.3&q=0.3,0.8&r=2&n=2&tasks=400&seed=20261001");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/csv; charset=utf-8");
  EXPECT_EQ(r.body, cli_out("sweep --p 0.3 --q 0.3,0.8 --r 2 --n 2 --tasks 400 --seed 20261001"));
  EXPECT_EQ(r.body.rfind("p,q,r,n,b,g,chain", 0), 0u) << r.body;
}

TEST(UiServerCommands, OracleCountsNineRequestsForNaiveUnderSlowHeaders) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/oracle?fault=slow_headers&times=always&policy=naive&n=1&r=2");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body,
            cli_out("oracle --fault slow_headers --times always --policy naive --n 1 --r 2 --json --per-task"));
  EXPECT_EQ(r.json()["requests"], 9);
}

TEST(UiServerCommands, OutOfRangeValueIs400NamingIt) {
  UiServer server(config(), real_runner());
  expect_error(get(server.port(), "/api/exact?p=1.2&r=2&n=2"), 400, "1.2");
  expect_error(get(server.port(), "/api/exact?p=0.3&r=2&n=2&chain=sideways"), 400, "sideways");
}

}  // namespace
