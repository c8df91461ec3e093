#pragma once
// Header only: loopback sockets for the fuzz targets that talk to a server
// over a real connection (fuzz_server_request.cpp, fuzz_proxy_upstream.cpp):
// connect with retries, write everything, read until the peer closes, close
// with a reset.
//
// Every call here is retried when a signal interrupts it (EINTR): libFuzzer
// runs an interval timer (SIGALRM every -timeout / 2 + 1 seconds, without
// SA_RESTART) to watch for slow inputs, and poll() is never restarted by the
// kernel anyway. Before these retries an alarm that landed in the health
// check's wait ended the read with no byte, which looked like the server
// closing a connection it had accepted (traced on 2026-12-05: an EINTR from
// poll at each such health check, and the server had answered).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

namespace relsim::fuzz {

using Clock = std::chrono::steady_clock;

// Connects to the server on loopback. A refused or unavailable connect is
// retried for up to 5 s: thousands of short-lived servers and connections a
// minute can leave the loopback's ephemeral ports briefly exhausted (sockets
// in TIME_WAIT), which is the machine's state, not a server fault. Returns -1
// with errno set when every attempt failed.
inline int connect_to(int port) {
  const auto until = Clock::now() + std::chrono::seconds(5);
  for (;;) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return fd;
    // An interrupted connect goes on in the background: wait for it to finish.
    if (errno == EINTR) {
      pollfd p{fd, POLLOUT, 0};
      int r;
      while ((r = ::poll(&p, 1, 5000)) < 0 && errno == EINTR) {
      }
      int so_error = 0;
      socklen_t len = sizeof so_error;
      if (r > 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) == 0 && so_error == 0) return fd;
      errno = r > 0 ? so_error : ETIMEDOUT;
    }
    const int error = errno;
    ::close(fd);
    if (Clock::now() >= until) {
      errno = error;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Closes with a reset, so the harness's side of the connection does not sit
// in TIME_WAIT holding an ephemeral port.
inline void close_now(int fd) {
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(fd);
}

// Writes what the server takes; it may close early (a refused request).
inline void send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Reads until the server closes (or resets), or until `limit` passes. A
// reset or a read error is kept in `error` (0 for an orderly close or the
// limit).
inline std::string read_until_close(int fd, std::chrono::milliseconds limit, int* error = nullptr) {
  std::string out;
  const auto until = Clock::now() + limit;
  char buf[16384];
  if (error) *error = 0;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && error) *error = errno;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace relsim::fuzz
