// The control API under /control/ (routes.hpp; docs/wire.md lists it): set
// a task's script, read its log, release its held replies, open a gate, and
// a health check. A harness drives the server through it from any language.
#include <string>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "live/server/routes.hpp"

namespace relsim::mock {
namespace {

enum class Endpoint { none, health, script, log, release, open_gate };

struct Route {
  Endpoint endpoint = Endpoint::none;
  http::verb method = http::verb::get;  // the one it allows
  std::int64_t task = 0;
  std::string_view gate;
};

Route route_of(const std::vector<std::string_view>& parts) {
  if (parts.size() == 2 && parts[1] == "health") return {Endpoint::health, http::verb::get, 0, {}};
  if (parts.size() != 4) return {};
  if (parts[1] == "gates" && parts[3] == "open") return {Endpoint::open_gate, http::verb::post, 0, parts[2]};
  const auto task = parts[1] == "tasks" ? parse_task(parts[2]) : std::nullopt;
  if (!task) return {};
  if (parts[3] == "script") return {Endpoint::script, http::verb::post, *task, {}};
  if (parts[3] == "log") return {Endpoint::log, http::verb::get, *task, {}};
  if (parts[3] == "release") return {Endpoint::release, http::verb::post, *task, {}};
  return {};
}

std::size_t set_script(ServerState& state, std::int64_t task, const std::string& text) {
  const Json body = Json::parse(text, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("responses"))
    throw InputError("script body must be a JSON object {\"responses\": [...]}");
  auto script = parse_script(body.at("responses"));
  const std::size_t entries = script.size();
  state.set_script(task, std::move(script));
  return entries;
}

// The 200 reply of an endpoint; throws InputError for a 400.
Json answer(ServerState& state, const Route& route, const std::string& body) {
  switch (route.endpoint) {
    case Endpoint::health:
      return Json{{"status", "ok"}, {"port", state.port()}, {"connections", state.connection_count()}};
    case Endpoint::script:
      return Json{{"task", route.task}, {"entries", set_script(state, route.task, body)}};
    case Endpoint::log:
      return to_json(state.log(route.task));
    case Endpoint::release:
      return Json{{"task", route.task}, {"released", state.release(route.task)}};
    case Endpoint::open_gate: {
      const std::string gate(route.gate);
      return Json{{"gate", gate}, {"released", state.open_gate(gate)}};
    }
    case Endpoint::none: break;
  }
  RELSIM_ASSERT(false);
  return {};
}

std::string unknown_path_message(const std::vector<std::string_view>& parts) {
  std::string path;
  for (const auto part : parts) {
    path += '/';
    path += part;
  }
  return fmt::format("unknown control path '{}': use /control/health, /control/tasks/{{task}}/script|log|"
                     "release or /control/gates/{{name}}/open",
                     path.substr(0, 200));
}

}  // namespace

// Replies are built into named values before each co_await: GCC 12 cannot
// keep the array behind an initializer list alive across one ("array used as
// initializer").
net::awaitable<bool> control(Connection& conn, Request& req, const std::vector<std::string_view>& parts, bool keep) {
  const Route route = route_of(parts);
  if (route.endpoint == Endpoint::none) {
    co_await conn.send_error(404, "not_found_error", unknown_path_message(parts), keep);
    co_return keep;
  }
  if (req.method() != route.method)
    co_return (co_await conn.not_allowed(std::string(req.method_string()), std::string(http::to_string(route.method)),
                                         keep)) && keep;
  std::string problem;
  Json reply;
  try {
    reply = answer(conn.state(), route, req.body());
  } catch (const InputError& e) {
    problem = e.what();
  }
  if (!problem.empty()) co_return (co_await conn.send_error(400, "invalid_request_error", problem, keep)) && keep;
  co_return (co_await conn.send_json(200, std::move(reply), keep)) && keep;
}

}  // namespace relsim::mock
