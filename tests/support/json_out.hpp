#pragma once
// For tests of programs that print JSON: the last line of their output that
// parses as a JSON object (their verdict; what they printed before is not).
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace relsim::test {

inline nlohmann::json last_json_object(const std::string& out) {
  std::istringstream lines(out);
  nlohmann::json found;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() != '{') continue;
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object()) found = std::move(parsed);
  }
  return found;
}

}  // namespace relsim::test
