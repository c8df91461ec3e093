#include "cli/unknown_option.hpp"

#include <fmt/format.h>

namespace relsim::cli {

std::optional<std::string> unknown_option_line(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* sub = nullptr;
  std::string path;           // "fleet", "bughunt run": the subcommand's words
  bool sub_options = false;   // an option came after the subcommand's words
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (!sub) {
      if (arg.rfind("--", 0) == 0 && arg.size() > 2 && !app.get_option_no_throw(arg.substr(0, arg.find('='))))
        return fmt::format("{} is not an option of relsim: relsim --help lists them", arg.substr(0, arg.find('=')));
      if (!arg.empty() && arg[0] == '-') continue;  // the program's own options
      for (const CLI::App* candidate : app.get_subcommands({}))
        if (candidate->check_name(arg)) sub = candidate;
      if (!sub) return std::nullopt;  // CLI11 names an unknown subcommand itself
      path = sub->get_name();
      continue;
    }
    if (!sub_options && !arg.empty() && arg[0] != '-') {
      // A word right after the subcommand may name one of its own (bughunt run).
      const CLI::App* nested = nullptr;
      for (const CLI::App* candidate : sub->get_subcommands({}))
        if (candidate->check_name(arg)) nested = candidate;
      if (nested) {
        sub = nested;
        path += " " + nested->get_name();
        continue;
      }
    }
    if (arg.size() <= 2 || arg.rfind("--", 0) != 0) continue;
    sub_options = true;
    const std::string name = arg.substr(0, arg.find('='));
    if (!sub->get_option_no_throw(name))
      return fmt::format("{} is not an option of relsim {}: relsim {} --help lists them", name, path, path);
  }
  return std::nullopt;
}

}  // namespace relsim::cli
