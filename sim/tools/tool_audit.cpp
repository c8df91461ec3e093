// The tool-call audit (tool_audit.hpp): a harness's report lines read
// strictly, their locating facts counted from the error texts, and the
// sandbox and the server's call log set beside them.
#include "relsim/tools/tool_audit.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/text_lines.hpp"
#include "relsim/tools/tool_catalog.hpp"

namespace relsim::tools {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kGroups = {{{"transport", "transport"},
                                                                                   {"service", "service"},
                                                                                   {"validate", "validate"},
                                                                                   {"exec", "exec"},
                                                                                   {"exec_side_effect", "exec"},
                                                                                   {"truncation", "truncation"}}};

std::string stage_of_group(std::string_view group, std::string_view where) {
  if (group == "none") return "none";
  for (const auto& [g, stage] : kGroups)
    if (g == group) return std::string(stage);
  throw InputError(fmt::format("{}: group = '{}' is not a fault group: use transport, service, validate, exec, "
                               "exec_side_effect or truncation",
                               where, std::string(group.substr(0, 60))));
}

// The non-empty lines of a report or log, each a JSON object carrying its
// line number under "__line" and its place under "__where" for messages.
// The group a server fault puts a call in (a task's lines name none).
std::string group_of_fault(const std::string& fault) {
  if (fault == "timeout" || fault == "drop") return "transport";
  if (fault == "unknown_tool") return "service";
  if (fault == "exec_error") return "exec";
  if (fault == "partial_write") return "exec_side_effect";
  if (fault == "truncate") return "truncation";
  return "none";
}

std::vector<Json> json_lines(std::string_view text, std::string_view what) {
  std::vector<Json> out;
  for_each_line(text, [&](std::size_t line_no, std::string_view line) {
    if (line.empty()) return;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError(fmt::format("{} line {} is not a JSON object", what, line_no));
    j["__line"] = line_no;
    j["__where"] = fmt::format("{} line {}", what, line_no);
    out.push_back(std::move(j));
  });
  return out;
}

// A field of a report line, of the type asked; throws naming it.
const Json& field(const Json& j, const char* key, bool (Json::*is)() const noexcept, std::string_view type,
                  bool nullable = false) {
  const auto it = j.find(key);
  if (it == j.end() || !(((*it).*is)() || (nullable && it->is_null())))
    throw InputError(fmt::format("{}: \"{}\" must be {}{}", j["__where"].get<std::string>(), key, type,
                                 nullable ? " or null" : ""));
  return *it;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether `value` appears in `text` as a whole word.
bool names(std::string_view text, std::string_view value) {
  if (value.empty()) return false;
  for (std::size_t at = text.find(value); at != std::string_view::npos; at = text.find(value, at + 1)) {
    const bool start = at == 0 || !is_word_char(text[at - 1]);
    const std::size_t end = at + value.size();
    if (start && (end == text.size() || !is_word_char(text[end]))) return true;
  }
  return false;
}

std::string json_type(const Json& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_null()) return "null";
  return v.type_name();
}

// The first argument that breaks the tool's schema: {parameter, expected, got}.
std::optional<std::array<std::string, 3>> schema_break(const std::string& tool, const Json& arguments) {
  for (const Json& t : tool_list()) {
    if (t["name"] != tool) continue;
    const Json& schema = t["inputSchema"];
    for (const auto& [name, prop] : schema["properties"].items()) {
      if (!arguments.contains(name)) return std::array<std::string, 3>{name, "present", "missing"};
      const std::string want = prop["type"].get<std::string>();
      const std::string got = json_type(arguments[name]);
      if (want != got && !(want == "number" && got == "integer")) return std::array<std::string, 3>{name, want, got};
    }
    for (const auto& [name, value] : arguments.items())
      if (!schema["properties"].contains(name)) return std::array<std::string, 3>{name, "absent", "present"};
  }
  return std::nullopt;
}

// What a report line says, read strictly; the group may wait for the
// server's log (a task's line).
AuditedCall read_line(const Json& j, const Sandbox* sandbox) {
  const std::string where = fmt::format("report line {}", j["__line"].get<int>());
  AuditedCall c;
  if (j.contains("task")) {
    c.task = field(j, "task", &Json::is_number_unsigned, "an integer >= 0").get<std::int64_t>();
    c.step = field(j, "step", &Json::is_number_unsigned, "an integer >= 0").get<std::int64_t>();
  } else {
    c.group = field(j, "group", &Json::is_string, "a string").get<std::string>();
    c.stage = stage_of_group(c.group, where);
  }
  c.tool = field(j, "tool", &Json::is_string, "a string").get<std::string>();
  field(j, "arguments", &Json::is_object, "an object");
  const Json& caught = field(j, "caught_stage", &Json::is_string, "a string", true);
  if (caught.is_string()) c.caught_at = caught.get<std::string>();
  const bool reported = field(j, "reported", &Json::is_boolean, "true or false").get<bool>();
  const Json& error = field(j, "error", &Json::is_string, "a string", true);
  if (error.is_string()) c.error = error.get<std::string>();
  if (reported != c.error.has_value())
    throw InputError(fmt::format("{}: \"reported\" must be true exactly when \"error\" is a string", where));
  c.rollback = field(j, "rollback", &Json::is_string, "a string").get<std::string>();
  c.result_accepted = field(j, "result_accepted", &Json::is_boolean, "true or false").get<bool>();
  c.sent = field(j, "sent", &Json::is_boolean, "true or false").get<bool>();
  field(j, "result_chars", &Json::is_number_unsigned, "an integer >= 0", true);
  const Json& left = field(j, "side_effect_left", &Json::is_boolean, "true or false", true);
  c.reported_by = !reported ? "nobody" : c.caught_at ? "harness" : "passed_on";

  // A failed write whose file holds part of its text, looked for where the
  // server writes; else what the harness says.
  const Json& arguments = j["arguments"];
  std::string why;
  if (sandbox && c.tool == "note_write" && !c.result_accepted && arguments.contains("path") &&
      arguments["path"].is_string() && arguments.contains("text") && arguments["text"].is_string()) {
    const fs::path file = sandbox->resolve(arguments["path"].get<std::string>(), why);
    std::error_code ec;
    const bool there = !file.empty() && fs::is_regular_file(file, ec);
    c.side_effect_left = there && fs::file_size(file, ec) < arguments["text"].get<std::string>().size();
    c.side_effect_from = "sandbox";
  } else {
    c.side_effect_left = left.is_boolean() && left.get<bool>();
    c.side_effect_from = "harness";
  }
  return c;
}

// The facts a located error would carry, and which of them it does.
void count_facts(AuditedCall& c, const Json& j) {
  if (c.group == "none") return;
  const Json& arguments = j["arguments"];
  const Json& chars = j["result_chars"];
  std::vector<std::pair<std::string, std::string>> truth = {{"stage", c.stage}, {"tool", c.tool}};
  if (c.group == "validate")
    if (const auto broken = schema_break(c.tool, arguments))
      truth.insert(truth.end(), {{"parameter", (*broken)[0]}, {"expected", (*broken)[1]}, {"got", (*broken)[2]}});
  if (c.group == "truncation" && c.tool == "dump" && arguments.contains("n") && arguments["n"].is_number_integer() &&
      chars.is_number())
    truth.insert(truth.end(), {{"expected", arguments["n"].dump()}, {"got", chars.dump()}});
  c.facts_possible = static_cast<int>(truth.size());
  if (c.error)
    for (const auto& [fact, value] : truth)
      if (names(*c.error, value)) c.facts.push_back(fact);
}

// A task's class from its calls in order (tool_audit.hpp).
std::string task_class(const std::vector<const AuditedCall*>& calls) {
  for (const AuditedCall* c : calls)
    if (c->side_effect_left) return "side_effect_left";
  const AuditedCall& last = *calls.back();
  if (last.error) return "tool_error:" + last.caught_at.value_or("unlocated");
  for (const AuditedCall* c : calls)
    if (c->result_accepted && c->fault == "truncate") return "silent_wrong";
  return "done";
}

}  // namespace

ToolAudit audit_tool_calls(std::string_view report, const std::optional<std::string>& server_log,
                           const std::optional<fs::path>& sandbox) {
  if (sandbox && !fs::is_directory(*sandbox))
    throw InputError(fmt::format("sandbox = '{}' is not a folder", sandbox->string()));
  std::optional<Sandbox> box;  // made once: the path guard the server uses
  if (sandbox) box.emplace(*sandbox);
  ToolAudit audit;
  audit.server_log = server_log.has_value();
  audit.sandbox = sandbox.has_value();
  const std::vector<Json> lines = json_lines(report, "report");
  if (lines.empty()) throw InputError("the report has no lines: give the JSON lines a harness wrote (lab.mjs)");
  std::size_t sent = 0;
  std::vector<std::pair<std::size_t, std::size_t>> where;  // (harness, call) of each line
  bool tasks = false;
  for (const Json& j : lines) {
    const AuditedCall c = read_line(j, box ? &*box : nullptr);
    const std::string harness = field(j, "harness", &Json::is_string, "a string").get<std::string>();
    auto it = std::find_if(audit.harnesses.begin(), audit.harnesses.end(),
                           [&](const HarnessAudit& h) { return h.harness == harness; });
    if (it == audit.harnesses.end()) {
      audit.harnesses.emplace_back();
      audit.harnesses.back().harness = harness;
      it = audit.harnesses.end() - 1;
    }
    where.emplace_back(static_cast<std::size_t>(it - audit.harnesses.begin()), it->calls.size());
    it->calls.push_back(c);
    sent += c.sent;
    tasks = tasks || c.task.has_value();
  }
  if (tasks && !server_log)
    throw InputError("the report has tasks: give the server's call log (--server-log), which says each call's fault");
  // How far each call got and the fault it met, from the server's log.
  std::vector<Json> logged;
  if (server_log) {
    if (audit.harnesses.size() != 1)
      throw InputError(fmt::format("a server log belongs to one harness's run, and the report has {}: audit them "
                                   "one at a time",
                                   audit.harnesses.size()));
    logged = json_lines(*server_log, "server log");
    for (const Json& j : logged) {
      field(j, "stage", &Json::is_string, "a string");
      field(j, "fault", &Json::is_string, "a string");
    }
    if (logged.size() != sent)
      throw InputError(fmt::format("the server log has {} calls and the report sent {}: they are not the same run",
                                   logged.size(), sent));
  }
  std::size_t next = 0;  // one harness when there is a log: its calls in order
  for (std::size_t line = 0; line < lines.size(); ++line) {
    AuditedCall& c = audit.harnesses[where[line].first].calls[where[line].second];
    if (c.sent && server_log) {
      c.got_to = logged[next]["stage"].get<std::string>();
      c.fault = logged[next]["fault"].get<std::string>();
      ++next;
    } else {
      c.got_to = c.sent ? "unknown" : "not_sent";
    }
    if (c.task) {
      c.group = group_of_fault(c.fault);
      c.stage = stage_of_group(c.group, "");
    }
    count_facts(c, lines[line]);
  }
  for (HarnessAudit& h : audit.harnesses) {
    std::map<std::int64_t, std::vector<const AuditedCall*>> by_task;
    for (const AuditedCall& c : h.calls) {
      if (c.task) by_task[*c.task].push_back(&c);
      if (c.group == "none") continue;  // a served call of a task: nothing to catch
      if (c.caught_at) ++h.caught[*c.caught_at];
      else ++h.escaped;
      if (c.error) ++h.reported;
      if (c.error && c.facts.empty()) ++h.unlocated;
      h.side_effects_left += c.side_effect_left;
      h.rolled_back += c.rollback == "done";
    }
    for (const auto& [task, calls] : by_task) ++h.task_classes[task_class(calls)];
    h.tasks = static_cast<std::int64_t>(by_task.size());
  }
  return audit;
}

}  // namespace relsim::tools
