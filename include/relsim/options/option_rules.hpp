#pragma once
// Option rules declared on the options, in the project's words. CLI11 checks
// them while it parses, before a command does any work. Its own excludes()
// and needs() would print "--x excludes --y" and add lines to --help; these
// print what to do instead and leave --help as it is. A refused rule reaches
// the user as one line: parse_error_line drops CLI11's "--x: " before it.
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "relsim/core/error.hpp"

namespace relsim::cli {

// `option` given while `condition()` holds: refused with `message`. The
// condition may ask any option whether it was given (count()): CLI11 knows
// that before it checks one. Not an option's value: it converts them one
// after the other, in the order they were declared.
CLI::Option* refuse_when(CLI::Option* option, std::function<bool()> condition, std::string message);
// `option` given together with `other`: refused with `message`.
CLI::Option* refuse_with(CLI::Option* option, const CLI::Option* other, std::string message);
// `option` given without `other`: refused with `message`.
CLI::Option* needs_option(CLI::Option* option, const CLI::Option* other, std::string message);

// The option's value, converted as CLI11 converts it, checked by `check`,
// which throws InputError with the project's line (a range, a set). Text
// that does not convert is left to CLI11's conversion error.
template <class T>
CLI::Option* check_value(CLI::Option* option, std::function<void(const T&)> check) {
  return option->check(CLI::Validator(
      [check = std::move(check)](std::string& text) -> std::string {
        T value{};
        if (!CLI::detail::lexical_cast(text, value)) return "";
        try {
          check(value);
        } catch (const InputError& e) {
          return e.what();
        }
        return "";
      },
      "", "relsim"));
}

}  // namespace relsim::cli
