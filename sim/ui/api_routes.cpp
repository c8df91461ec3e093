// Routing the workbench's requests (api_routes.hpp): the Host guard, the
// page's assets, and the API endpoints that run a command and turn its exit
// code into a status (0 -> 200; 1, a check failed with the output printed ->
// 200 and x-relsim-exit: 1; 2, bad input -> 400; 130, cancelled -> 503;
// anything else -> 500).
#include "ui/api_routes.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <variant>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/ui/assets.hpp"
#include "relsim/ui/shop.hpp"
#include "relsim/ui/query.hpp"

namespace relsim::ui {
namespace {

enum class Kind { json, csv, json_lines, stream, upload };

struct Route {
  std::string_view path;
  std::string_view endpoint;  // command_args's
  Kind kind;
  std::span<const UploadFile> files = {};  // Kind::upload: the files the body holds
};

constexpr UploadFile kAuditFiles[] = {{"plan", "--plan", "plan.jsonl"}, {"log", "--log", "log.jsonl"}};
constexpr UploadFile kFitFiles[] = {{"log", "", "log"}};  // fit's FILE, a positional
constexpr UploadFile kTrendFiles[] = {{"history", "--history", "history.jsonl"}};
constexpr UploadFile kOraclePlanFiles[] = {{"plan", "", "plan.jsonl"}};  // oracle's PLAN, a positional

constexpr std::array<Route, 13> kRoutes = {{
    {"/api/exact", "exact", Kind::json},
    {"/api/simulate", "simulate", Kind::json},
    {"/api/simulate/stream", "simulate", Kind::stream},
    {"/api/oracle", "oracle", Kind::json},
    {"/api/live", "live", Kind::json},
    {"/api/sweep", "sweep", Kind::csv},
    {"/api/tune", "tune", Kind::json},
    {"/api/fleet", "fleet", Kind::json},
    {"/api/audit", "audit", Kind::upload, kAuditFiles},
    {"/api/fit", "fit", Kind::upload, kFitFiles},
    {"/api/contention/trend", "contention/trend", Kind::upload, kTrendFiles},
    {"/api/plan", "plan", Kind::json_lines},
    {"/api/oracle/plan", "oracle/plan", Kind::upload, kOraclePlanFiles},
}};

bool host_allowed(const Request& request, int port) {
  const auto host = request[http::field::host];
  const std::string value = http_text::lower_case(std::string(host.data(), host.size()));
  return value == fmt::format("127.0.0.1:{}", port) || value == fmt::format("localhost:{}", port);
}

Reply reply_of(const CommandResult& r, std::string_view content_type) {
  switch (r.code) {
    case 0: return Reply{200, std::string(content_type), r.out, {}};
    case 1: return Reply{200, std::string(content_type), r.out, {{"x-relsim-exit", "1"}}};
    case 2: return json_error(400, r.err);
    case kCommandCancelled: return json_error(503, r.err.empty() ? "cancelled" : r.err);
    default: return json_error(500, r.err.empty() ? fmt::format("the command failed (exit {})", r.code) : r.err);
  }
}

Reply not_allowed(const Request& request, std::string_view allow) {
  return json_error(405,
                    fmt::format("method {} is not allowed here: use {}",
                                std::string_view(request.method_string().data(), request.method_string().size()),
                                allow),
                    {{"allow", std::string(allow)}});
}

// The BugHunt shop: its page, its script and its cart; GET only.
Reply shop_reply(const Request& request) {
  const std::string_view raw(request.target().data(), request.target().size());
  const std::string_view path = raw.substr(0, raw.find('?'));
  const auto get = [&](std::string_view type, std::string body) {
    if (request.method() != http::verb::get) return not_allowed(request, "GET");
    return Reply{200, std::string(type), std::move(body), {}};
  };
  if (path == "/") return get("text/html; charset=utf-8", std::string(shop_html()));
  if (path == "/shop.js") return get("text/javascript; charset=utf-8", std::string(shop_js()));
  if (path == "/api/cart") return get(kJson, cart_json());
  return json_error(404, fmt::format("unknown path '{}': the shop serves GET /, /shop.js and /api/cart",
                                     path.substr(0, 200)));
}

// The page's own files: GET only.
Reply asset_reply(const Request& request, const Asset& asset) {
  if (request.method() != http::verb::get) return not_allowed(request, "GET");
  return Reply{200, std::string(asset.content_type), std::string(asset.body), {}};
}

// The work a request to an API route runs, or the reply that refuses it.
std::variant<Work, Reply> prepare(const UiContext& context, const Request& request, const Route& route,
                                  const Target& target) {
  const bool upload = route.kind == Kind::upload;
  if (request.method() != (upload ? http::verb::post : http::verb::get))
    return not_allowed(request, upload ? "POST" : "GET");
  try {
    std::vector<std::string> args = command_args(route.endpoint, target.params);
    if (upload)
      return upload_work(context.runner, std::move(args), route.files, parse_upload_body(request.body(), route.files));
    return Work([runner = context.runner, args = std::move(args)](const CommandHooks& hooks) {
      return runner(args, hooks);
    });
  } catch (const InputError& e) {
    return json_error(400, e.what());
  }
}

net::awaitable<bool> serve_api(UiConnection& conn, Request& request, const Route& route, const Target& target) {
  const bool keep = request.keep_alive();
  auto prepared = prepare(conn.context(), request, route, target);
  if (auto* refusal = std::get_if<Reply>(&prepared)) co_return co_await conn.send(std::move(*refusal), keep);
  Work work = std::move(std::get<Work>(prepared));
  if (route.kind == Kind::stream) co_return co_await serve_event_stream(conn, std::move(work));
  const CommandResult result = co_await conn.run_job(std::move(work));
  const std::string_view type = route.kind == Kind::csv ? kCsv : route.kind == Kind::json_lines ? kJsonLines : kJson;
  co_return co_await conn.send(reply_of(result, type), keep);
}

// The route of a target (nullptr: none) and the target parsed for it. The
// path alone is parsed first: the page's own address carries its state in a
// query (?p=0.3&lab.fault=stall...) that the page reads, not the server.
std::variant<std::pair<const Route*, Target>, Reply> route_of(const Request& request) {
  const std::string_view raw(request.target().data(), request.target().size());
  try {
    Target target = parse_target(raw.substr(0, raw.find('?')));
    for (const Route& r : kRoutes)
      if (r.path == target.path) return std::pair{&r, parse_target(raw)};
    return std::pair{static_cast<const Route*>(nullptr), std::move(target)};
  } catch (const InputError& e) {
    return json_error(400, e.what());
  }
}

}  // namespace

bool takes_upload(std::string_view path) {
  return std::any_of(kRoutes.begin(), kRoutes.end(), [&](const Route& r) { return r.kind == Kind::upload && r.path == path; });
}

net::awaitable<bool> serve(UiConnection& conn, Request& request) {
  const bool keep = request.keep_alive();
  if (!host_allowed(request, conn.context().port))
    co_return co_await conn.send(
        json_error(403, fmt::format("the Host header must be 127.0.0.1:{0} or localhost:{0}", conn.context().port)),
        keep);
  if (conn.context().config.site == Site::shop) co_return co_await conn.send(shop_reply(request), keep);
  if (conn.context().config.site == Site::tools) co_return co_await serve_mcp(conn, request);
  auto routed = route_of(request);
  if (auto* refusal = std::get_if<Reply>(&routed)) co_return co_await conn.send(std::move(*refusal), keep);
  const auto& [route, target] = std::get<0>(routed);
  if (route) co_return co_await serve_api(conn, request, *route, target);
  if (const Asset* asset = find_asset(target.path)) co_return co_await conn.send(asset_reply(request, *asset), keep);
  co_return co_await conn.send(
      json_error(404, fmt::format("unknown path '{}': the workbench serves GET /, its assets and /api/exact, "
                                  "/api/simulate, /api/simulate/stream, /api/oracle, /api/live, /api/sweep, /api/tune, /api/fleet, "
                                  "/api/plan and POST /api/audit, /api/fit, /api/contention/trend, /api/oracle/plan",
                                  target.path.substr(0, 200))),
      keep);
}

}  // namespace relsim::ui
