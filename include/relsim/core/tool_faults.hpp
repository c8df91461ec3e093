#pragma once
// Tool calls (docs/tool_model.md): after each model call that succeeds the
// agent makes one tool call, which passes stages in order (transport,
// service, validate, exec) and can leave a partial write or a truncated
// result behind. Its faults are independent per tool call and take no step
// of the model's fault chain. The harness decides what each fault does to
// the task; `tool_step` holds those rules, and the exact engine and the
// simulator both call it.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace relsim {

// Where a tool call fails, in the order its stages run; `ok` when none does.
// exec: an exec error with nothing written; partial_write: an exec failure
// that leaves half a write behind; truncate: a silently corrupted result.
enum class ToolFault { transport, service, validate, exec, partial_write, truncate, ok };
inline constexpr int kToolFaults = 6;  // the faults, `ok` left out
std::string_view to_string(ToolFault fault);

// naive: reports errors without saying where, cannot undo, accepts any
// result; guarded: names the stage, undoes partial writes, checks results.
enum class Harness { naive, guarded };
std::string_view to_string(Harness harness);
Harness parse_harness(std::string_view word);  // throws InputError

// The classes a tool call gives a task, beside the model's OutcomeClass.
// tool_error:* are caught and reported (correct); side_effect_left and
// silent_wrong are wrong.
enum class ToolClass { transport, service, validate, exec, unlocated, side_effect_left, silent_wrong };
inline constexpr int kToolClasses = 7;
std::string_view to_string(ToolClass c);  // "tool_error:transport", ..., "side_effect_left", "silent_wrong"
bool is_wrong(ToolClass c);

struct ToolFaults {
  // [fault]: P(the call meets this fault | it passed the stages before).
  std::array<double, kToolFaults> conditional{};
  double rollback = 0.0;  // P(the undo fails | the guarded harness undoes a partial write)

  // P(a tool call meets `fault`): the conditionals of the stages before it
  // passed, times its own; for `ok`, every stage passed.
  double probability(ToolFault fault) const;
};

// Throws InputError naming the bad value and its valid range (each in [0, 1]).
void validate(const ToolFaults& faults);

// "transport=P,service=P,validate=P,exec=P,partial_write=P,truncate=P,rollback=P",
// any subset, a key left out is 0. Throws InputError naming an unknown or
// repeated key, a bad number or one outside [0, 1], with the valid keys.
ToolFaults parse_tool_faults(std::string_view spec);
// The keys with a value > 0, in the order above ("none" when there is none).
std::string to_string(const ToolFaults& faults);

struct ToolModel {
  ToolFaults faults;
  Harness harness = Harness::guarded;
};

// What one tool call does to the task: ends it in a class, or lets it go
// on, its result possibly corrupted without anyone knowing.
struct ToolStep {
  std::optional<ToolClass> ended;
  bool corrupted = false;
};
// The harnesses' rules (docs/tool_model.md), in one place. `undo_fails`
// matters only for a partial write under the guarded harness.
ToolStep tool_step(Harness harness, ToolFault fault, bool undo_fails);

// Whether some fault ends a task in class `c` under `harness` (silent_wrong:
// whether a result can go on corrupted); from tool_step.
bool can_end_in(Harness harness, ToolClass c);

// One tool call's law under the harness, summed from tool_step over every
// fault and undo: P(ok), P(goes on corrupted), P(ends the task in each class).
struct ToolShares {
  double ok = 0.0;
  double corrupted = 0.0;
  std::array<double, kToolClasses> ends{};  // [silent_wrong] is 0: it never ends a call
  double goes_on() const { return ok + corrupted; }
};
ToolShares tool_shares(const ToolModel& model);

// The fault of a tool call from a uniform u in [0, 1): the first fault whose
// cumulative probability exceeds u, else `ok`.
ToolFault draw_tool_fault(const ToolFaults& faults, double u);

}  // namespace relsim
