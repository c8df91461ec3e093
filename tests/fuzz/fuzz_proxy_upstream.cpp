// libFuzzer target: what relsim proxy reads from an upstream (docs/proxy.md;
// sim/server/upstream.cpp, stream_fault.cpp): Beast's response parser over
// whatever the upstream sends (a status line or not, any headers, chunked or
// content-length framing, broken off anywhere), and the in-stream fault that
// breaks an event stream on its way back (or a whole JSON answer, read
// first: whole_fault.cpp).
//
// The first byte picks the entry the proxy's one task takes (ok, cut,
// no_stop, malformed, overloaded: byte mod 5) and the dialect of the
// request (byte / 5 odd: OpenAI's /v1/chat/completions, whose chunks the
// in-stream faults parse as JSON); the rest is what a fake upstream on
// loopback writes in answer to the forwarded request before it closes. A
// client asks the proxy and reads its answer until the proxy closes or 2 s
// pass; then the proxy must still answer GET /control/health with 200. A
// crash, a sanitizer report, an exception inside a connection (an abort in
// the fuzz targets) or a proxy that no longer answers is a bug.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "relsim/server/server.hpp"
#include "support/loopback.hpp"

namespace {

using relsim::fuzz::close_now;
using relsim::fuzz::connect_to;
using relsim::fuzz::read_until_close;
using relsim::fuzz::send_all;

int listen_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) std::abort();
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

// The fake upstream: each connection gets the current reply, then a close.
struct Upstream {
  int fd = -1, port = 0;
  std::mutex mu;
  std::string reply;
  std::thread thread;
  Upstream() {
    fd = listen_loopback(port);
    thread = std::thread([this] {
      for (;;) {
        const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        timeval tv{0, 200000};
        ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        std::string request;
        char buf[4096];
        while (request.find("\r\n\r\n") == std::string::npos) {
          const ssize_t n = ::recv(c, buf, sizeof buf, 0);
          if (n < 0 && errno == EINTR) continue;  // libFuzzer's SIGALRM (support/loopback.hpp)
          if (n <= 0) break;
          request.append(buf, static_cast<std::size_t>(n));
        }
        std::string out;
        {
          std::lock_guard lock(mu);
          out = reply;
        }
        send_all(c, out);
        ::close(c);  // a clean end: the proxy reads all of it, then the close
      }
    });
    thread.detach();
  }
};

constexpr const char* kEntries[] = {"ok", "cut", "no_stop", "malformed", "overloaded"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static Upstream upstream;
  {
    std::lock_guard lock(upstream.mu);
    upstream.reply.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  }
  relsim::ServerConfig config;
  config.upstream = relsim::parse_upstream("http://127.0.0.1:" + std::to_string(upstream.port));
  config.upstream_timeout = std::chrono::milliseconds(1000);
  relsim::Server proxy(config);
  proxy.set_script(0, relsim::script_of({kEntries[data[0] % 5]}));
  const bool openai = (data[0] / 5) % 2 == 1;
  const std::string path = openai ? "/t/0/v1/chat/completions" : "/t/0/v1/messages";
  const std::string body = R"({"model":"m","max_tokens":8,"stream":true,"messages":[]})";
  const int fd = connect_to(proxy.port());
  if (fd < 0) {
    std::perror("connecting to the proxy for 5 s");
    std::abort();
  }
  send_all(fd, "POST " + path + " HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body);
  read_until_close(fd, std::chrono::milliseconds(2000));
  close_now(fd);
  std::string answer;
  for (int attempt = 0; attempt < 3 && answer.rfind("HTTP/1.1 200", 0) != 0; ++attempt) {
    const int health = connect_to(proxy.port());
    if (health < 0) continue;
    send_all(health, "GET /control/health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n");
    answer = read_until_close(health, std::chrono::milliseconds(2000));
    close_now(health);
  }
  if (answer.rfind("HTTP/1.1 200", 0) != 0) {
    std::fprintf(stderr, "the proxy no longer answers GET /control/health: '%.200s'\n", answer.c_str());
    std::abort();
  }
  return 0;
}
