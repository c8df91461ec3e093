// The MCP tools server's endpoint on relsim's HTTP server (api_routes.hpp,
// serve_mcp): the method and content-type checks of the streamable HTTP
// transport, then the service's answer, delivered now, after a hold, or cut
// off half-way.
#include <fmt/format.h>

#include "relsim/tools/mcp_service.hpp"
#include "ui/api_routes.hpp"

namespace relsim::ui {
namespace {

std::string_view path_of(const Request& request) {
  const std::string_view raw(request.target().data(), request.target().size());
  return raw.substr(0, raw.find('?'));
}

}  // namespace

Reply jsonrpc_reply(int status, std::string_view message, Headers headers) {
  constexpr int kInvalidRequest = -32600;
  return Reply{status, std::string(kJson), tools::jsonrpc_error(kInvalidRequest, message), std::move(headers)};
}

net::awaitable<bool> serve_mcp(UiConnection& conn, Request& request) {
  const bool keep = request.keep_alive();
  if (path_of(request) != "/mcp")
    co_return co_await conn.send(
        jsonrpc_reply(404, fmt::format("unknown path '{}': the MCP endpoint is /mcp", path_of(request).substr(0, 200))), keep);
  if (request.method() != http::verb::post) {
    // Built outside the co_await: GCC 12 rejects a braced list inside one.
    Headers allow;
    allow.emplace_back("allow", "POST");
    Reply refusal = jsonrpc_reply(405,
                              fmt::format("method {} is not allowed on /mcp: POST one JSON-RPC message (this server "
                                          "opens no stream and keeps no session)",
                                          std::string_view(request.method_string().data(),
                                                           request.method_string().size())
                                              .substr(0, 40)),
                              std::move(allow));
    co_return co_await conn.send(std::move(refusal), keep);
  }
  const auto type = request[http::field::content_type];
  if (!http_text::lower_case(std::string(type.data(), type.size())).starts_with("application/json"))
    co_return co_await conn.send(jsonrpc_reply(415, "the body must be JSON: send content-type: application/json"), keep);

  tools::McpService& service = *conn.context().config.tools;
  const tools::McpAnswer answer = service.handle(request.body());
  Reply reply{answer.status, std::string(kJson), answer.body, {}};
  switch (answer.delivery) {
    case tools::Delivery::now: break;
    case tools::Delivery::hold:
      if (!co_await conn.pause(service.hold())) co_return false;
      break;
    case tools::Delivery::drop: {
      // The head and half the body, then the connection ends.
      const std::string bytes = serialize(reply, false);
      const std::size_t head = bytes.size() - reply.body.size();
      co_await conn.write(bytes.substr(0, head + reply.body.size() / 2));
      co_return false;
    }
  }
  co_return co_await conn.send(std::move(reply), keep);
}

}  // namespace relsim::ui
