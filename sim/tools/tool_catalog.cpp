// The tools server's three tools (tool_catalog.hpp): their schemas, their
// argument checks and what they do.
#include "relsim/tools/tool_catalog.hpp"

#include <array>
#include <limits>

#include <fmt/format.h>

namespace relsim::tools {
namespace {

ToolRun note_write(const Json& args, const Sandbox& sandbox, bool half_write) {
  if (auto why = unexpected_keys(args, {"path", "text"}); !why.empty()) return refused("note_write: " + why);
  for (const char* key : {"path", "text"})
    if (!args[key].is_string())
      return refused(fmt::format("note_write: parameter '{}' must be a string, got {}", key, type_of(args[key])));
  const auto& path = args["path"].get_ref<const std::string&>();
  const auto& text = args["text"].get_ref<const std::string&>();
  std::string why;
  const auto file = sandbox.resolve(path, why);
  if (file.empty()) return refused("note_write: parameter 'path': " + why);
  if (half_write) {
    const std::string_view half = std::string_view(text).substr(0, text.size() / 2);
    if (!sandbox.write(file, half, why)) return {ToolStage::exec, "Write failed", "note_write: " + why};
    return {ToolStage::exec, "Write failed",
            fmt::format("note_write: partial_write: wrote {} of {} bytes to {}, then failed", half.size(), text.size(),
                        path)};
  }
  if (!sandbox.write(file, text, why)) return {ToolStage::exec, "Write failed", "note_write: " + why};
  return {ToolStage::done, fmt::format("wrote {} characters to {}", text.size(), path), {}};
}

ToolRun dump(const Json& args) {
  if (auto why = unexpected_keys(args, {"n"}); !why.empty()) return refused("dump: " + why);
  const Json& n = args["n"];
  if (!n.is_number_integer()) return refused(fmt::format("dump: parameter 'n' must be an integer, got {}", type_of(n)));
  const bool negative = n.is_number_integer() && !n.is_number_unsigned() && n.get<std::int64_t>() < 0;
  if (negative || n.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxDump))
    return refused(fmt::format("dump: parameter 'n' = {} must be in [0, {}]", n.dump(), kMaxDump));
  // Lines of 64 characters ("dump line 000001 ...", 63 and a newline), cut
  // at exactly n.
  const auto count = static_cast<std::size_t>(n.get<std::uint64_t>());
  std::string text;
  text.reserve(count + 64);
  for (std::size_t line = 1; text.size() < count; ++line)
    text += fmt::format("dump line {:06} {:.<46}\n", line, "");
  text.resize(count);
  return {ToolStage::done, std::move(text), {}};
}

ToolRun add(const Json& args) {
  if (auto why = unexpected_keys(args, {"a", "b"}); !why.empty()) return refused("add: " + why);
  for (const char* key : {"a", "b"}) {
    const Json& v = args[key];
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() >
                                                                 static_cast<std::uint64_t>(
                                                                     std::numeric_limits<std::int64_t>::max())))
      return refused(fmt::format("add: parameter '{}' must be an integer in the 64-bit range, got {}", key,
                                 v.is_number_unsigned() ? std::string("a larger integer") : type_of(v)));
  }
  const auto a = args["a"].get<std::int64_t>(), b = args["b"].get<std::int64_t>();
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return refused(fmt::format("add: {} + {} overflows 64 bits", a, b));
  return {ToolStage::done, std::to_string(sum), {}};
}

}  // namespace

Json object_schema(Json properties, Json required) {
  return Json{{"type", "object"},
              {"properties", std::move(properties)},
              {"required", std::move(required)},
              {"additionalProperties", false}};
}

ToolRun refused(std::string detail) { return {ToolStage::validate, std::string(kInvalid), std::move(detail)}; }

std::string unexpected_keys(const Json& arguments, const std::vector<std::string_view>& keys) {
  for (const auto& [key, value] : arguments.items()) {
    bool known = false;
    for (const auto k : keys) known = known || key == k;
    if (!known) return fmt::format("unexpected parameter '{}'", key.substr(0, 100));
  }
  for (const auto k : keys)
    if (!arguments.contains(k)) return fmt::format("missing parameter '{}'", k);
  return {};
}

std::string type_of(const Json& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  return v.type_name();
}

Json tool_list() {
  Json tools = Json::array();
  tools.push_back({{"name", "note_write"},
                   {"description", "Write a text note to a file in the sandbox (a relative path such as notes/a.txt)."},
                   {"inputSchema", object_schema({{"path", {{"type", "string"}, {"minLength", 1}}},
                                                  {"text", {{"type", "string"}}}},
                                                 {"path", "text"})}});
  tools.push_back({{"name", "dump"},
                   {"description", "Return exactly n characters of text."},
                   {"inputSchema", object_schema({{"n", {{"type", "integer"}, {"minimum", 0}, {"maximum", kMaxDump}}}},
                                                 {"n"})}});
  tools.push_back({{"name", "add"},
                   {"description", "Add two integers."},
                   {"inputSchema", object_schema({{"a", {{"type", "integer"}}}, {"b", {{"type", "integer"}}}}, {"a", "b"})}});
  return tools;
}

bool has_tool(std::string_view name) { return name == "note_write" || name == "dump" || name == "add"; }

std::string_view to_string(ToolStage stage) {
  switch (stage) {
    case ToolStage::validate: return "validate";
    case ToolStage::exec: return "exec";
    case ToolStage::done: return "done";
  }
  return "done";
}

ToolRun run_tool(std::string_view name, const Json& arguments, const Sandbox& sandbox, bool half_write) {
  if (name == "note_write") return note_write(arguments, sandbox, half_write);
  if (half_write) return {ToolStage::exec, "Internal error", fmt::format("{}: partial_write: failed", name)};
  if (name == "dump") return dump(arguments);
  return add(arguments);
}

}  // namespace relsim::tools
