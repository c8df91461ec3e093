#pragma once
// The workbench's query strings: strict parsing (every byte from the network
// is checked) and the mapping of an endpoint's parameters to a command's
// options through an allow-list, so the page can ask for nothing the command
// line would not do, and nothing that writes files.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relsim::ui {

inline constexpr std::size_t kMaxTargetBytes = 8192;  // path and query
inline constexpr std::size_t kMaxParameters = 64;

struct Target {
  std::string path;                                         // percent-decoded, e.g. "/api/exact"
  std::vector<std::pair<std::string, std::string>> params;  // in order, percent-decoded ('+' is a space)
};
// Throws InputError (one line naming the bad part) for: a target over
// kMaxTargetBytes, a bad %XX, a NUL or control byte, an empty or repeated
// key, a key not [A-Za-z][A-Za-z0-9-]{0,31}, more than kMaxParameters.
Target parse_target(std::string_view target);

// The command line an API endpoint runs: e.g. endpoint "exact" with
// {{"p","0.3"},{"json",""}} gives {"exact", "--p=0.3", "--json"}. The
// endpoint's fixed options (--json, --per-task, --timeline) are appended.
// Throws InputError for an unknown endpoint, a parameter the endpoint does
// not take (naming those it does), a flag given a value other than "", "1" or
// "true", or an option without a value.
std::vector<std::string> command_args(std::string_view endpoint, const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace relsim::ui
