#include "relsim/core/faults.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim {
namespace {

constexpr std::array<std::string_view, kFaultKinds> kNames = {
    "cut",      "no_stop",  "malformed", "overloaded", "stall", "slow_headers",
    "http_429", "http_500", "http_503",  "http_529",   "reset", "http_400",
};

std::string all_names() {
  std::string s;
  for (const auto name : kNames) s += (s.empty() ? "" : ", ") + std::string(name);
  return s;
}

}  // namespace

std::string_view to_string(FaultKind kind) { return kNames.at(static_cast<std::size_t>(kind)); }

Stage stage_of(FaultKind kind) {
  if (kind <= FaultKind::stall) return Stage::in_stream;
  if (kind == FaultKind::http_400) return Stage::fatal;
  return Stage::pre_response;
}

FaultKind parse_fault_kind(std::string_view word) {
  for (int i = 0; i < kFaultKinds; ++i)
    if (kNames[static_cast<std::size_t>(i)] == word) return static_cast<FaultKind>(i);
  throw InputError(fmt::format("fault kind '{}' is not a kind: use one of {}", word, all_names()));
}

FaultWeights FaultWeights::in_stream_uniform() {
  FaultWeights w;
  for (int i = 0; i < kFaultKinds; ++i)
    if (stage_of(static_cast<FaultKind>(i)) == Stage::in_stream) w.weight[static_cast<std::size_t>(i)] = 1.0;
  return w;
}

double FaultWeights::total() const {
  double sum = 0.0;
  for (const double x : weight) sum += x;
  return sum;
}

double FaultWeights::checked_total() const {
  for (const double w : weight)
    if (!(w >= 0.0 && std::isfinite(w)))
      throw InputError(fmt::format("fault kind weight {} is out of range: weights must be finite and >= 0", w));
  const double sum = total();
  if (!(sum > 0.0 && std::isfinite(sum)))
    throw InputError(fmt::format("fault kind weights total {}: the total must be finite and > 0", sum));
  return sum;
}

FaultWeights parse_fault_weights(std::string_view spec) {
  if (spec.empty())
    throw InputError(fmt::format("kinds = '' is empty: give kind=weight pairs such as cut=1,stall=2 (kinds: {})",
                                 all_names()));
  FaultWeights w;
  std::array<bool, kFaultKinds> seen{};
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view item = spec.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InputError(fmt::format("kinds item '{}' in '{}' is not kind=weight (e.g. cut=1)", item, spec));
    const FaultKind kind = parse_fault_kind(item.substr(0, eq));
    const auto index = static_cast<std::size_t>(kind);
    if (seen[index]) throw InputError(fmt::format("kinds = '{}' names '{}' twice: name each kind at most once", spec, to_string(kind)));
    seen[index] = true;
    const std::string_view text = item.substr(eq + 1);
    const double value = parse_number<double>(text).value_or(-1.0);
    if (value < 0.0)
      throw InputError(fmt::format("weight of {} = '{}' is out of range: it must be a finite number >= 0",
                                   to_string(kind), text));
    w.weight[index] = value;
    start = comma + 1;
  }
  // Each weight is finite and >= 0 already, but two near DBL_MAX add up to inf.
  if (const double total = w.total(); !(total > 0.0 && std::isfinite(total)))
    throw InputError(fmt::format("kinds = '{}' has total weight {}: it must be finite and > 0", spec, total));
  return w;
}

std::string to_string(const FaultWeights& weights) {
  std::string s;
  for (int i = 0; i < kFaultKinds; ++i) {
    const double x = weights.weight[static_cast<std::size_t>(i)];
    if (x > 0.0) s += fmt::format("{}{}={}", s.empty() ? "" : ",", kNames[static_cast<std::size_t>(i)], x);
  }
  return s;
}

}  // namespace relsim
