// Routing a request, and the messages endpoint up to the script entry it
// takes (routes.hpp); replay.cpp answers as the entry says.
#include "live/server/routes.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "relsim/core/parse.hpp"
#include "live/server/replay.hpp"

namespace relsim::mock {
namespace {

// The non-empty segments of a path: "/t//1/" -> {"t", "1"}.
std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    const std::size_t j = std::min(path.find('/', i), path.size());
    parts.push_back(path.substr(i, j - i));
    i = j;
  }
  return parts;
}

LoggedRequest record(const Request& req, double received_ms) {
  LoggedRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  for (const auto& field : req)
    r.headers.emplace_back(wire::lower_case(std::string(field.name_string())), std::string(field.value()));
  r.body_bytes = req.body().size();
  r.body = req.body().substr(0, kMaxLoggedBody);
  r.received_ms = received_ms;
  return r;
}

// POST /t/{task}/v1/messages: checks the method and body (neither takes an
// entry), takes the task's next entry and has replay() answer it.
net::awaitable<bool> messages(Connection& conn, Request& req, std::int64_t task, double received, bool keep) {
  ServerState& state = conn.state();
  LoggedRequest rec = record(req, received);
  if (req.method() != http::verb::post) {
    state.log_unscripted(task, std::move(rec), 405);
    co_await conn.not_allowed(std::string(req.method_string()), "POST", keep);
    co_return keep;
  }
  const Json body = Json::parse(req.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("stream") || body["stream"] != true) {
    state.log_unscripted(task, std::move(rec), 400);
    co_await conn.send_error(400, "invalid_request_error",
                             body.is_discarded() ? "request body is not valid JSON"
                                                 : "request body must be a JSON object with \"stream\": true",
                             keep);
    co_return keep;
  }
  const std::size_t body_bytes = req.body().size();
  const Popped p = state.pop(task, std::move(rec));
  if (!p.found) {
    const bool ok = co_await conn.send_error(404, "not_found_error", p.why, keep);
    state.finish(task, p, 404, ok ? "complete" : "client_gone");
    co_return keep && ok;
  }
  const Outcome o = co_await replay(conn, task, p, body_bytes, keep);
  state.finish(task, p, o.status, o.end);
  co_return o.keep;
}

}  // namespace

std::optional<std::int64_t> parse_task(std::string_view s) {
  // Digits only (no sign), and few enough that every such number fits.
  if (s.size() > 18 || s.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return parse_number<std::int64_t>(s);
}

net::awaitable<bool> handle(Connection& conn, Request& req) {
  const double received = conn.state().now_ms();
  const bool keep = req.keep_alive();
  const std::string_view target(req.target().data(), req.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  const auto parts = split_path(path);

  if (!parts.empty() && parts[0] == "control") co_return co_await control(conn, req, parts, keep);

  std::optional<std::int64_t> task;
  if (parts.size() == 4 && parts[0] == "t" && parts[2] == "v1" && parts[3] == "messages") task = parse_task(parts[1]);
  if (!task) {
    co_await conn.send_error(404, "not_found_error",
                             fmt::format("unknown path '{}': the mock serves POST /t/{{task}}/v1/messages",
                                         path.substr(0, 200)),
                             keep);
    co_return keep;
  }
  co_return co_await messages(conn, req, *task, received, keep);
}

}  // namespace relsim::mock
