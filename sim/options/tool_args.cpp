// --tool-faults and --harness (tool_args.hpp): the tool calls of exact and
// simulate, read strictly.
#include "relsim/options/tool_args.hpp"

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {

std::optional<ToolModel> ToolArgs::tool_model() const {
  if (!faults_option->count()) return std::nullopt;
  ToolModel model;
  model.faults = parse_tool_faults(faults);
  model.harness = parse_harness(harness);
  return model;
}

void add_tool_options(CLI::App& cmd, ToolArgs& args, std::function<bool()> timed) {
  args.faults_option = cmd.add_option(
      "--tool-faults", args.faults,
      "a tool call after each successful model call, its faults independent per call (docs/tool_model.md): "
      "transport=P,service=P,validate=P,exec=P,partial_write=P,truncate=P (each P given the stages before passed) "
      "and rollback=P (a guarded undo of a partial write fails); any subset, each in [0, 1], missing = 0");
  args.harness_option =
      cmd.add_option("--harness", args.harness,
                     "with --tool-faults: naive (errors unlocated, partial writes left, truncated results taken) or "
                     "guarded (stage named, partial writes undone, results checked)")
          ->capture_default_str();
  check_value<std::string>(args.faults_option, [timed = std::move(timed)](const std::string& faults) {
    if (timed())
      throw InputError(fmt::format("tool-faults = '{}': time mode (--t-good, --t-bad) does not support tool calls "
                                   "yet; leave out --tool-faults or the time options", faults));
  });
  check_value<std::string>(args.harness_option, [faults = args.faults_option](const std::string& harness) {
    if (!faults->count())
      throw InputError(fmt::format("harness = '{}' needs --tool-faults: the harness runs the tool calls, and there "
                                   "are none without it", harness));
  });
}

}  // namespace relsim::cli
