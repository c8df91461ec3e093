#pragma once
// Header only: a loopback HTTP server for tests that need what the mock
// never sends. It answers `count` requests, one connection each, with
// `reply` (raw bytes, sent as they are), then shuts the connection down.
#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <sys/socket.h>

#include <string>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace relsim::test {

class StubServer {
 public:
  StubServer(std::string reply, int count)
      : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}), reply_(std::move(reply)) {
    thread_ = std::thread([this, count] {
      namespace http = boost::beast::http;
      for (int i = 0; i < count; ++i) {
        boost::asio::ip::tcp::socket socket(ioc_);
        boost::system::error_code ec;
        acceptor_.accept(socket, ec);
        if (ec) return;
        boost::beast::flat_buffer buffer;
        http::request<http::string_body> req;
        http::read(socket, buffer, req, ec);
        if (ec) continue;
        boost::asio::write(socket, boost::asio::buffer(reply_), ec);
        socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
      }
    });
  }
  // A test that sent fewer than `count` requests ends here too: the listening
  // socket is shut down, which ends the accept it waits in.
  ~StubServer() {
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    thread_.join();
  }
  StubServer(const StubServer&) = delete;
  StubServer& operator=(const StubServer&) = delete;
  int port() const { return acceptor_.local_endpoint().port(); }

 private:
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::string reply_;
  std::thread thread_;
};

}  // namespace relsim::test
