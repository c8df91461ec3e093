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
    : config_(std::move(config)), sandbox_(config_.sandbox), faults_(std::move(faults)),
      start_(std::chrono::steady_clock::now()) {
  if (config_.hold.count() < 1 || config_.hold.count() > kMaxHoldMs)
    throw InputError(fmt::format("hold = {} ms is out of range: it must be in [1, {}]", config_.hold.count(), kMaxHoldMs));
  if (config_.log) {
    log_.open(*config_.log, std::ios::binary | std::ios::trunc);
    if (!log_) throw InputError(fmt::format("log = '{}' cannot be written", config_.log->string()));
  }
}

std::uint64_t McpService::calls() const {
  std::lock_guard lock(mu_);
  return faults_.calls();
}

McpAnswer McpService::handle(std::string_view body) {
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
  if (method == "tools/list") return {200, respond(id, {{"tools", tool_list()}}), Delivery::now};
  if (method == "tools/call") return call_tool(id, params);
  return error_answer(id, kMethodNotFound,
                      fmt::format("Method not found: this server has initialize, ping, tools/list and tools/call"));
}

McpAnswer McpService::call_tool(const Json& id, const Json& params) {
  const auto name_it = params.find("name");
  if (name_it == params.end() || !name_it->is_string())
    return error_answer(id, kInvalidParams, "Invalid params: \"name\" must be a string");
  const auto args_it = params.find("arguments");
  if (args_it != params.end() && !args_it->is_object())
    return error_answer(id, kInvalidParams, "Invalid params: \"arguments\" must be an object");
  const std::string& name = name_it->get_ref<const std::string&>();
  const Json& arguments = args_it != params.end() ? *args_it : empty_object();

  std::lock_guard lock(mu_);
  const std::uint64_t call = faults_.calls();
  const ToolFault fault = faults_.next();
  McpAnswer answer;
  std::string_view stage, sent;
  std::string error;
  if (fault == ToolFault::unknown_tool || !has_tool(name)) {
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
    ToolRun run = run_tool(name, arguments, sandbox_, fault == ToolFault::partial_write);
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
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    log_ << Json{{"call", call},
                 {"t_ms", std::round(ms * 1000.0) / 1000.0},
                 {"tool", name},
                 {"fault", to_string(fault)},
                 {"stage", stage},
                 {"answer", sent},
                 {"error", error.empty() ? Json(nullptr) : Json(error)},
                 {"sandbox", files}}
                .dump(-1, ' ', false, Json::error_handler_t::replace)
         << '\n'
         << std::flush;
  }
  return answer;
}

}  // namespace relsim::tools
