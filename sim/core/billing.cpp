// What a request costs (billing.hpp; docs/model.md, Cost).
#include "relsim/core/billing.hpp"

#include <cfloat>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/weights.hpp"

namespace relsim {
namespace {

constexpr double kMaxTokens = 1e9;
constexpr double kMaxPrice = 1e6;

bool in_stream(std::optional<FaultKind> kind) { return kind && streams_answer(*kind); }

// The kinds --break-at may name, as its errors list them: those that stream an answer.
std::string answer_kinds() {
  std::string s;
  for (int k = 0; k < kFaultKinds; ++k)
    if (streams_answer(static_cast<FaultKind>(k)))
      s += (s.empty() ? "" : ", ") + std::string(to_string(static_cast<FaultKind>(k)));
  return s;
}

}  // namespace

std::array<double, kFaultKinds> Billing::default_break_at() {
  std::array<double, kFaultKinds> at{};
  at[static_cast<std::size_t>(FaultKind::cut)] = 0.5;
  at[static_cast<std::size_t>(FaultKind::no_stop)] = 1.0;
  // A content fault is a whole answer, billed as one.
  for (int k = 0; k < kFaultKinds; ++k)
    if (stage_of(static_cast<FaultKind>(k)) == Stage::content) at[static_cast<std::size_t>(k)] = 1.0;
  return at;
}

bool Billing::billed(std::optional<FaultKind> kind) { return !kind || in_stream(kind); }

double Billing::billed_output(std::optional<FaultKind> kind) const {
  if (!kind) return output_tokens;
  if (!in_stream(kind)) return 0.0;
  // A relative nudge of a few ulps before the floor: 0.29 x 100 is
  // 28.999999999999996 in doubles, and 29 tokens were streamed.
  return std::floor(break_at[static_cast<std::size_t>(*kind)] * output_tokens * (1.0 + 4.0 * DBL_EPSILON));
}

std::array<std::int64_t, kFaultKinds + 1> nano_costs(const Billing& billing) {
  std::array<std::int64_t, kFaultKinds + 1> out{};
  for (int k = 0; k <= kFaultKinds; ++k)
    out[static_cast<std::size_t>(k)] = std::llround(
        billing.request_cost(k < kFaultKinds ? std::optional<FaultKind>(static_cast<FaultKind>(k)) : std::nullopt) * 1e9);
  return out;
}

double Billing::request_cost(std::optional<FaultKind> kind) const {
  if (!billed(kind)) return 0.0;
  return ((input_tokens - cached_tokens) * price_in + cached_tokens * cache_read + billed_output(kind) * price_out) /
         1e6;
}

double Billing::cache_surcharge() const { return cached_tokens * (cache_write - cache_read) / 1e6; }

std::int64_t nano_surcharge(const Billing& billing) { return std::llround(billing.cache_surcharge() * 1e9); }

void validate(const Billing& b) {
  const auto tokens = [](std::string_view name, double v) {
    if (!(v >= 0.0 && v <= kMaxTokens && v == std::floor(v)))
      throw InputError(fmt::format("{} = {} is out of range: it must be a whole number of tokens in [0, {:.0f}]", name,
                                   v, kMaxTokens));
  };
  const auto price = [](std::string_view name, double v) {
    if (!(v >= 0.0 && v <= kMaxPrice))
      throw InputError(fmt::format("{} = {} is out of range: it must be USD per million tokens in [0, {:.0f}]", name, v,
                                   kMaxPrice));
  };
  tokens("input-tokens", b.input_tokens);
  tokens("output-tokens", b.output_tokens);
  price("price-in", b.price_in);
  price("price-out", b.price_out);
  tokens("cached-tokens", b.cached_tokens);
  if (b.cached_tokens > b.input_tokens)
    throw InputError(fmt::format("cached-tokens = {} is out of range: the cached prefix is part of the input, so it "
                                 "must be at most input-tokens = {}",
                                 b.cached_tokens, b.input_tokens));
  price("cache-read", b.cache_read);
  price("cache-write", b.cache_write);
  for (int k = 0; k < kFaultKinds; ++k) {
    const double f = b.break_at[static_cast<std::size_t>(k)];
    const auto kind = static_cast<FaultKind>(k);
    if (!(f >= 0.0 && f <= 1.0))
      throw InputError(fmt::format("break-at of {} = {} is out of range: it must be a number in [0, 1]", to_string(kind), f));
    if (f > 0.0 && !in_stream(kind))
      throw InputError(fmt::format("break-at of {} = {}: {} is refused before the model starts and never billed; "
                                   "name the kinds that stream an answer only ({})",
                                   to_string(kind), f, to_string(kind), answer_kinds()));
  }
}

std::array<double, kFaultKinds> parse_break_at(std::string_view spec) {
  std::vector<bool> named(kFaultKinds, false);
  const std::string kinds = answer_kinds();
  WeightWords words{"break-at", "kind", "cut=0.5,stall=0.25", kinds,
                    [&named, &kinds](std::string_view word) {
                      const FaultKind kind = parse_fault_kind(word);
                      if (!in_stream(kind))
                        throw InputError(fmt::format(
                            "break-at names '{}', which is refused before the model starts and never billed: name "
                            "the kinds that stream an answer only ({})",
                            word, kinds));
                      named[static_cast<std::size_t>(kind)] = true;
                      return static_cast<std::size_t>(kind);
                    },
                    [](std::size_t i) { return to_string(static_cast<FaultKind>(i)); }};
  const std::vector<double> given =
      parse_named_weights(spec, kFaultKinds, words, ValueRange{1.0, true, "fraction"});
  std::array<double, kFaultKinds> at = Billing::default_break_at();
  for (std::size_t k = 0; k < at.size(); ++k)
    if (named[k]) at[k] = given[k];
  return at;
}

std::string break_at_string(const std::array<double, kFaultKinds>& break_at) {
  std::string s;
  for (int k = 0; k < kFaultKinds; ++k)
    if (streams_answer(static_cast<FaultKind>(k)))
      s += fmt::format("{}{}={}", s.empty() ? "" : ",", to_string(static_cast<FaultKind>(k)),
                       break_at[static_cast<std::size_t>(k)]);
  return s;
}

}  // namespace relsim
