#include "relsim/sweep/grid.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

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

// std::stod would throw std::out_of_range for a subnormal (strtod's ERANGE);
// from_chars may refuse one too, and then the value stays as it is.
double round12(double x) {
  if (x == 0.0) return 0.0;
  return parse_number<double>(fmt::format("{:.12g}", x)).value_or(x);
}

// The values of an integer range, counted and stepped in unsigned arithmetic
// (modulo 2^64, so nothing overflows): start + i step never passes stop.
std::vector<long long> integer_range(long long start, long long stop, long long step, std::size_t room,
                                     const std::string& where) {
  using U = unsigned long long;
  const U steps = (static_cast<U>(stop) - static_cast<U>(start)) / static_cast<U>(step);  // values - 1
  if (steps >= room) throw InputError(fmt::format("{}: more than {} values", where, kMaxAxisValues));
  std::vector<long long> values;
  values.reserve(static_cast<std::size_t>(steps) + 1);
  for (U i = 0; i <= steps; ++i) values.push_back(static_cast<long long>(static_cast<U>(start) + i * static_cast<U>(step)));
  return values;
}

template <class T, class Parse>
std::vector<T> parse_axis(std::string_view spec, std::string_view name, Parse parse, std::size_t most) {
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
      if constexpr (std::is_floating_point_v<T>) {
        // A relative slack of 1e-9 steps keeps 0.05:0.5:0.05 ending at 0.5.
        const double count = std::floor((stop - start) / step + 1e-9) + 1.0;
        if (!(count + static_cast<double>(values.size()) <= static_cast<double>(most)))
          throw InputError(fmt::format("{}: more than {} values", where, most));
        for (long long i = 0; i < static_cast<long long>(count); ++i) {
          // The slack may step past stop; near the top of the doubles that is infinity.
          const double value = round12(start + static_cast<double>(i) * step);
          if (!std::isfinite(value))
            throw InputError(fmt::format("{}: range value {} is not a finite number", where, value));
          values.push_back(value);
        }
      } else {
        for (const T v : integer_range(start, stop, step, most - values.size(), where)) values.push_back(v);
      }
    } else {
      throw InputError(fmt::format("{}: '{}' is neither a value nor a range start:stop:step", where, item));
    }
    if (values.size() > most) throw InputError(fmt::format("{}: more than {} values", where, most));
  }
  // Duplicates, found side by side in a sorted copy: one allocation, not a
  // std::set node per value.
  std::vector<T> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
    throw InputError(fmt::format("{}: value {} appears twice", where, *twice));
  return values;
}

}  // namespace

std::vector<double> parse_real_axis(std::string_view spec, std::string_view name) {
  return parse_axis<double>(
      spec, name, [](const std::string& s, const std::string& what) { return parse_double(s, what); }, kMaxRealAxisValues);
}

std::vector<long long> parse_integer_axis(std::string_view spec, std::string_view name) {
  return parse_axis<long long>(
      spec, name, [](const std::string& s, const std::string& what) { return parse_integer(s, what); }, kMaxAxisValues);
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

std::vector<PolicyKind> parse_policy_axis(std::string_view spec) {
  std::vector<PolicyKind> kinds;
  for (const auto& word : split(spec, ',')) {
    const PolicyKind kind = parse_policy_kind(word);
    if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end())
      throw InputError(fmt::format("--policy '{}': {} appears twice", spec, word));
    kinds.push_back(kind);
  }
  return kinds;
}

std::vector<Backoff> parse_backoff_axis(std::string_view spec) {
  // Regroup the comma-separated items: numbers continue the schedule before them.
  std::vector<std::string> specs;
  for (const auto& item : split(spec, ',')) {
    const bool starts_schedule = !item.empty() && std::isalpha(static_cast<unsigned char>(item[0])) != 0;
    if (starts_schedule || specs.empty()) specs.push_back(item);
    else specs.back() += "," + item;
  }
  std::vector<Backoff> schedules;
  std::set<std::string> seen;
  for (const auto& one : specs) {
    Backoff backoff = parse_backoff(one);
    if (!seen.insert(to_string(backoff)).second)
      throw InputError(fmt::format("--backoff '{}': {} appears twice", spec, to_string(backoff)));
    schedules.push_back(std::move(backoff));
  }
  return schedules;
}

}  // namespace relsim
