#pragma once
// A raw HTTP/1.1 client for server tests: one loopback connection, bytes in
// and out, and how it ended (EOF, reset, timeout). Header-only; receive and
// send time out after 10 s, so a test never blocks for good.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace relsim::test {

class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    connected = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() { close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void send(std::string_view bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) {
        send_failed = true;
        return;
      }
      off += static_cast<std::size_t>(n);
    }
  }
  // Reads what is there into `buf`; false at the end of the connection.
  bool fill() {
    char tmp[16384];
    const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n > 0) {
      buf.append(tmp, static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0) eof = true;
    else if (errno == ECONNRESET) reset = true;
    else if (errno == EAGAIN || errno == EWOULDBLOCK) timed_out = true;
    else other_error = true;
    return false;
  }
  // Reads until `needle` has come (false if the connection ends first).
  bool read_until(std::string_view needle) {
    while (buf.find(needle) == std::string::npos)
      if (!fill()) return false;
    return true;
  }
  void drain() {
    while (fill()) {
    }
  }
  // Bytes the kernel holds for us that we have not read.
  int unread() const {
    int n = 0;
    ::ioctl(fd_, FIONREAD, &n);
    return n;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void abort() {  // close with a reset
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close();
  }
  bool ended() const { return eof || reset || timed_out || other_error; }

  std::string buf;
  bool connected = false, send_failed = false, eof = false, reset = false, timed_out = false, other_error = false;

 private:
  int fd_ = -1;
};

// The body of a whole HTTP reply: what follows its head ("" when the head never ended).
inline std::string body_of(const std::string& reply) {
  const auto at = reply.find("\r\n\r\n");
  return at == std::string::npos ? "" : reply.substr(at + 4);
}

}  // namespace relsim::test
