#pragma once
// Internal to the workbench's server: POST /api/audit's body,
// {"plan": TEXT, "log": TEXT}, and the work that writes both into a private
// temporary folder, runs the audit with --plan and --log pointing there, and
// removes the folder (audit_upload.cpp says why it is done so).
#include <string>
#include <string_view>
#include <vector>

#include "relsim/ui/command.hpp"
#include "ui/command_pool.hpp"

namespace relsim::ui {

struct AuditUpload {
  std::string plan, log;
};

// Throws InputError naming what is wrong with the body.
AuditUpload parse_audit_body(std::string_view body);

// args: the audit's command line without --plan and --log (command_args).
Work audit_work(CommandRunner runner, std::vector<std::string> args, AuditUpload upload);

}  // namespace relsim::ui
