#include "cli/option_rules.hpp"

#include <utility>

namespace relsim::cli {

CLI::Option* refuse_with(CLI::Option* option, const CLI::Option* other, std::string message) {
  return option->check(CLI::Validator(
      [other, message = std::move(message)](std::string&) { return other->count() ? message : std::string(); }, "",
      "refuse_with"));
}

CLI::Option* needs_option(CLI::Option* option, const CLI::Option* other, std::string message) {
  return option->check(CLI::Validator(
      [other, message = std::move(message)](std::string&) { return other->count() ? std::string() : message; }, "",
      "needs_option"));
}

}  // namespace relsim::cli
