// The reference agents' MCP client (mcp_client.hpp): Beast's synchronous
// HTTP over one kept-alive connection.
#include "relsim/contention/mcp_client.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <fmt/format.h>

namespace relsim::contention {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct McpClient::Impl {
  asio::io_context io;
  beast::tcp_stream stream{io};
  bool open = false;
  int port;
  std::string target, host;
  std::uint64_t next_id = 1;

  enum class Result { answered, closed_idle, failed };

  bool connect() {
    beast::error_code ec;
    stream.socket().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)), ec);
    if (ec) return false;
    // Blocking calls ignore Beast's expiry: the socket's own timeouts bound
    // a server that stops answering.
    const timeval limit{30, 0};
    ::setsockopt(stream.socket().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(stream.socket().native_handle(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    open = true;
    return true;
  }

  void close() {
    beast::error_code ignored;
    stream.socket().close(ignored);
    open = false;
  }

  // One exchange. closed_idle: a kept-alive connection the server had
  // closed before this request reached it (nothing written, or the end of
  // the stream before any byte of an answer), which is safe to send again.
  Result exchange(const http::request<http::string_body>& req, http::response<http::string_body>& res) {
    const bool reused = open;
    if (!open && !connect()) return Result::failed;
    beast::error_code ec;
    http::write(stream, req, ec);
    if (ec) {
      close();
      return reused ? Result::closed_idle : Result::failed;
    }
    beast::flat_buffer buffer;
    http::read(stream, buffer, res, ec);
    if (ec) {
      const bool nothing = ec == http::error::end_of_stream && buffer.size() == 0;
      close();
      return reused && nothing ? Result::closed_idle : Result::failed;
    }
    if (!res.keep_alive()) close();
    return Result::answered;
  }
};

McpClient::McpClient(int port, std::string tenant, std::string agent) : impl_(std::make_unique<Impl>()) {
  impl_->port = port;
  impl_->target = fmt::format("/t/{}/a/{}/mcp", tenant, agent);
  impl_->host = fmt::format("127.0.0.1:{}", port);
}

McpClient::~McpClient() = default;

ToolReply McpClient::call(const std::string& tool, const Json& arguments) {
  http::request<http::string_body> req{http::verb::post, impl_->target, 11};
  req.set(http::field::host, impl_->host);
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "application/json, text/event-stream");
  req.keep_alive(true);
  req.body() = Json{{"jsonrpc", "2.0"},
                    {"id", impl_->next_id++},
                    {"method", "tools/call"},
                    {"params", {{"name", tool}, {"arguments", arguments}}}}
                   .dump();
  req.prepare_payload();
  http::response<http::string_body> res;
  ToolReply reply;
  // Sent again only when the server cannot have seen it (a kept-alive
  // connection it had closed); a call it may have run is not repeated.
  Impl::Result sent = impl_->exchange(req, res);
  if (sent == Impl::Result::closed_idle) {
    res = {};
    sent = impl_->exchange(req, res);
  }
  if (sent != Impl::Result::answered) return reply;
  reply.status = res.result_int();
  if (reply.status == 429) {
    const auto it = res.find(http::field::retry_after);
    if (it != res.end()) reply.retry_after_s = std::atoll(std::string(it->value()).c_str());
  }
  const Json body = Json::parse(res.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    reply.is_error = true;
    return reply;
  }
  if (body.contains("error")) {
    reply.is_error = true;
    reply.text = body["error"].value("message", "");
    return reply;
  }
  const Json& result = body["result"];
  reply.is_error = result.value("isError", false);
  if (result.contains("content") && result["content"].is_array() && !result["content"].empty())
    reply.text = result["content"][0].value("text", "");
  reply.result = Json::parse(reply.text, nullptr, false);
  if (reply.result.is_discarded()) reply.result = nullptr;
  return reply;
}

}  // namespace relsim::contention
