#pragma once
// The tool-call audit (docs/tools.md, "The audit"): what a harness made of
// each fault group, from its report lines (examples/tools/lab.mjs writes
// them, any harness may), checked where it can be against the server's call
// log and the sandbox.
//
// A report line is a JSON object: group (transport, service, validate, exec,
// exec_side_effect or truncation), harness, caught_stage (string or null),
// reported (bool), error (string or null), rollback, result_accepted, tool,
// arguments (object), sent (bool), result_chars (integer or null) and
// side_effect_left (bool or null). A line of a task (examples/tools/tasks.mjs)
// carries "task" and "step" instead of "group": its group is the fault the
// server's call log gives the call (timeout and drop: transport,
// unknown_tool: service, exec_error: exec, partial_write: exec_side_effect,
// truncate: truncation, ok: none), so tasks need the server's log.
//
// For each line the audit gives:
//   caught_at    the stage the harness says it caught the fault at, or none
//   reported_by  harness (its own error), passed_on (an error from below,
//                passed on as it came) or nobody
//   facts        which locating facts the error's text carries, each counted
//                only when its value appears in the text as a whole word:
//                stage (the group's stage), tool (the tool's name),
//                parameter, expected and got (for validate: the first
//                argument that breaks the tool's schema, the type it should
//                have and the type it has; for truncation: the characters
//                asked for and the characters that came)
//   side_effect  whether a failed note_write's file is still in the sandbox
//                (with a sandbox folder), else what the harness says
//   got_to       the server's stage for the call (with its call log; the
//                sent lines matched to the log's calls in order), or
//                not_sent, or unknown
//
// and for tasks, each task's class (docs/tools.md, "Tasks"):
//   side_effect_left   a failed write left half its text in the sandbox
//   tool_error:STAGE   the task ended at an error its harness located
//   tool_error:unlocated  ... at an error that names no stage
//   silent_wrong       no error, but a result the server truncated was accepted
//   done               every call served and accepted
#include <filesystem>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relsim::tools {

struct AuditedCall {
  std::optional<std::int64_t> task, step;  // a task's call
  std::string fault;                       // the server's, with its call log; else empty
  std::string group;                       // none: a call the server served (a task's)
  std::string stage;  // the group's own stage: what a located error names
  std::string tool;
  std::optional<std::string> caught_at;
  std::string reported_by;          // harness, passed_on, nobody
  std::optional<std::string> error;
  std::vector<std::string> facts;   // in the order stage, tool, parameter, expected, got
  int facts_possible = 0;           // of those five, how many apply to this group
  bool side_effect_left = false;
  std::string side_effect_from;     // sandbox or harness
  bool sent = false;                // the call went to the server
  std::string got_to;               // a server stage, not_sent or unknown
  std::string rollback;
  bool result_accepted = false;
};

struct HarnessAudit {
  std::string harness;
  std::vector<AuditedCall> calls;  // in the report's order
  int escaped = 0;                 // caught at no stage (a result accepted counts: the fault got through)
  int reported = 0;
  int unlocated = 0;               // reported with no locating fact at all
  int side_effects_left = 0;
  int rolled_back = 0;
  std::map<std::string, int> caught;  // by stage
  std::map<std::string, std::int64_t> task_classes;  // tasks only: how many ended in each class
  std::int64_t tasks = 0;
};

struct ToolAudit {
  std::vector<HarnessAudit> harnesses;  // in order of first appearance
  bool server_log = false, sandbox = false;
};

// Throws InputError naming the line and the field for a malformed report or
// server log, a server log with another number of calls than the report
// sent, or a server log given for a report of several harnesses.
ToolAudit audit_tool_calls(std::string_view report, const std::optional<std::string>& server_log,
                           const std::optional<std::filesystem::path>& sandbox);

}  // namespace relsim::tools
