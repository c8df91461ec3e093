#pragma once
// The tools the MCP tools server offers (docs/tools.md, "The tools"), each
// with a real effect or a checkable answer:
//
//   note_write(path: string, text: string)  writes text to the sandbox
//   dump(n: integer in [0, 1000000])        returns exactly n characters
//   add(a: integer, b: integer)             returns the decimal sum
//
// Their JSON Schemas are what tools/list gives. The tools check their own
// arguments as many real tools do, tersely: a client reads "Invalid
// arguments", and only the server's log says which parameter and why.
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/json.hpp"
#include "relsim/tools/sandbox.hpp"

namespace relsim::tools {

inline constexpr std::int64_t kMaxDump = 1'000'000;

// tools/list's "tools": name, description, inputSchema.
Json tool_list();
bool has_tool(std::string_view name);

// How far a call got in the tool, and what it says.
enum class ToolStage { validate, exec, done };
std::string_view to_string(ToolStage stage);

struct ToolRun {
  ToolStage stage = ToolStage::done;  // validate or exec: it failed there
  std::string text;                   // what the client reads (terse on failure)
  std::string detail;                 // for the log: the full reason on failure, else empty
};

// The argument checks every tool starts with, shared with the stateful
// tools (shared_tools.hpp). A refusal: stage validate, the terse text
// "Invalid arguments", `detail` for the log.
inline constexpr std::string_view kInvalid = "Invalid arguments";
ToolRun refused(std::string detail);
// Exactly the named keys: empty, or what is wrong ("missing parameter 'x'").
std::string unexpected_keys(const Json& arguments, const std::vector<std::string_view>& keys);
// A JSON value's type as a schema names it (integer, number, string ...).
std::string type_of(const Json& v);
// {"type": "object", "properties", "required", "additionalProperties": false}.
Json object_schema(Json properties, Json required);

// Runs tool `name` (has_tool) with `arguments` (a JSON object). With
// `half_write`, note_write writes the first half of its text and then fails
// at exec (the partial_write fault).
ToolRun run_tool(std::string_view name, const Json& arguments, const Sandbox& sandbox, bool half_write = false);

}  // namespace relsim::tools
