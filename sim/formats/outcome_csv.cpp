// Reading a harness's outcomes from a CSV `task,outcome,detail` (request_log.hpp).
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/formats/request_log.hpp"

namespace relsim {
namespace {

// The fields of one CSV line: plain, or quoted with "" for a quote inside.
std::vector<std::string> split_csv(std::string_view line, const std::string& at) {
  std::vector<std::string> fields(1);
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') fields.back() += c;
      else if (i + 1 < line.size() && line[i + 1] == '"') fields.back() += line[++i];
      else quoted = false;
    } else if (c == ',') {
      fields.emplace_back();
      was_quoted = false;
    } else if (c == '"' && fields.back().empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else if (was_quoted) {
      throw InputError(fmt::format("{}: text after a closing quote", at));
    } else {
      fields.back() += c;
    }
  }
  if (quoted) throw InputError(fmt::format("{}: a quoted field is not closed on its line", at));
  return fields;
}

}  // namespace

std::vector<OutcomeReport> parse_outcome_csv(std::string_view text, const std::string& where) {
  std::vector<OutcomeReport> out;
  bool have_header = false;
  std::int64_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const std::string at = fmt::format("{}:{}", where, number);
    const std::vector<std::string> f = split_csv(line, at);
    if (!have_header) {
      if (!(f.size() == 3 && f[0] == "task" && f[1] == "outcome" && f[2] == "detail") &&
          !(f.size() == 2 && f[0] == "task" && f[1] == "outcome"))
        throw InputError(fmt::format("{}: the first row must be the header task,outcome,detail", at));
      have_header = true;
      continue;
    }
    if (f.size() < 2 || f.size() > 3)
      throw InputError(fmt::format("{}: {} fields, expected task,outcome,detail", at, f.size()));
    OutcomeReport o;
    const auto task = parse_number<std::int64_t>(f[0]);
    if (!task || *task < 0) throw InputError(fmt::format("{}: task = '{}' is not an integer >= 0", at, f[0]));
    o.task = *task;
    try {
      o.outcome = parse_outcome_word(f[1]);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", at, e.what()));
    }
    if (f.size() == 3) o.detail = f[2];
    o.line = number;
    out.push_back(std::move(o));
  }
  if (!have_header) throw InputError(fmt::format("{}: empty outcomes file, no header task,outcome,detail", where));
  return out;
}

std::vector<OutcomeReport> read_outcome_csv(const std::string& path) {
  return parse_outcome_csv(read_file(path, "outcomes file"), path);
}

}  // namespace relsim
