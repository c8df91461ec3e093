// Lines of a text (text_lines.hpp).
#include "relsim/core/text_lines.hpp"

namespace relsim {

void for_each_line(std::string_view text, const std::function<void(std::size_t, std::string_view)>& f) {
  for (std::size_t line_no = 1; !text.empty(); ++line_no) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line_no, line);
  }
}

}  // namespace relsim
