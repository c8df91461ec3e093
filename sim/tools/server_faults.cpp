// The MCP tools server's faults (server_faults.hpp): their names, weights, the
// plan file and the chain that draws them.
#include "relsim/tools/server_faults.hpp"

#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/core/text_lines.hpp"
#include "relsim/core/weights.hpp"

namespace relsim::tools {
namespace {

constexpr std::array<std::string_view, kToolFaults> kNames = {"ok",         "timeout",       "drop",    "unknown_tool",
                                                              "exec_error", "partial_write", "truncate"};

const WeightWords& fault_words() {
  static const WeightWords words{
      "kinds", "tool fault", "timeout=1,truncate=2",
      fmt::format("{}", fmt::join(kNames.begin() + 1, kNames.end(), ", ")),
      [](std::string_view name) {
        const ToolFault f = parse_tool_fault(name);
        if (f == ToolFault::ok) throw InputError("kinds: 'ok' takes no weight: name the faults a bad call gets");
        return static_cast<std::size_t>(f) - 1;
      },
      [](std::size_t i) { return kNames.at(i + 1); }};
  return words;
}

}  // namespace

std::string_view to_string(ToolFault fault) { return kNames[static_cast<std::size_t>(fault)]; }

ToolFault parse_tool_fault(std::string_view word) {
  for (int k = 0; k < kToolFaults; ++k)
    if (word == kNames[static_cast<std::size_t>(k)]) return static_cast<ToolFault>(k);
  throw InputError(fmt::format("tool fault = '{}' is not a fault: use {}", word.substr(0, 100), fmt::join(kNames, ", ")));
}

ToolFaultWeights parse_tool_fault_weights(std::string_view spec) {
  const std::vector<double> parsed = parse_named_weights(spec, kToolFaults - 1, fault_words());
  ToolFaultWeights w;
  std::copy(parsed.begin(), parsed.end(), w.weight.begin());
  return w;
}

std::string to_string(const ToolFaultWeights& w) {
  return named_weights_string(std::vector<double>(w.weight.begin(), w.weight.end()), fault_words());
}

std::vector<ToolFault> read_tool_plan(std::string_view text) {
  std::vector<ToolFault> plan;
  for_each_line(text, [&](std::size_t line_no, std::string_view line) {
    const auto where = [&] { return fmt::format("tool plan line {}", line_no); };
    if (plan.size() >= kMaxPlanCalls)
      throw InputError(fmt::format("{}: the plan has more than {} calls", where(), kMaxPlanCalls));
    const Json entry = Json::parse(line, nullptr, false);
    if (entry.is_discarded() || !entry.is_object())
      throw InputError(fmt::format("{} is not a JSON object: write {{\"fault\": \"timeout\"}}", where()));
    for (const auto& [key, value] : entry.items())
      if (key != "fault" && key != "call")
        throw InputError(fmt::format("{}: unknown key '{}': a line has \"fault\" and an optional \"call\"", where(),
                                     key.substr(0, 100)));
    if (!entry.contains("fault") || !entry["fault"].is_string())
      throw InputError(fmt::format("{}: \"fault\" must be a string: one of {}", where(), fmt::join(kNames, ", ")));
    if (entry.contains("call")) {
      const Json& call = entry["call"];
      if (!call.is_number_integer() || call.get<std::int64_t>() != static_cast<std::int64_t>(plan.size()))
        throw InputError(fmt::format("{}: \"call\" = {} must be {} (the line's index from 0)", where(),
                                     json_excerpt(call, 40), plan.size()));
    }
    try {
      plan.push_back(parse_tool_fault(entry["fault"].get<std::string>()));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", where(), e.what()));
    }
  });
  return plan;
}

ToolFaultSource::ToolFaultSource(std::vector<ToolFault> plan) : plan_(std::move(plan)) {}

ToolFaultSource::ToolFaultSource(const Model& model, const ToolFaultWeights& weights, std::uint64_t seed)
    : drawn_(true), model_(model), weights_(weights), seed_(seed) {
  validate(model);
  total_ = std::accumulate(weights.weight.begin(), weights.weight.end(), 0.0);
  if (!(total_ > 0.0 && std::isfinite(total_)))
    throw InputError(fmt::format("kinds = '{}' has total weight {}: it must be finite and > 0", to_string(weights), total_));
}

ToolFault ToolFaultSource::next() {
  const std::uint64_t k = calls_++;
  if (!drawn_) return k < plan_.size() ? plan_[k] : ToolFault::ok;
  // Call 0 from the stationary law, each later call one step on.
  const double p_bad = k == 0 ? model_.p : last_bad_ ? model_.q : model_.p0();
  last_bad_ = rng::uniform(seed_, rng::Stream::tool_call, 0, k) < p_bad;
  if (!last_bad_) return ToolFault::ok;
  return static_cast<ToolFault>(
      1 + pick_by_weight(weights_.weight, total_, rng::uniform(seed_, rng::Stream::tool_fault, 0, k)));
}

}  // namespace relsim::tools
