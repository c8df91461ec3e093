// libFuzzer target: the mock server's request handling (server.hpp,
// sim/server.cpp) over a real loopback connection: Beast's request parser
// with the server's header and body limits, keep-alive and pipelining,
// Expect: 100-continue, path routing, the messages endpoint's body check and
// the control endpoints (scripts, logs, releases, gates).
//
// An input that begins with the byte 0x01 goes, without that byte, to a
// replaying server instead (relsim serve --replay, docs/replay.md) over a
// few recordings written once at start (a Messages API stream, an OpenAI
// whole answer, an upstream that broke off), at pace 0: the matcher on the
// request's body, the 404 that names the nearest recording, and the
// recorded events re-framed and broken by a script's faults.
//
// Each input is one connection's worth of bytes. A fresh server per input
// keeps a crash reproducible from its input alone (no script or gate left
// over from an earlier one); its timeouts are short so a held or paced reply
// costs little. The bytes are written, the connection half-closed and the
// reply read until the server closes or 300 ms pass; then the server must
// still answer GET /control/health with 200 (asked up to three times, on
// fresh connections), and must stop (the libFuzzer
// -timeout catches a stop that hangs). A crash, a sanitizer report, an
// exception inside a connection (every fuzz target turns the server's catch
// into an abort) or a server that no longer answers is a bug.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>

#include "relsim/formats/recording.hpp"
#include "relsim/server/server.hpp"
#include "support/loopback.hpp"

namespace {

using relsim::fuzz::Clock;
using relsim::fuzz::close_now;
using relsim::fuzz::connect_to;
using relsim::fuzz::read_until_close;
using relsim::fuzz::send_all;



// One GET /control/health on a fresh connection; true on a 200. What went
// wrong otherwise is written into `why`.
bool health_once(const relsim::Server& server, std::string& why) {
  const auto start = Clock::now();
  const std::size_t accepted = server.accepted();
  const int fd = connect_to(server.port());
  if (fd < 0) {
    why = std::string("cannot connect: ") + std::strerror(errno);
    return false;
  }
  send_all(fd, "GET /control/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  int error = 0;
  const std::string reply = read_until_close(fd, std::chrono::milliseconds(5000), &error);
  close_now(fd);
  if (reply.rfind("HTTP/1.1 200 ", 0) == 0) return true;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  // Whether the server took the connection tells its fault from the
  // loopback's.
  why = "got '" + reply.substr(0, 200) + "' after " + std::to_string(ms) + " ms" +
        (error ? std::string(" (") + std::strerror(error) + ")" : std::string()) + ", the server having accepted " +
        std::to_string(server.accepted() - accepted) + " connection(s) meanwhile";
  return false;
}

// The server must still answer after the input. Asking again on fresh
// connections tells a server that stopped answering (all three fail) from a
// check that failed on the harness's side. Under fuzzing, 4 health checks in
// 310,413 inputs, and 1 in 483,938, got no byte and an orderly end at once,
// though the server had accepted the connection. Traced on 2026-12-05:
// libFuzzer's SIGALRM (its -timeout watch, every 16 s) had interrupted the
// harness's poll, and the read gave up with nothing read; the server had
// answered. support/loopback.hpp now retries every call a signal
// interrupts, so a retry here is worth a look again.
void check_health(const relsim::Server& server) {
  std::string why[3];
  for (int i = 0; i < 3; ++i) {
    if (!health_once(server, why[i])) continue;
    // Said on stderr, so a fuzzing log shows how often the loopback did it.
    if (i > 0) std::fprintf(stderr, "fuzz_server_request: the health check was asked again after: %s\n", why[0].c_str());
    return;
  }
  std::fprintf(stderr, "fuzz_server_request: the health check failed 3 times: %s; %s; %s\n", why[0].c_str(),
               why[1].c_str(), why[2].c_str());
  std::abort();
}

// An exchange as the proxy records it: `events` an event stream's, else a whole body.
relsim::RecordedExchange recorded(relsim::Dialect dialect, const char* path, const char* body, const char* events,
                                  const char* whole, bool complete) {
  relsim::RecordedExchange x;
  x.dialect = dialect;
  x.entry = "ok";
  x.method = "POST";
  x.path = path;
  x.request_headers = {{"content-type", "application/json"}};
  x.request_body = body;
  x.status = 200;
  x.response_headers = {{"content-type", events ? "text/event-stream" : "application/json"}};
  x.headers_ms = 1.0;
  x.set_event_stream(events != nullptr);
  x.add_body(events ? events : whole, 2.0);
  if (!complete) x.error = "the upstream broke off";
  x.finish(complete, 3.0);
  return x;
}

// A directory of recordings for the replaying server, written once and
// removed when the process exits.
struct RemovedAtExit {
  std::string path;
  ~RemovedAtExit() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

const std::string& replay_dir() {
  static const RemovedAtExit dir{[] {
    char name[] = "/tmp/fuzz_server_replay.XXXXXX";
    if (::mkdtemp(name) == nullptr) std::abort();
    using relsim::Dialect;
    const relsim::RecordedExchange lines[] = {
        recorded(Dialect::anthropic, "/v1/messages",
                 R"({"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]})",
                 "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":"
                 "{\"input_tokens\":1,\"output_tokens\":1}}}\n\nevent: content_block_delta\ndata: {\"type\":"
                 "\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
                 "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
                 nullptr, true),
        recorded(Dialect::openai, "/v1/chat/completions", R"({"model":"m","messages":[{"role":"user","content":"hi"}]})",
                 nullptr,
                 R"({"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",)"
                 R"("content":"hi"},"finish_reason":"stop"}]})",
                 true),
        recorded(Dialect::anthropic, "/v1/messages", R"({"model":"m","stream":true,"messages":[]})",
                 "event: message_start\ndata: {\"type\":\"message_start\"}\n\n", nullptr, false)};
    std::string text;
    for (const relsim::RecordedExchange& x : lines) text += x.line() + "\n";
    std::FILE* f = std::fopen((std::string(name) + "/relsim-fuzz.jsonl").c_str(), "w");
    if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) std::abort();
    return std::string(name);
  }()};
  return dir.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  relsim::ServerConfig config;
  if (size > 0 && data[0] == 0x01) {
    config.replay_dir = replay_dir();
    config.replay_pace = 0.0;
    ++data;
    --size;
  }
  config.read_timeout = std::chrono::milliseconds(200);
  config.keep_alive_timeout = std::chrono::milliseconds(200);
  config.linger_timeout = std::chrono::milliseconds(50);
  config.max_tasks = 100;
  config.max_log_entries = 100;
  config.max_log_bytes = 1 << 20;
  relsim::Server server(config);

  const int fd = connect_to(server.port());
  if (fd < 0) {
    std::fprintf(stderr, "fuzz_server_request: cannot connect to a fresh server: %s\n", std::strerror(errno));
    std::abort();
  }
  send_all(fd, std::string_view(reinterpret_cast<const char*>(data), size));
  ::shutdown(fd, SHUT_WR);
  read_until_close(fd, std::chrono::milliseconds(300));
  close_now(fd);

  check_health(server);
  server.stop();
  return 0;
}
