#include "relsim/sweep/known_values.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"

namespace relsim {

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  // Known-value files are plain: no quoting, comma-separated, no embedded commas.
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  for (auto& f : fields) {
    const auto b = f.find_first_not_of(" \t\r");
    const auto e = f.find_last_not_of(" \t\r");
    f = b == std::string::npos ? std::string() : f.substr(b, e - b + 1);
  }
  return fields;
}

}  // namespace

std::vector<KnownValue> read_known_values(const std::string& path) {
  return parse_known_values(read_file(path, "known-values file"), path);
}

std::vector<KnownValue> parse_known_values(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  const std::vector<std::string> required = {"p", "q", "r", "n", "b", "g", "chain", "expected", "tolerance"};
  std::map<std::string, std::size_t> column;
  std::vector<KnownValue> rows;
  std::string line;
  int number = 0;
  std::size_t width = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    const auto fields = split_csv_line(line);
    const std::string where = fmt::format("{}:{}", file, number);
    if (column.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (column.count(fields[i])) throw InputError(fmt::format("{}: column '{}' appears twice", where, fields[i]));
        column[fields[i]] = i;
      }
      for (const auto& name : required)
        if (!column.count(name))
          throw InputError(fmt::format("{}: header lacks column '{}' (needs p,q,r,n,b,g,chain,expected,tolerance)",
                                       where, name));
      width = fields.size();
      continue;
    }
    if (fields.size() != width)
      throw InputError(fmt::format("{}: {} fields, the header has {}", where, fields.size(), width));
    auto field = [&](const std::string& name) { return fields[column.at(name)]; };
    auto whole = [&](const std::string& name) { return parse_integer(field(name), where + ": " + name); };
    KnownValue kv;
    kv.line = number;
    try {
      kv.model.p = parse_double(field("p"), where + ": p");
      kv.model.q = parse_double(field("q"), where + ": q");
      kv.model.b = whole("b");
      kv.model.g = whole("g");
      kv.model.chain = parse_chain_scope(field("chain"));
      const long long n = whole("n"), r = whole("r");
      if (r < 0 || r > kMaxRetries)
        throw InputError(fmt::format("r = {} is out of range: r must be in [0, {}]", r, kMaxRetries));
      kv.policy.n = n;
      kv.policy.r = static_cast<int>(r);
      kv.expected = parse_double(field("expected"), where + ": expected");
      kv.tolerance = parse_double(field("tolerance"), where + ": tolerance");
      if (!(kv.expected >= 0.0 && kv.expected <= 1.0))
        throw InputError(fmt::format("expected = {} is out of range: it must be in [0, 1]", kv.expected));
      if (!(kv.tolerance >= 0.0 && kv.tolerance < 1.0))
        throw InputError(fmt::format("tolerance = {} is out of range: it must be in [0, 1)", kv.tolerance));
      validate(kv.model);
      validate(kv.policy);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      throw InputError(msg.rfind(where, 0) == 0 ? msg : where + ": " + msg);
    }
    if (column.count("source")) kv.source = field("source");
    rows.push_back(std::move(kv));
  }
  if (column.empty()) throw InputError(fmt::format("{}: empty file, no header", file));
  if (rows.empty()) throw InputError(fmt::format("{}: header but no rows", file));
  return rows;
}

KnownValuesCheck check_known_values(const std::string& file, const std::string& method,
                                    const std::function<void(const KnownValueCheck&)>& checked) {
  if (method != "matrix" && method != "enumerate")
    throw InputError(fmt::format("method = '{}' is not a method for check: use matrix or enumerate", method));
  KnownValuesCheck check{file, method, {}, 0};
  for (const KnownValue& kv : read_known_values(file)) {
    ExactOptions opt;
    opt.distribution = false;
    KnownValueCheck row{kv, 0.0, 0.0, false};
    row.computed = method == "matrix" ? exact_matrix(kv.model, kv.policy, opt).success
                                      : exact_enumerate(kv.model, kv.policy).success;
    row.abs_diff = std::abs(row.computed - kv.expected);
    row.ok = row.abs_diff <= kv.tolerance;
    check.misses += row.ok ? 0 : 1;
    check.rows.push_back(std::move(row));
    if (checked) checked(check.rows.back());
  }
  return check;
}

}  // namespace relsim
