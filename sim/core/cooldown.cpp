// The first provider's cooldown (cooldown.hpp).
#include "relsim/core/cooldown.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/time_model.hpp"

namespace relsim {

void validate(const Cooldown& c) {
  if (c.fails < 1 || c.fails > 1000)
    throw InputError(fmt::format("cooldown-fails = {} is out of range: it must be a whole number in [1, 1000]", c.fails));
  if (!(c.window > 0.0 && c.window <= kMaxSeconds))
    throw InputError(fmt::format("cooldown-window = {} is out of range: it must be in (0, {:g}] seconds", c.window,
                                 kMaxSeconds));
  if (!(c.seconds >= 0.0 && c.seconds <= kMaxSeconds))
    throw InputError(fmt::format("cooldown-seconds = {} is out of range: it must be in [0, {:g}] seconds", c.seconds,
                                 kMaxSeconds));
}

void CooldownClock::failed(double at) {
  if (!rule_) return;
  std::erase_if(ends_, [&](double end) { return at - end > rule_->window; });
  ends_.push_back(at);
  if (static_cast<int>(ends_.size()) < rule_->fails) return;
  until_ = at + rule_->seconds;
  ends_.clear();
}

}  // namespace relsim
