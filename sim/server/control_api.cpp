// The control API under /control/ (routes.hpp; docs/wire.md lists it): set
// a task's script, read its log, release its held replies, open a gate, and
// a health check; list the tasks, take a task's outcome report and serve the
// request journal. A harness drives the server through it from any language.
#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "server/routes.hpp"

namespace relsim::mock {
namespace {

enum class Endpoint { none, health, tasks, journal, outage, script, log, release, outcome, open_gate };

struct Route {
  Endpoint endpoint = Endpoint::none;
  http::verb method = http::verb::get;  // the one it allows
  std::int64_t task = 0;
  std::string_view gate;
};

Route route_of(const std::vector<std::string_view>& parts) {
  if (parts.size() == 2 && parts[1] == "health") return {Endpoint::health, http::verb::get, 0, {}};
  if (parts.size() == 2 && parts[1] == "tasks") return {Endpoint::tasks, http::verb::get, 0, {}};
  if (parts.size() == 2 && parts[1] == "log") return {Endpoint::journal, http::verb::get, 0, {}};
  if (parts.size() == 2 && parts[1] == "outage") return {Endpoint::outage, http::verb::get, 0, {}};
  if (parts.size() != 4) return {};
  if (parts[1] == "gates" && parts[3] == "open") return {Endpoint::open_gate, http::verb::post, 0, parts[2]};
  const auto task = parts[1] == "tasks" ? parse_task(parts[2]) : std::nullopt;
  if (!task) return {};
  if (parts[3] == "script") return {Endpoint::script, http::verb::post, *task, {}};
  if (parts[3] == "log") return {Endpoint::log, http::verb::get, *task, {}};
  if (parts[3] == "release") return {Endpoint::release, http::verb::post, *task, {}};
  if (parts[3] == "outcome") return {Endpoint::outcome, http::verb::post, *task, {}};
  return {};
}

// A 404 of an endpoint (an outcome for a task without a script).
struct NotFound : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// GET /control/tasks: what a harness iterates.
Json task_list(const ServerState& state) {
  Json tasks = Json::array();
  for (const std::int64_t task : state.task_ids())
    tasks.push_back(Json{{"task", task}, {"base_url", fmt::format("http://127.0.0.1:{}/t/{}", state.port(), task)}});
  Json plan = state.plan_header();
  Json calls = plan.is_object() && plan.contains("n") ? plan["n"] : Json(nullptr);
  return Json{{"tasks", std::move(tasks)}, {"calls", std::move(calls)}, {"plan", std::move(plan)}};
}

std::string outcome_words() {
  std::string s;
  for (const auto word : kOutcomeWords) s += (s.empty() ? "" : ", ") + std::string(word);
  return s;
}

// At most `most` bytes, not ending inside a UTF-8 sequence.
std::string cut_utf8(std::string text, std::size_t most) {
  if (text.size() <= most) return text;
  std::size_t n = most;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  text.resize(n);
  return text;
}

struct Report {
  std::string word, detail;
};

// {"outcome": WORD, "detail": "..."}, strictly: nothing else, "detail" optional.
Report parse_report(const std::string& text) {
  const Json body = Json::parse(text, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    throw InputError("outcome body must be a JSON object {\"outcome\": WORD, \"detail\": \"...\"}");
  for (const auto& [key, v] : body.items())
    if (key != "outcome" && key != "detail")
      throw InputError(fmt::format("outcome body field '{}' is unknown: use outcome, detail", key.substr(0, 100)));
  if (!body.contains("outcome") || !body.at("outcome").is_string())
    throw InputError(fmt::format("outcome body has no \"outcome\" string: give one of {}", outcome_words()));
  Report r{body.at("outcome").get<std::string>(), ""};
  if (std::find(kOutcomeWords.begin(), kOutcomeWords.end(), r.word) == kOutcomeWords.end())
    throw InputError(fmt::format("outcome '{}' is not an outcome: use one of {}", r.word.substr(0, 100), outcome_words()));
  if (body.contains("detail")) {
    if (!body.at("detail").is_string())
      throw InputError(fmt::format("outcome detail = {} is not a string", json_excerpt(body.at("detail"))));
    r.detail = cut_utf8(body.at("detail").get<std::string>(), kMaxOutcomeDetail);
  }
  return r;
}

Json report_outcome(ServerState& state, std::int64_t task, const std::string& text) {
  const Report r = parse_report(text);
  if (!state.report_outcome(task, r.word, r.detail))
    throw NotFound(fmt::format("task {} has no script: report outcomes of the tasks GET /control/tasks lists", task));
  return Json{{"task", task}, {"outcome", r.word}};
}

std::size_t set_script(ServerState& state, std::int64_t task, const std::string& text) {
  const Json body = Json::parse(text, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("responses"))
    throw InputError("script body must be a JSON object {\"responses\": [...]}");
  auto script = parse_script(body.at("responses"));
  const std::size_t entries = script.size();
  // "fallback": the entries of /t/{task}/fallback/, one per request as "responses".
  std::optional<std::vector<ScriptEntry>> fallback;
  if (body.contains("fallback")) fallback = parse_script(body.at("fallback"));
  state.set_script(task, std::move(script), std::move(fallback));
  return entries;
}

// The 200 reply of an endpoint; throws InputError for a 400.
Json answer(ServerState& state, const Route& route, const std::string& body) {
  switch (route.endpoint) {
    case Endpoint::health:
      return Json{{"status", "ok"}, {"port", state.port()}, {"connections", state.connection_count()}};
    case Endpoint::tasks:
      return task_list(state);
    case Endpoint::outage: {
      const auto view = state.outage_view();
      if (!view)
        throw NotFound("the server runs without an outage schedule: start it with relsim serve --outage T_GOOD,T_BAD");
      return to_json(*state.config().outage, *view);
    }
    case Endpoint::outcome:
      return report_outcome(state, route.task, body);
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
    case Endpoint::journal:  // served by journal() below
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
  return fmt::format("unknown control path '{}': use /control/health, /control/tasks, /control/log, "
                     "/control/outage, /control/tasks/{{task}}/script|log|release|outcome or "
                     "/control/gates/{{name}}/open",
                     path.substr(0, 200));
}

// GET /control/log: the journal's lines kept in memory, as NDJSON; a header
// counts the lines left out past the memory cap.
net::awaitable<bool> journal(Connection& conn, bool keep) {
  auto [text, left_out] = conn.state().journal().text();
  wire::Headers extra;
  if (left_out > 0) extra.emplace_back("x-relsim-log-left-out", std::to_string(left_out));
  const std::string bytes =
      wire::text_response(200, text, "application/x-ndjson", conn.state().fresh_request_id(), keep, extra);
  co_return (co_await conn.write(bytes)) && keep;
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
  if (route.endpoint == Endpoint::journal) co_return co_await journal(conn, keep);
  std::string problem;
  int status = 200;
  Json reply;
  try {
    reply = answer(conn.state(), route, req.body());
  } catch (const InputError& e) {
    problem = e.what();
    status = 400;
  } catch (const NotFound& e) {
    problem = e.what();
    status = 404;
  }
  if (status != 200)
    co_return (co_await conn.send_error(status, status == 404 ? "not_found_error" : "invalid_request_error", problem,
                                        keep)) &&
        keep;
  co_return (co_await conn.send_json(200, std::move(reply), keep)) && keep;
}

}  // namespace relsim::mock
