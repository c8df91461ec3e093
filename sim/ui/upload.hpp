#pragma once
// Internal to the workbench's server: the POST endpoints whose command
// reads files (POST /api/audit: {"plan": TEXT, "log": TEXT}; POST /api/fit:
// {"log": TEXT}; POST /api/contention/trend: {"history": TEXT}; POST
// /api/oracle/plan: {"plan": TEXT}). Their body holds each file as
// one string; the work writes them into a private temporary folder, runs
// the command with its options pointing there, and removes the folder
// (upload.cpp says why it is done so).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/ui/command.hpp"
#include "ui/command_pool.hpp"

namespace relsim::ui {

// A file a command reads, sent as one field of the body.
struct UploadFile {
  std::string_view field;   // the body's key, e.g. "plan"
  std::string_view option;  // the command's option, e.g. "--plan"; "": a positional argument
  std::string_view name;    // the file's name in the private folder, e.g. "plan.jsonl"
};

// The body's texts, in the order of `files`; throws InputError naming what
// is wrong with the body (not JSON, not a flat object, a key it does not
// take, a field missing or not a string).
std::vector<std::string> parse_upload_body(std::string_view body, std::span<const UploadFile> files);

// args: the command line without the files' options (command_args).
Work upload_work(CommandRunner runner, std::vector<std::string> args, std::span<const UploadFile> files,
                 std::vector<std::string> texts);

}  // namespace relsim::ui
