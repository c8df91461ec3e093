#include "relsim/grid.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>

#include "relsim/error.hpp"
#include "relsim/known_values.hpp"

namespace relsim {
namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

double round12(double x) {
  if (x == 0.0) return 0.0;
  return std::stod(fmt::format("{:.12g}", x));
}

template <class T, class Parse>
std::vector<T> parse_axis(std::string_view spec, std::string_view name, Parse parse) {
  const std::string where = fmt::format("--{} '{}'", name, spec);
  if (spec.empty()) throw InputError(fmt::format("{}: empty; give a value, a list a,b,c or a range start:stop:step", where));
  std::vector<T> values;
  for (const auto& item : split(spec, ',')) {
    if (item.empty()) throw InputError(fmt::format("{}: empty item in the list", where));
    const auto parts = split(item, ':');
    if (parts.size() == 1) {
      values.push_back(parse(parts[0], std::string(name)));
    } else if (parts.size() == 3) {
      const T start = parse(parts[0], std::string(name) + " range start");
      const T stop = parse(parts[1], std::string(name) + " range stop");
      const T step = parse(parts[2], std::string(name) + " range step");
      if (!(step > 0)) throw InputError(fmt::format("{}: range step = {} must be > 0", where, step));
      if (stop < start) throw InputError(fmt::format("{}: range stop {} is below its start {}", where, stop, start));
      // A relative slack of 1e-9 steps keeps 0.05:0.5:0.05 ending at 0.5.
      const double count = std::floor((static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step) + 1e-9) + 1.0;
      if (count + static_cast<double>(values.size()) > static_cast<double>(kMaxAxisValues))
        throw InputError(fmt::format("{}: more than {} values", where, kMaxAxisValues));
      for (long long i = 0; i < static_cast<long long>(count); ++i) {
        if constexpr (std::is_floating_point_v<T>) values.push_back(round12(start + static_cast<double>(i) * step));
        else values.push_back(start + i * step);
      }
    } else {
      throw InputError(fmt::format("{}: '{}' is neither a value nor a range start:stop:step", where, item));
    }
    if (values.size() > kMaxAxisValues) throw InputError(fmt::format("{}: more than {} values", where, kMaxAxisValues));
  }
  std::set<T> seen;
  for (const T& v : values)
    if (!seen.insert(v).second) throw InputError(fmt::format("{}: value {} appears twice", where, v));
  return values;
}

}  // namespace

std::vector<double> parse_real_axis(std::string_view spec, std::string_view name) {
  return parse_axis<double>(spec, name, [](const std::string& s, const std::string& what) { return parse_double(s, what); });
}

std::vector<long long> parse_integer_axis(std::string_view spec, std::string_view name) {
  return parse_axis<long long>(spec, name,
                               [](const std::string& s, const std::string& what) { return parse_integer(s, what); });
}

std::vector<ChainScope> parse_chain_axis(std::string_view spec) {
  std::vector<ChainScope> scopes;
  for (const auto& word : split(spec, ',')) {
    const ChainScope scope = parse_chain_scope(word);
    if (std::find(scopes.begin(), scopes.end(), scope) != scopes.end())
      throw InputError(fmt::format("--chain '{}': {} appears twice", spec, word));
    scopes.push_back(scope);
  }
  return scopes;
}

}  // namespace relsim
