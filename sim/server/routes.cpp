// Routing a request, and the messages endpoint up to the script entry it
// takes (routes.hpp); replay.cpp answers as the entry says.
#include "server/routes.hpp"

#include <algorithm>
#include <span>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/parse.hpp"
#include "server/replay.hpp"
#include "server/upstream.hpp"
#include "server/upstream_framing.hpp"

namespace relsim::mock {
namespace {

// Seconds since the Unix epoch, for the rate-limit headers' reset time.
double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Releases a unit of the provider's capacity when the reply holding it ends.
class CapacityHold {
 public:
  explicit CapacityHold(Provider* provider) : provider_(provider) {}
  ~CapacityHold() {
    if (provider_) provider_->release();
  }
  CapacityHold(const CapacityHold&) = delete;
  CapacityHold& operator=(const CapacityHold&) = delete;

 private:
  Provider* provider_;
};

// Credentials a proxy passes on and never keeps: logged as present only.
bool secret(std::string_view lower) { return lower == "x-api-key" || lower == "authorization"; }

LoggedRequest record(const Request& req, double received_ms, bool proxy, Dialect dialect) {
  LoggedRequest r;
  r.dialect = dialect;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  for (const auto& field : req) {
    std::string name = wire::lower_case(std::string(field.name_string()));
    const bool hide = proxy && secret(name);
    r.headers.emplace_back(std::move(name), hide ? std::string("(present, not logged)") : std::string(field.value()));
  }
  r.body_bytes = req.body().size();
  r.body = req.body().substr(0, kMaxLoggedBody);
  r.received_ms = received_ms;
  return r;
}

// Why a body is not one the mock answers, or nullopt: the Messages API's
// must be a JSON object with "stream": true; a chat completion's a JSON
// object whose "stream", if there, is true or false, and whose
// "stream_options", if there, is an object, only beside "stream": true,
// whose "include_usage", if there, is true or false (`asked` says which).
std::optional<std::string> not_answered(const std::string& text, Dialect dialect, wire::Asked& asked) {
  const Json body = Json::parse(text, nullptr, false);
  if (body.is_discarded()) return "request body is not valid JSON";
  if (dialect == Dialect::openai) {
    if (!body.is_object() || (body.contains("stream") && !body["stream"].is_boolean()))
      return "request body must be a JSON object whose \"stream\", if given, is true or false";
    asked.stream = body.value("stream", false);
    const auto options = body.find("stream_options");
    if (options == body.end() || options->is_null()) return std::nullopt;
    if (!asked.stream) return "\"stream_options\" is only allowed when \"stream\" is true";
    const auto usage = options->is_object() ? options->find("include_usage") : options->end();
    if (!options->is_object() || (usage != options->end() && !usage->is_boolean()))
      return "\"stream_options\" must be an object whose \"include_usage\", if given, is true or false";
    asked.usage = usage != options->end() && *usage == true;
    return std::nullopt;
  }
  if (!body.is_object() || !body.contains("stream") || body["stream"] != true)
    return "request body must be a JSON object with \"stream\": true";
  asked.stream = true;
  return std::nullopt;
}

// not_answered() for the mock; a proxy forwards any body and lets the
// upstream judge it; a replay matches any JSON body with the recorded ones.
std::optional<std::string> refused_body(const std::string& text, Dialect dialect, bool proxy, bool replay,
                                        wire::Asked& asked) {
  if (proxy) return std::nullopt;
  if (!replay) return not_answered(text, dialect, asked);
  return Json::accept(text) ? std::nullopt : std::optional<std::string>("request body is not valid JSON");
}

// POST /t/{task}/v1/messages (or, in the OpenAI dialect,
// /t/{task}/v1/chat/completions; `fallback`: under /t/{task}/fallback/): checks the method and body (neither takes
// an entry), takes the task's next entry and has replay() answer it in the
// request's dialect.
net::awaitable<bool> messages(Connection& conn, Request& req, std::int64_t task, double received, bool keep,
                              Dialect dialect, bool fallback) {
  ServerState& state = conn.state();
  state.metrics().received(dialect);
  const bool proxy = state.config().upstream.has_value();
  LoggedRequest rec = record(req, received, proxy, dialect);
  rec.fallback = fallback;
  if (req.method() != http::verb::post) {
    state.log_unscripted(task, std::move(rec), 405);
    co_await conn.not_allowed(std::string(req.method_string()), "POST", keep, dialect);
    co_return keep;
  }
  RecordingBook* book = state.book();
  wire::Asked asked;
  if (const std::optional<std::string> why = refused_body(req.body(), dialect, proxy, book != nullptr, asked)) {
    state.log_unscripted(task, std::move(rec), 400);
    co_await conn.send_error(400, "invalid_request_error", *why, keep, {}, dialect);
    co_return keep;
  }
  // A replay's request no recording matches takes no entry: a 404 naming the
  // nearest recording, or with an upstream a forward that records it.
  RecordingBook::Found recorded;
  if (book) {
    std::string path = api_target(req);  // the second provider's path matches as the API's own
    if (fallback && path.rfind("/fallback/", 0) == 0) path.erase(0, 9);
    recorded = book->find(dialect, path, req.body());
    state.metrics().replayed(dialect, !recorded.matches.empty());
    if (recorded.matches.empty() && !proxy) {
      state.log_unscripted(task, std::move(rec), 404);
      co_await conn.send_error(404, "not_found_error", recorded.why, keep, {}, dialect);
      co_return keep;
    }
  }
  Provider* provider = state.provider();
  std::vector<std::pair<std::string, std::string>> limits;
  if (provider) {
    const Admission a = provider->admit(rec.header("x-api-key").value_or(""), state.model_seconds(received));
    rec.tenant = a.tenant;
    const double scale = provider->config().time_scale;
    limits = rate_limit_headers(a, scale, wall_seconds(), dialect);
    switch (a.verdict) {
      case Admission::Verdict::admitted: break;
      case Admission::Verdict::bad_key:
        state.log_refused(task, std::move(rec), 400, "key");
        co_await conn.send_error(400, "invalid_request_error", a.why, keep, {}, dialect);
        co_return keep;
      case Admission::Verdict::over_quota:
        state.log_refused(task, std::move(rec), 429, "quota");
        co_await conn.send_error(429, "rate_limit_error",
                                 fmt::format("This request would exceed the rate limit of {:g} requests per minute "
                                             "for this API key; retry after {} s",
                                             a.limit, a.retry_after),
                                 keep, limits, dialect);
        co_return keep;
      case Admission::Verdict::over_capacity:
        limits.emplace_back("x-should-retry", "true");
        state.log_refused(task, std::move(rec), 529, "capacity");
        co_await conn.send_error(529, "overloaded_error", "Overloaded", keep, limits, dialect);
        co_return keep;
    }
  }
  // An admitted request holds a unit of the provider's capacity until its reply ends.
  const CapacityHold hold(provider);
  Popped p = state.pop(task, std::move(rec));
  p.headers = std::move(limits);
  if (!p.found) {
    const bool ok = co_await conn.send_error(404, "not_found_error", p.why, keep, {}, dialect);
    state.finish(task, p, 404, ok ? "complete" : "client_gone");
    co_return keep && ok;
  }
  Json upstream;
  conn.take_first_event();
  std::shared_ptr<const RecordedExchange> answer;
  if (!recorded.matches.empty()) answer = recorded.pick(task, p.index);
  const Outcome o = co_await replay(conn, task, p, req, keep, upstream, asked, std::move(answer));
  state.finish(task, p, o.status, o.end, std::move(upstream), conn.take_first_event());
  co_return o.keep;
}

// GET /metrics: Prometheus' text format (docs/proxy.md, Metrics).
net::awaitable<bool> metrics(Connection& conn, const Request& req, bool keep) {
  if (req.method() != http::verb::get)
    co_return (co_await conn.not_allowed(std::string(req.method_string()), "GET", keep)) && keep;
  const std::string bytes = wire::text_response(200, conn.state().metrics_text(), "text/plain; version=0.0.4; charset=utf-8",
                                                conn.state().fresh_request_id(), keep);
  co_return (co_await conn.write(bytes)) && keep;
}

}  // namespace

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
  if (parts.size() == 1 && parts[0] == "metrics") co_return co_await metrics(conn, req, keep);

  const ServerConfig& c = conn.state().config();
  // The API's path after /t/{task} (the mock's) or as it is (the proxy's own paths).
  const bool prefixed = parts.size() >= 2 && parts[0] == "t";
  // The mock's second provider: /t/{task}/fallback/v1/... (a fallback plan's other column).
  const bool fallback = prefixed && !c.upstream && parts.size() >= 3 && parts[2] == "fallback";
  const std::span<const std::string_view> api(parts.begin() + (prefixed ? 2 : 0) + (fallback ? 1 : 0), parts.end());
  const bool is_messages = api.size() == 2 && api[0] == "v1" && api[1] == "messages";
  // The OpenAI dialect: /v1/chat/completions, served by the mock and forwarded with faults by the proxy.
  const bool is_chat = api.size() == 3 && api[0] == "v1" && api[1] == "chat" && api[2] == "completions";
  std::optional<std::int64_t> task;
  if (prefixed) task = parse_task(parts[1]);
  // The proxy and a replay serve the API's own paths too.
  if ((c.upstream || !c.replay_dir.empty()) && !prefixed) {
    // The task from its header, else task 0.
    const auto named = c.task_header.empty() ? boost::beast::string_view() : req[c.task_header];
    task = named.empty() ? std::optional<std::int64_t>(0) : parse_task(std::string_view(named.data(), named.size()));
  }
  // The proxy passes the API's other endpoints (/v1/models, /v1/messages/count_tokens, ...) through, without faults.
  const bool passed = c.upstream && !api.empty() && api[0] == "v1" && !is_messages && !is_chat;
  if (!task || !(is_messages || is_chat || passed)) {
    const bool replaying = !c.replay_dir.empty();
    co_await conn.send_error(404, "not_found_error",
                             fmt::format("unknown path '{}' (or task): {} POST /t/{{task}}/v1/messages{}",
                                         path.substr(0, 200),
                                         c.upstream ? "the proxy forwards" : replaying ? "the replay answers" : "the mock serves",
                                         c.upstream ? " and /v1/messages (and /v1/chat/completions), with faults, "
                                                      "and the API's other /v1/ paths as they are; GET /metrics"
                                         : replaying ? ", POST /t/{task}/v1/chat/completions, the same under "
                                                       "/t/{task}/fallback/, and both without /t/{task}/ (task 0); "
                                                       "GET /metrics"
                                                     : ", POST /t/{task}/v1/chat/completions and the same under "
                                                       "/t/{task}/fallback/; GET /metrics"),
                             keep);
    co_return keep;
  }
  if (passed) co_return (co_await pass_through(conn, req, *task, keep)).keep;
  co_return co_await messages(conn, req, *task, received, keep, is_chat ? Dialect::openai : Dialect::anthropic,
                              fallback);
}

}  // namespace relsim::mock
