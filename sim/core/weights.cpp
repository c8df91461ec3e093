// Weights by name (weights.hpp).
#include "relsim/core/weights.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim {

std::vector<double> parse_named_weights(std::string_view spec, std::size_t count, const WeightWords& w,
                                        const ValueRange& range) {
  if (spec.empty())
    throw InputError(fmt::format("{} = '' is empty: give {}={} pairs such as {} ({}s: {})", w.option, w.item,
                                 range.value, w.example, w.item, w.names));
  const std::string_view one = w.example.substr(0, w.example.find(','));
  std::vector<double> weights(count, 0.0);
  std::vector<bool> seen(count, false);
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view item = spec.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InputError(
          fmt::format("{} item '{}' in '{}' is not {}={} (e.g. {})", w.option, item, spec, w.item, range.value, one));
    const std::size_t index = w.index_of(item.substr(0, eq));
    const std::string_view name = w.name_of(index);
    if (seen[index])
      throw InputError(fmt::format("{} = '{}' names '{}' twice: name each {} at most once", w.option, spec, name, w.item));
    seen[index] = true;
    const std::string_view text = item.substr(eq + 1);
    const double value = parse_number<double>(text).value_or(-1.0);
    if (!(value >= 0.0 && std::isfinite(value) && value <= range.max))
      throw InputError(std::isinf(range.max)
                           ? fmt::format("{} of {} = '{}' is out of range: it must be a finite number >= 0",
                                         range.value, name, text)
                           : fmt::format("{} of {} = '{}' is out of range: it must be a number in [0, {}]",
                                         range.value, name, text, range.max));
    weights[index] = value;
    start = comma + 1;
  }
  // Each weight is finite and >= 0 already, but two near DBL_MAX add up to inf.
  double total = 0.0;
  for (const double x : weights) total += x;
  if (!((total > 0.0 || range.total_may_be_zero) && std::isfinite(total)))
    throw InputError(fmt::format("{} = '{}' has total weight {}: it must be finite and > 0", w.option, spec, total));
  return weights;
}

std::size_t pick_by_weight(std::span<const double> weights, double total, double u) {
  double cum = 0.0;
  std::size_t last = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0.0) continue;
    last = i;
    cum += weights[i];
    if (u * total < cum) return i;
  }
  return last;  // u * total rounded up to the total
}

std::string named_weights_string(const std::vector<double>& weights, const WeightWords& w) {
  std::string s;
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (weights[i] > 0.0) s += fmt::format("{}{}={}", s.empty() ? "" : ",", w.name_of(i), weights[i]);
  return s;
}

}  // namespace relsim
