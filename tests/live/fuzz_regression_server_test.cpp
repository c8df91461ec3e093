// A fuzzing finding (tests/unit/fuzz_regression_test.cpp has the rest) that
// needs the mock server over loopback.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "relsim/server/server.hpp"

namespace relsim {
namespace {

// A JSON array nested `depth` deep: a megabyte of it overflowed the stack of
// whatever serialised it recursively for an error message.
std::string nested_array(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// The server parses a control body of up to 1 MiB; one nested half a
// million deep took the whole server down (a stack overflow in its thread).
TEST(FuzzRegression, ServerAnswers400ToADeepScriptAndStaysUp) {
  Server server;
  const auto exchange = [&](const std::string& request) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(server.port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    for (std::size_t at = 0; at < request.size();) {
      const ssize_t n = ::send(fd, request.data() + at, request.size() - at, MSG_NOSIGNAL);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
    std::string reply;
    char buf[4096];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10'000) <= 0) break;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      reply.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return reply;
  };
  const std::string body = "{\"responses\": [" + nested_array(500'000) + "]}";
  const std::string reply = exchange("POST /control/tasks/0/script HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                     std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  EXPECT_EQ(reply.substr(0, 13), "HTTP/1.1 400 ");
  EXPECT_NE(reply.find("nested more than 32 deep"), std::string::npos);
  EXPECT_EQ(exchange("GET /control/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").substr(0, 13),
            "HTTP/1.1 200 ");
}

}  // namespace
}  // namespace relsim
