#pragma once
// The fallback options (docs/model.md, Fallback).
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "relsim/core/fallback.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/policy.hpp"

namespace relsim::cli {

// --fallback-after and the second provider's chain (in steps or seconds), kinds
// and prices (fallback.hpp; docs/model.md, Fallback), for exact and simulate.
struct FallbackArgs {
  int after = 1;
  double p2 = 0.0, q2 = 0.0, burst_mean2 = 0.0;
  std::string kinds2;
  double price_in2 = 0.0, price_out2 = 0.0;
  double shared_p = 0.0, shared_burst_mean = 0.0;
  double t_good2 = 0.0, t_bad2 = 0.0, shared_t_good = 0.0, shared_t_bad = 0.0;  // time mode
  Cooldown cooldown;  // add_cooldown_options: the simulation in seconds only
  CLI::Option *after_option{}, *p2_option{}, *q2_option{}, *burst2_option{}, *kinds2_option{}, *price_in2_option{},
      *price_out2_option{}, *shared_p_option{}, *shared_burst_option{}, *t_good2_option{}, *t_bad2_option{},
      *shared_t_good_option{}, *shared_t_bad_option{}, *cooldown_option{};

  // The validated fallback, or nullopt without --fallback-after; the second
  // provider's kinds default to `first_kinds`. Throws InputError.
  std::optional<Fallback> parsed(const FaultWeights& first_kinds, const Policy& policy) const;
};
// Declares the options; each needs --fallback-after, which needs --p2 (in time
// mode, `timed`, --t-good2 and --t-bad2); the prices need the first's
// (`price_in`; nullptr: a command without prices, which declares none).
// `seconds` false: a command that takes the chains in steps only declares
// no seconds options and refuses --fallback-after in time mode.
void add_fallback_options(CLI::App& cmd, FallbackArgs& args, const CLI::Option* price_in, std::function<bool()> timed,
                          bool seconds = true);
// --cooldown-fails, --cooldown-window, --cooldown-seconds (core/cooldown.hpp),
// after add_fallback_options: each needs --fallback-after and time mode.
void add_cooldown_options(CLI::App& cmd, FallbackArgs& args, std::function<bool()> timed);

}  // namespace relsim::cli
