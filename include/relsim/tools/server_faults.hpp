#pragma once
// What the MCP tools server does to each tools/call it receives (docs/tools.md,
// "Faults"): one fault per call, in the order the calls arrive (call 0, 1,
// ...), from a plan file or drawn from the fault chain.
//
//   ok             the call is served
//   timeout        the tool runs; the answer is held, then sent (after the
//                  client's budget)
//   drop           the tool runs; the answer is cut off half-way and the
//                  connection closed
//   unknown_tool   the tool is missing from this server: JSON-RPC -32602
//   exec_error     the tool throws: isError with a message; nothing runs
//   partial_write  note_write writes half its text, then fails (isError);
//                  another tool fails as with exec_error
//   truncate       the tool runs; its text comes back cut to a tenth, with no
//                  marker and no error
//
// Drawn: call k is one step of the chain (k = 0 from the stationary law); a
// bad call gets a fault picked by weight. Philox streams tool_call (one
// uniform per call) and tool_fault (one per bad call), so a seed gives the
// same faults whatever else changes.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/model.hpp"

namespace relsim::tools {

enum class ToolFault { ok, timeout, drop, unknown_tool, exec_error, partial_write, truncate };
inline constexpr int kToolFaults = 7;  // with ok
std::string_view to_string(ToolFault fault);
ToolFault parse_tool_fault(std::string_view word);  // throws InputError naming the valid words

// Weights of the six faults a bad call can get (ok has none).
struct ToolFaultWeights {
  std::array<double, kToolFaults - 1> weight{1, 1, 1, 1, 1, 1};  // timeout .. truncate
};
// "timeout=1,truncate=2": each fault at most once, weights finite and >= 0,
// total > 0; an unnamed fault weighs 0. Throws InputError.
ToolFaultWeights parse_tool_fault_weights(std::string_view spec);
std::string to_string(const ToolFaultWeights& weights);

// A plan file: JSON lines, one per call, {"fault": "timeout"}, with an
// optional "call" that must equal the line's index (from 0); blank lines are
// not allowed. At most kMaxPlanCalls lines. Throws InputError naming the line.
inline constexpr std::size_t kMaxPlanCalls = 1'000'000;
std::vector<ToolFault> read_tool_plan(std::string_view text);

// Where each call's fault comes from: a plan (calls past its end are ok) or
// the chain. next() gives call 0, 1, 2, ... in turn.
class ToolFaultSource {
 public:
  ToolFaultSource() = default;  // every call ok
  explicit ToolFaultSource(std::vector<ToolFault> plan);
  // Throws InputError for an invalid model or weights.
  ToolFaultSource(const Model& model, const ToolFaultWeights& weights, std::uint64_t seed);

  ToolFault next();
  std::uint64_t calls() const { return calls_; }

 private:
  std::vector<ToolFault> plan_;
  bool drawn_ = false;
  Model model_;
  ToolFaultWeights weights_;
  double total_ = 0.0;
  std::uint64_t seed_ = 0;
  std::uint64_t calls_ = 0;
  bool last_bad_ = false;
};

}  // namespace relsim::tools
