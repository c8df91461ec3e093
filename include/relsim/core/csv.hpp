#pragma once
// CSV as relsim writes it: one field quoted as RFC 4180 asks, only when it
// must be (a comma, a quote or a line break in it), its quotes doubled. A
// backoff schedule (exp:0.5,8,0.25) and a policy list are the usual cases.
#include <string>
#include <string_view>

namespace relsim {

std::string csv_field(std::string_view text);

}  // namespace relsim
