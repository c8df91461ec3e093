// Tool calls: stages, harness rules and their parsing (tool_faults.hpp).
#include "relsim/core/tool_faults.hpp"

#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/weights.hpp"

namespace relsim {
namespace {

constexpr const char* kKeys = "transport, service, validate, exec, partial_write, truncate, rollback";
constexpr int kKeyCount = kToolFaults + 1;  // the faults, then rollback

std::string_view key_name(int key) {
  return key < kToolFaults ? to_string(static_cast<ToolFault>(key)) : std::string_view("rollback");
}

double& key_value(ToolFaults& f, int key) {
  return key < kToolFaults ? f.conditional[static_cast<std::size_t>(key)] : f.rollback;
}
double key_value(const ToolFaults& f, int key) {
  return key < kToolFaults ? f.conditional[static_cast<std::size_t>(key)] : f.rollback;
}

// --tool-faults's keys for the shared name=value reader (core/weights.hpp).
const WeightWords& key_words() {
  static const WeightWords words{
      "tool-faults", "key", "transport=0.01,exec=0.02", kKeys,
      [](std::string_view name) {
        for (int key = 0; key < kKeyCount; ++key)
          if (key_name(key) == name) return static_cast<std::size_t>(key);
        throw InputError(fmt::format("tool-faults key '{}' is not a key: use {}", name.substr(0, 100), kKeys));
      },
      [](std::size_t key) { return key_name(static_cast<int>(key)); }};
  return words;
}

}  // namespace

std::string_view to_string(ToolFault fault) {
  switch (fault) {
    case ToolFault::transport: return "transport";
    case ToolFault::service: return "service";
    case ToolFault::validate: return "validate";
    case ToolFault::exec: return "exec";
    case ToolFault::partial_write: return "partial_write";
    case ToolFault::truncate: return "truncate";
    case ToolFault::ok: return "ok";
  }
  return "?";
}

std::string_view to_string(Harness harness) { return harness == Harness::naive ? "naive" : "guarded"; }

Harness parse_harness(std::string_view word) {
  for (auto h : {Harness::naive, Harness::guarded})
    if (word == to_string(h)) return h;
  throw InputError(fmt::format("harness = '{}' is not a harness: use naive or guarded", word));
}

std::string_view to_string(ToolClass c) {
  switch (c) {
    case ToolClass::transport: return "tool_error:transport";
    case ToolClass::service: return "tool_error:service";
    case ToolClass::validate: return "tool_error:validate";
    case ToolClass::exec: return "tool_error:exec";
    case ToolClass::unlocated: return "tool_error:unlocated";
    case ToolClass::side_effect_left: return "side_effect_left";
    case ToolClass::silent_wrong: return "silent_wrong";
  }
  return "?";
}

bool is_wrong(ToolClass c) { return c == ToolClass::side_effect_left || c == ToolClass::silent_wrong; }

double ToolFaults::probability(ToolFault fault) const {
  double passed = 1.0;
  for (int f = 0; f < kToolFaults; ++f) {
    const double x = conditional[static_cast<std::size_t>(f)];
    if (static_cast<ToolFault>(f) == fault) return passed * x;
    passed *= 1.0 - x;
  }
  return passed;
}

void validate(const ToolFaults& faults) {
  for (int key = 0; key < kKeyCount; ++key) {
    const double x = key_value(faults, key);
    if (!(x >= 0.0 && x <= 1.0))
      throw InputError(fmt::format("tool-faults {} = {} is out of range: it must be in [0, 1]", key_name(key), x));
  }
}

ToolFaults parse_tool_faults(std::string_view spec) {
  const std::vector<double> values =
      parse_named_weights(spec, kKeyCount, key_words(), ValueRange{.max = 1.0, .total_may_be_zero = true, .value = "P"});
  ToolFaults faults;
  for (int key = 0; key < kKeyCount; ++key) key_value(faults, key) = values[static_cast<std::size_t>(key)];
  return faults;
}

std::string to_string(const ToolFaults& faults) {
  std::vector<double> values(kKeyCount);
  for (int key = 0; key < kKeyCount; ++key) values[static_cast<std::size_t>(key)] = key_value(faults, key);
  const std::string s = named_weights_string(values, key_words());
  return s.empty() ? "none" : s;
}

ToolStep tool_step(Harness harness, ToolFault fault, bool undo_fails) {
  const bool guarded = harness == Harness::guarded;
  switch (fault) {
    case ToolFault::transport: return {guarded ? ToolClass::transport : ToolClass::unlocated, false};
    case ToolFault::service: return {guarded ? ToolClass::service : ToolClass::unlocated, false};
    case ToolFault::validate: return {guarded ? ToolClass::validate : ToolClass::unlocated, false};
    case ToolFault::exec: return {guarded ? ToolClass::exec : ToolClass::unlocated, false};
    // The naive harness reports the error but leaves the half write; the
    // guarded one undoes it, and only a failed undo leaves it.
    case ToolFault::partial_write:
      return {guarded && !undo_fails ? ToolClass::exec : ToolClass::side_effect_left, false};
    // The guarded harness's result check catches the truncation; the naive
    // one takes the corrupted result and goes on.
    case ToolFault::truncate:
      return guarded ? ToolStep{ToolClass::exec, false} : ToolStep{std::nullopt, true};
    case ToolFault::ok: return {std::nullopt, false};
  }
  return {};
}

bool can_end_in(Harness harness, ToolClass c) {
  for (int f = 0; f <= kToolFaults; ++f)
    for (const bool undo_fails : {false, true}) {
      const ToolStep step = tool_step(harness, static_cast<ToolFault>(f), undo_fails);
      if (step.ended == c || (c == ToolClass::silent_wrong && step.corrupted)) return true;
    }
  return false;
}

ToolShares tool_shares(const ToolModel& model) {
  ToolShares shares;
  const ToolFaults& f = model.faults;
  for (int i = 0; i <= kToolFaults; ++i) {
    const auto fault = static_cast<ToolFault>(i);
    const double p = f.probability(fault);
    for (const bool undo_fails : {false, true}) {
      // The undo is drawn for a partial write alone; any other fault takes the whole mass once.
      const double weight = fault != ToolFault::partial_write ? (undo_fails ? 0.0 : 1.0)
                                                              : (undo_fails ? f.rollback : 1.0 - f.rollback);
      const ToolStep step = tool_step(model.harness, fault, undo_fails);
      const double mass = p * weight;
      if (step.ended) shares.ends[static_cast<std::size_t>(*step.ended)] += mass;
      else if (step.corrupted) shares.corrupted += mass;
      else shares.ok += mass;
    }
  }
  return shares;
}

ToolFault draw_tool_fault(const ToolFaults& faults, double u) {
  double cumulative = 0.0;
  for (int f = 0; f < kToolFaults; ++f) {
    cumulative += faults.probability(static_cast<ToolFault>(f));
    if (u < cumulative) return static_cast<ToolFault>(f);
  }
  return ToolFault::ok;
}

}  // namespace relsim
