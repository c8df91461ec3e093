#pragma once
// A router's cooldown of the first provider (docs/model.md, Cooldowns), the
// rule LiteLLM's Router applies to a deployment: when `fails` requests to it
// have failed within `window` seconds, it is skipped for `seconds`, every
// request going to the second provider meanwhile; its count of failures then
// starts afresh. One router per task (an agent's own client). Time mode's
// simulation only: the cooldown remembers when, which the exact engines'
// states do not hold.
#include <optional>
#include <vector>

namespace relsim {

struct Cooldown {
  int fails = 1;          // F: failures of the first provider that start a cooldown
  double window = 60.0;   // W: within this many seconds (each failure counted at its end)
  double seconds = 5.0;   // T: how long it is skipped
};

// Throws InputError naming the bad field and its range: fails in [1, 1000],
// window in (0, kMaxSeconds], seconds in [0, kMaxSeconds].
void validate(const Cooldown& cooldown);

// One router's view of the first provider over a task. Without a rule it
// never cools; with seconds = 0 neither (a request starts no earlier than
// the failure before it ended).
class CooldownClock {
 public:
  explicit CooldownClock(const std::optional<Cooldown>& rule) : rule_(rule) {}
  // Whether a request starting at `at` seconds skips the first provider.
  bool cooling(double at) const { return at < until_; }
  // A request to the first provider failed, ending at `at` (calls in time order).
  void failed(double at);

 private:
  std::optional<Cooldown> rule_;
  std::vector<double> ends_;  // the failures counted so far, fewer than rule_->fails
  double until_ = 0.0;        // skipped before this instant (a task starts at 0)
};

}  // namespace relsim
