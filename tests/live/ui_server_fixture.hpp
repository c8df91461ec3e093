#pragma once
// For the workbench server's tests (ui_server*_test.cpp): HTTP through
// Beast's parser over the raw client (UiReply, read_reply, ui_request, get),
// the checks of the guard headers and of an error body, and a UiServer over
// a fake CommandRunner (FakeServer) that records its arguments and answers as
// scripted, so that the server is tested alone. Nothing waits for a time to
// pass: a runner that must hold on does so on a Gate the test opens, and each
// wait has a generous safety limit (kUiLimit) that only turns a server bug
// into a failure instead of a hang.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/ui/ui_server.hpp"
#include "support/raw_client.hpp"

namespace relsim::test::ui_server {

namespace http = boost::beast::http;
using relsim::Json;
using relsim::test::RawClient;
using relsim::ui::CommandHooks;
using relsim::ui::CommandResult;
using relsim::ui::UiConfig;
using relsim::ui::UiServer;
using Args = std::vector<std::string>;
using namespace std::chrono_literals;

inline constexpr auto kUiLimit = 30s;  // safety limit of every wait; never reached when the server is right

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
inline UiReply read_reply(RawClient& c) {
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

inline std::string ui_request(const std::string& method, const std::string& target, int port,
                              const std::string& body = "", const std::string& extra = "") {
  return fmt::format("{} {} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\ncontent-length: {}\r\n{}\r\n{}", method, target, port,
                     body.size(), extra, body);
}

inline UiReply round_trip(int port, const std::string& bytes) {
  RawClient c(port);
  c.send(bytes);
  return read_reply(c);
}
inline UiReply get(int port, const std::string& target) { return round_trip(port, ui_request("GET", target, port)); }

// The events of a text/event-stream body: (name, data) in order.
inline std::vector<std::pair<std::string, std::string>> events_of(const std::string& body) {
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

inline void expect_guard_headers(const UiReply& r) {
  EXPECT_EQ(r.header("cache-control"), "no-store");
  EXPECT_EQ(r.header("x-content-type-options"), "nosniff");
}

inline void expect_error(const UiReply& r, int status, const std::string& part) {
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
        return script ? script(args, hooks) : CommandResult{0, "{\"ok\": true}\n", "", ""};
      } catch (const relsim::Cancelled&) {
        const std::lock_guard lock(mu);
        saw_cancelled = true;
        cv.notify_all();
        return CommandResult{relsim::ui::kCommandCancelled, "", "cancelled", ""};
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
inline auto until_cancelled(const std::string& command) {
  return [command](const Args& args, const CommandHooks& hooks) {
    if (args[0] != command) return CommandResult{0, "{}\n", "", ""};
    for (std::int64_t i = 0;; ++i) {
      hooks.progress(i, 1'000'000'000);
      std::this_thread::sleep_for(1ms);  // only to spare the CPU; nothing depends on it
    }
  };
}

inline UiConfig config(int threads = 2) {
  UiConfig c;
  c.threads = threads;
  return c;
}
inline UiConfig config(const std::function<void(UiConfig&)>& tweak) {
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

// After a limit was hit: the next client is still served.
inline void expect_still_serving(int port) { EXPECT_EQ(get(port, "/api/exact?p=0.3").status, 200); }

}  // namespace relsim::test::ui_server
