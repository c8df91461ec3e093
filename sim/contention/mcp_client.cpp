// The reference agents' MCP client (mcp_client.hpp): Beast's synchronous
// HTTP over one kept-alive connection.
#include "relsim/contention/mcp_client.hpp"

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

  // One exchange; false if the connection failed or the server closed it.
  bool exchange(const http::request<http::string_body>& req, http::response<http::string_body>& res) {
    beast::error_code ec;
    if (!open) {
      stream.expires_after(std::chrono::seconds(10));
      stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)), ec);
      if (ec) return false;
      open = true;
    }
    stream.expires_after(std::chrono::seconds(30));
    http::write(stream, req, ec);
    beast::flat_buffer buffer;
    if (!ec) http::read(stream, buffer, res, ec);
    if (ec || !res.keep_alive()) {
      stream.socket().close(ec);
      open = false;
    }
    return res.result_int() != 0 && !ec;
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
  // A connection the server closed while idle is opened again once.
  if (!impl_->exchange(req, res) && res.result_int() == 0) {
    res = {};
    if (!impl_->exchange(req, res)) return reply;
  }
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
