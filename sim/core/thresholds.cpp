#include "relsim/core/thresholds.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim {
namespace {

Threshold parse_one(std::string_view text, const std::vector<std::string>& metrics) {
  std::string expr;
  for (char c : text)
    if (c != ' ') expr += c;
  const std::size_t at = expr.find_first_of("<>");
  if (at == std::string::npos || at == 0)
    throw InputError(fmt::format("require = '{}' is not NAME OP NUMBER: OP is >=, <=, > or <", expr));
  Threshold t;
  t.text = expr;
  t.metric = expr.substr(0, at);
  const bool or_equal = at + 1 < expr.size() && expr[at + 1] == '=';
  t.op = expr[at] == '>' ? (or_equal ? ThresholdOp::at_least : ThresholdOp::above)
                         : (or_equal ? ThresholdOp::at_most : ThresholdOp::below);
  bool known = false;
  for (const std::string& m : metrics) known |= m == t.metric;
  if (!known)
    throw InputError(fmt::format("require = '{}': no metric '{}' here: use {}", expr, t.metric, fmt::join(metrics, ", ")));
  const std::string number = expr.substr(at + (or_equal ? 2 : 1));
  const std::optional<double> bound = parse_number<double>(number);
  if (!bound || !std::isfinite(*bound))
    throw InputError(fmt::format("require = '{}': '{}' is not a finite number", expr, number));
  t.bound = *bound;
  return t;
}

bool holds(ThresholdOp op, double value, double bound) {
  switch (op) {
    case ThresholdOp::at_least: return value >= bound;
    case ThresholdOp::at_most: return value <= bound;
    case ThresholdOp::above: return value > bound;
    case ThresholdOp::below: return value < bound;
  }
  return false;
}

}  // namespace

std::vector<Threshold> parse_thresholds(std::string_view spec, const std::vector<std::string>& metrics) {
  std::vector<Threshold> out;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    out.push_back(parse_one(spec.substr(start, comma - start), metrics));
    start = comma + 1;
  }
  return out;
}

std::vector<ThresholdCheck> check_thresholds(const std::vector<Threshold>& thresholds, const Measured& measured) {
  std::vector<ThresholdCheck> out;
  for (const Threshold& t : thresholds) {
    ThresholdCheck c;
    c.threshold = t;
    if (const auto it = measured.values.find(t.metric); it != measured.values.end()) {
      c.value = it->second;
      c.met = holds(t.op, it->second, t.bound);
    } else {
      const auto why = measured.missing.find(t.metric);
      c.why_missing = why != measured.missing.end() ? why->second : "not computed in this run";
    }
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> missed_lines(const std::vector<ThresholdCheck>& checks) {
  std::vector<std::string> out;
  for (const ThresholdCheck& c : checks) {
    if (c.met) continue;
    out.push_back(c.value ? fmt::format("threshold missed: {} ({} = {:.6g})", c.threshold.text, c.threshold.metric,
                                        *c.value)
                          : fmt::format("threshold missed: {} ({}: {})", c.threshold.text, c.threshold.metric,
                                        c.why_missing));
  }
  return out;
}

}  // namespace relsim
