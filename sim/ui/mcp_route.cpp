// The MCP tools server's endpoint on relsim's HTTP server (api_routes.hpp,
// serve_mcp): the method and content-type checks of the streamable HTTP
// transport, then the service's answer, delivered now, after a hold, or cut
// off half-way.
#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "relsim/tools/mcp_service.hpp"
#include "ui/api_routes.hpp"

namespace relsim::ui {
namespace {

std::string_view path_of(const Request& request) {
  const std::string_view raw(request.target().data(), request.target().size());
  return raw.substr(0, raw.find('?'));
}

// A tenant's or an agent's name in the path: 1 to 64 of [A-Za-z0-9._-].
bool is_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (const char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

// /mcp, or /t/TENANT/a/AGENT/mcp (docs/contention.md): who calls.
std::optional<tools::Caller> caller_of(std::string_view path) {
  if (path == "/mcp") return tools::Caller{};
  constexpr std::string_view kTenant = "/t/", kAgent = "/a/", kEnd = "/mcp";
  if (!path.starts_with(kTenant) || !path.ends_with(kEnd)) return std::nullopt;
  const std::string_view middle = path.substr(kTenant.size(), path.size() - kTenant.size() - kEnd.size());
  const auto split = middle.find(kAgent);
  if (split == std::string_view::npos) return std::nullopt;
  const std::string_view tenant = middle.substr(0, split), agent = middle.substr(split + kAgent.size());
  if (!is_name(tenant) || !is_name(agent)) return std::nullopt;
  return tools::Caller{std::string(tenant), std::string(agent)};
}

}  // namespace

Reply jsonrpc_reply(int status, std::string_view message, Headers headers) {
  constexpr int kInvalidRequest = -32600;
  return Reply{status, std::string(kJson), tools::jsonrpc_error(kInvalidRequest, message), std::move(headers)};
}

net::awaitable<bool> serve_mcp(UiConnection& conn, Request& request) {
  const bool keep = request.keep_alive();
  const std::optional<tools::Caller> caller = caller_of(path_of(request));
  if (!caller)
    co_return co_await conn.send(
        jsonrpc_reply(404, fmt::format("unknown path '{}': the MCP endpoint is /mcp, or /t/TENANT/a/AGENT/mcp with "
                                       "names of 1 to 64 letters, digits, '.', '_' or '-'",
                                       path_of(request).substr(0, 200))),
        keep);
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
  const tools::McpAnswer answer = service.handle(request.body(), *caller);
  Reply reply{answer.status, std::string(kJson), answer.body, {}};
  if (answer.retry_after_s > 0) reply.headers.emplace_back("retry-after", std::to_string(answer.retry_after_s));
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
