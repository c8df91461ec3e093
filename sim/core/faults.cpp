#include "relsim/core/faults.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/core/weights.hpp"

namespace relsim {
namespace {

constexpr std::array<std::string_view, kFaultKinds> kNames = {
    "cut",      "no_stop",  "malformed", "overloaded", "stall", "slow_headers",
    "http_429", "http_500", "http_503",  "http_529",   "reset", "http_400",
    "max_tokens", "bad_tool_args", "duplicate_event", "stall_first",
};

std::string all_names() {
  std::string s;
  for (const auto name : kNames) s += (s.empty() ? "" : ", ") + std::string(name);
  return s;
}

}  // namespace

std::string_view to_string(FaultKind kind) { return kNames.at(static_cast<std::size_t>(kind)); }

Stage stage_of(FaultKind kind) {
  if (kind <= FaultKind::stall || kind == FaultKind::stall_first) return Stage::in_stream;
  if (kind == FaultKind::http_400) return Stage::fatal;
  if (kind >= FaultKind::max_tokens) return Stage::content;
  return Stage::pre_response;
}

bool streams_answer(FaultKind kind) {
  const Stage stage = stage_of(kind);
  return stage == Stage::in_stream || stage == Stage::content;
}

FaultKind parse_fault_kind(std::string_view word) {
  for (int i = 0; i < kFaultKinds; ++i)
    if (kNames[static_cast<std::size_t>(i)] == word) return static_cast<FaultKind>(i);
  throw InputError(fmt::format("fault kind '{}' is not a kind: use one of {}", word, all_names()));
}

FaultWeights FaultWeights::in_stream_uniform() {
  FaultWeights w;
  for (int i = 0; i <= static_cast<int>(FaultKind::stall); ++i) w.weight[static_cast<std::size_t>(i)] = 1.0;
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

KindCuts kind_cuts(const FaultWeights& weights) {
  const double total = weights.checked_total();
  int last = 0;
  for (int k = 0; k < kFaultKinds; ++k)
    if (weights.weight[static_cast<std::size_t>(k)] > 0.0) last = k;
  KindCuts cut{};
  double cum = 0.0;
  for (int k = 0; k < kFaultKinds; ++k) {
    cum += weights.weight[static_cast<std::size_t>(k)];
    cut[static_cast<std::size_t>(k)] =
        k >= last ? (std::uint64_t{1} << 32)
                  : static_cast<std::uint64_t>(std::llround(std::ldexp(std::min(1.0, cum / total), 32)));
  }
  return cut;
}

namespace {

const WeightWords& kind_words() {
  static const WeightWords words{
      "kinds", "kind", "cut=1,stall=2", all_names(),
      [](std::string_view name) { return static_cast<std::size_t>(parse_fault_kind(name)); },
      [](std::size_t i) { return kNames.at(i); }};
  return words;
}

}  // namespace

FaultWeights parse_fault_weights(std::string_view spec) {
  const std::vector<double> parsed = parse_named_weights(spec, kFaultKinds, kind_words());
  FaultWeights w;
  std::copy(parsed.begin(), parsed.end(), w.weight.begin());
  return w;
}

std::string to_string(const FaultWeights& weights) {
  return named_weights_string(std::vector<double>(weights.weight.begin(), weights.weight.end()), kind_words());
}

std::vector<FaultKind> drawn_fault_kinds(const FaultWeights& weights) {
  std::vector<FaultKind> drawn;
  for (int k = 0; k < kFaultKinds; ++k)
    if (weights.weight[static_cast<std::size_t>(k)] > 0.0) drawn.push_back(static_cast<FaultKind>(k));
  return drawn;
}

}  // namespace relsim
