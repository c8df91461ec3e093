#pragma once
// Lines of a text as relsim's line-based inputs read them (plan files,
// reports, logs): split at '\n', a trailing '\r' dropped, numbered from 1
// for messages. A text ending in '\n' has no empty last line.
#include <cstddef>
#include <functional>
#include <string_view>

namespace relsim {

void for_each_line(std::string_view text, const std::function<void(std::size_t line_no, std::string_view line)>& f);

}  // namespace relsim
