#pragma once
// Internal to the CLI: relsim tools audit's output, a table per harness and
// its summary line, or one JSON object (docs/tools.md, "The audit").
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/tools/tool_audit.hpp"

namespace relsim::tools {

Json tools_audit_json(const tools::ToolAudit& audit);
std::string tools_audit_text(const tools::ToolAudit& audit);

}  // namespace relsim::tools
