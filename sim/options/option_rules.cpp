#include "relsim/options/option_rules.hpp"

#include <utility>

namespace relsim::cli {

CLI::Option* refuse_when(CLI::Option* option, std::function<bool()> condition, std::string message) {
  return option->check(CLI::Validator(
      [condition = std::move(condition), message = std::move(message)](std::string&) {
        return condition() ? message : std::string();
      },
      "", "refuse_when"));
}

CLI::Option* refuse_with(CLI::Option* option, const CLI::Option* other, std::string message) {
  return refuse_when(option, [other] { return other->count() > 0; }, std::move(message));
}

CLI::Option* needs_option(CLI::Option* option, const CLI::Option* other, std::string message) {
  return refuse_when(option, [other] { return other->count() == 0; }, std::move(message));
}

}  // namespace relsim::cli
