#pragma once
// The tool-call options (docs/tool_model.md).
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "relsim/core/tool_faults.hpp"

namespace relsim::cli {

// --tool-faults --harness: a tool call after each successful model call
// (docs/tool_model.md), for exact and simulate.
struct ToolArgs {
  std::string faults;
  std::string harness = "guarded";
  CLI::Option* faults_option = nullptr;
  CLI::Option* harness_option = nullptr;

  // The validated tool model, or nullopt without --tool-faults. Throws
  // InputError for a bad value.
  std::optional<ToolModel> tool_model() const;
};
// Declares --harness without --tool-faults refused, and --tool-faults in time
// mode (`timed`: TimeArgs::timed_rule), which does not support it yet.
void add_tool_options(CLI::App& cmd, ToolArgs& args, std::function<bool()> timed);

}  // namespace relsim::cli
