// The MCP tools server's JSON-RPC handling (mcp_service.hpp): the message
// checks, the methods, and a tools/call under its fault with its log line.
#include "relsim/tools/mcp_service.hpp"

#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/tools/tool_catalog.hpp"

namespace relsim::tools {
namespace {

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kQuotaExceeded = -32029;  // in JSON-RPC's range for a server's own errors
constexpr std::string_view kDefaultProtocol = "2025-06-18";
constexpr std::string_view kVersion = "1.0.0";

std::string respond(const Json& id, Json result) {
  // Replaced, not thrown: a truncated text may end inside a character.
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}.dump(-1, ' ', false,
                                                                                 Json::error_handler_t::replace);
}

std::string rpc_error(const Json& id, int code, std::string_view message) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
}

McpAnswer error_answer(const Json& id, int code, std::string_view message) {
  return {200, rpc_error(id, code, message), Delivery::now};
}

Json text_result(std::string text, bool is_error) {
  Json result{{"content", Json::array({{{"type", "text"}, {"text", std::move(text)}}})}};
  if (is_error) result["isError"] = true;
  return result;
}

// Absent params or arguments read as this, without copying a present one.
const Json& empty_object() {
  static const Json empty = Json::object();
  return empty;
}

std::string_view stage_of(ToolFault fault, ToolStage tool) {
  if (fault == ToolFault::timeout || fault == ToolFault::drop) return "transport";
  return to_string(tool);
}

}  // namespace

std::string jsonrpc_error(int code, std::string_view message) { return rpc_error(nullptr, code, message); }

McpService::McpService(ToolsConfig config, ToolFaultSource faults)
    : config_(std::move(config)), sandbox_(config_.sandbox), faults_(std::move(faults)), shared_(config_.shared),
      start_(std::chrono::steady_clock::now()) {
  if (config_.hold.count() < 1 || config_.hold.count() > kMaxHoldMs)
    throw InputError(fmt::format("hold = {} ms is out of range: it must be in [1, {}]", config_.hold.count(), kMaxHoldMs));
  if (!(config_.shared.cache_threshold > 0.0 && config_.shared.cache_threshold <= 1.0))
    throw InputError(fmt::format("cache threshold = {} is out of range: it must be in (0, 1]",
                                 config_.shared.cache_threshold));
  if (config_.quota) {
    if (config_.quota->calls < 1 || config_.quota->window_ms < 1)
      throw InputError(fmt::format("tool quota = {}/{} ms is out of range: calls and the window must be >= 1",
                                   config_.quota->calls, config_.quota->window_ms));
    quota_.emplace(*config_.quota);
  }
  if (config_.log) {
    log_.open(*config_.log, std::ios::binary | std::ios::trunc);
    if (!log_) throw InputError(fmt::format("log = '{}' cannot be written", config_.log->string()));
  }
}

std::uint64_t McpService::calls() const {
  std::lock_guard lock(mu_);
  return faults_.calls();
}

std::vector<std::pair<std::string, LockHolder>> McpService::held_locks() const {
  std::lock_guard lock(mu_);
  return shared_.locks().held(now_ms());
}

bool McpService::holds_lock(std::string_view agent) const {
  std::lock_guard lock(mu_);
  return shared_.locks().held_by(agent, now_ms());
}

ScratchEntry McpService::peek(std::string_view key) const {
  std::lock_guard lock(mu_);
  return shared_.scratchpad().get(key);
}

std::int64_t McpService::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
}

McpAnswer McpService::handle(std::string_view body, const Caller& caller) {
  const Json message = Json::parse(body, nullptr, false);
  if (message.is_discarded()) return error_answer(nullptr, kParseError, "Parse error: the body is not JSON");
  if (message.is_array())
    return error_answer(nullptr, kInvalidRequest, "Invalid Request: batches are not supported; send one message");
  if (!message.is_object()) return error_answer(nullptr, kInvalidRequest, "Invalid Request: not a JSON-RPC object");
  const auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0")
    return error_answer(nullptr, kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
  const auto id_it = message.find("id");
  const auto method_it = message.find("method");
  if (id_it != message.end() && !id_it->is_string() && !id_it->is_number_integer())
    return error_answer(nullptr, kInvalidRequest, "Invalid Request: \"id\" must be a string or an integer");
  if (method_it == message.end()) {
    // A client's response to a server request (none are made): taken.
    if (id_it != message.end() && (message.contains("result") || message.contains("error"))) return {202, {}, Delivery::now};
    return error_answer(id_it != message.end() ? *id_it : Json(nullptr), kInvalidRequest,
                        "Invalid Request: no \"method\"");
  }
  if (!method_it->is_string())
    return error_answer(id_it != message.end() ? *id_it : Json(nullptr), kInvalidRequest,
                        "Invalid Request: \"method\" must be a string");
  if (id_it == message.end()) return {202, {}, Delivery::now};  // a notification: nothing to answer
  const Json& id = *id_it;
  const std::string& method = method_it->get_ref<const std::string&>();
  const auto params_it = message.find("params");
  if (params_it != message.end() && !params_it->is_object())
    return error_answer(id, kInvalidParams, "Invalid params: \"params\" must be an object");
  const Json& params = params_it != message.end() ? *params_it : empty_object();

  if (method == "initialize") {
    const auto asked = params.find("protocolVersion");
    const Json protocol = asked != params.end() && asked->is_string() && asked->get_ref<const std::string&>().size() <= 64
                              ? *asked
                              : Json(kDefaultProtocol);
    return {200,
            respond(id, {{"protocolVersion", protocol},
                         {"capabilities", {{"tools", Json::object()}}},
                         {"serverInfo", {{"name", "relsim-tools"}, {"version", kVersion}}}}),
            Delivery::now};
  }
  if (method == "ping") return {200, respond(id, Json::object()), Delivery::now};
  if (method == "tools/list") {
    Json tools = tool_list();
    for (Json& t : SharedTools::list()) tools.push_back(std::move(t));
    return {200, respond(id, {{"tools", std::move(tools)}}), Delivery::now};
  }
  if (method == "tools/call") return call_tool(id, params, caller);
  return error_answer(id, kMethodNotFound,
                      fmt::format("Method not found: this server has initialize, ping, tools/list and tools/call"));
}

McpAnswer McpService::call_tool(const Json& id, const Json& params, const Caller& caller) {
  const auto name_it = params.find("name");
  if (name_it == params.end() || !name_it->is_string())
    return error_answer(id, kInvalidParams, "Invalid params: \"name\" must be a string");
  const auto args_it = params.find("arguments");
  if (args_it != params.end() && !args_it->is_object())
    return error_answer(id, kInvalidParams, "Invalid params: \"arguments\" must be an object");
  const std::string& name = name_it->get_ref<const std::string&>();
  const Json& arguments = args_it != params.end() ? *args_it : empty_object();

  std::lock_guard lock(mu_);
  const std::int64_t now = now_ms();
  Json line{{"call", nullptr}, {"t_ms", nullptr}, {"tool", name}};
  if (auto refusal = over_quota(id, caller, now, line)) return *refusal;
  line["call"] = faults_.calls();
  const ToolFault fault = faults_.next();
  const bool shared = SharedTools::has(name);
  McpAnswer answer;
  std::string_view stage, sent;
  std::string error;
  std::optional<SharedRun> touched;
  if (fault == ToolFault::unknown_tool || !(shared || has_tool(name))) {
    // Missing here, by the fault or truly: the tool never runs.
    answer = error_answer(id, kInvalidParams, "Unknown tool");
    stage = "service";
    sent = "rpc_error";
    error = fault == ToolFault::unknown_tool ? fmt::format("unknown_tool: '{}' is withheld from this call", name)
                                             : fmt::format("'{}' is not a tool of this server", name);
  } else if (fault == ToolFault::exec_error) {
    answer = {200, respond(id, text_result("Internal error", true)), Delivery::now};
    stage = "exec";
    sent = "is_error";
    error = fmt::format("{}: exec_error: the tool threw", name);
  } else {
    const bool half = fault == ToolFault::partial_write;
    ToolRun run;
    if (shared) {
      touched = shared_.run(name, arguments, caller, now, half);
      run = std::move(touched->run);
    } else {
      run = run_tool(name, arguments, sandbox_, half);
    }
    const bool failed = run.stage != ToolStage::done;
    if (!failed && fault == ToolFault::truncate) run.text.resize(run.text.size() / 10);
    answer = {200, respond(id, text_result(std::move(run.text), failed)), Delivery::now};
    stage = stage_of(fault, run.stage);
    sent = failed ? "is_error" : "result";
    error = std::move(run.detail);
  }
  if (fault == ToolFault::timeout) answer.delivery = Delivery::hold;
  if (fault == ToolFault::drop) answer.delivery = Delivery::drop;
  if (fault == ToolFault::timeout || fault == ToolFault::drop)
    error = error.empty() ? fmt::format("{}: {}", name, to_string(fault)) : fmt::format("{}; {}", error, to_string(fault));

  if (log_.is_open()) {
    Json files = Json::object();
    for (const auto& [path, size] : sandbox_.files()) files[path] = size;
    line.update({{"fault", to_string(fault)},
                 {"stage", stage},
                 {"answer", sent},
                 {"error", error.empty() ? Json(nullptr) : Json(error)},
                 {"sandbox", files},
                 {"tenant", caller.tenant},
                 {"agent", caller.agent}});
    if (touched) line.update({{"key", touched->key}, {"outcome", touched->outcome}, {"facts", touched->facts}});
    log_line(std::move(line));
  }
  return answer;
}

std::optional<McpAnswer> McpService::over_quota(const Json& id, const Caller& caller, std::int64_t now, Json& line) {
  if (!quota_) return std::nullopt;
  const QuotaDecision d = quota_->take(caller.tenant, now);
  if (d.allowed) return std::nullopt;
  McpAnswer refusal = error_answer(
      id, kQuotaExceeded,
      fmt::format("Tool quota exceeded: tenant '{}' has made its {} calls of this {} s window; retry after {} s",
                  caller.tenant, quota_->spec().calls, quota_->spec().window_ms / 1000.0, d.retry_after_s));
  refusal.status = 429;
  refusal.retry_after_s = d.retry_after_s;
  line.update({{"fault", nullptr}, {"stage", "quota"}, {"answer", "http_429"},
               {"error", fmt::format("{}: quota: retry after {} s", line["tool"].get<std::string>(), d.retry_after_s)},
               {"tenant", caller.tenant}, {"agent", caller.agent}});
  log_line(std::move(line));
  return refusal;
}

void McpService::log_line(Json line) {
  if (!log_.is_open()) return;
  line["t_ms"] = std::round(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count() *
                            1000.0) /
                 1000.0;
  log_ << line.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n' << std::flush;
}

}  // namespace relsim::tools
