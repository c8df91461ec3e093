#pragma once
// The time options (docs/time.md): time mode and what it needs.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "relsim/core/json.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/options/model_args.hpp"

namespace relsim::cli {

// --t-good --t-bad --request-seconds (--request-seconds-from) --fault-seconds --think-seconds
// --backoff --retry-after (and --hidden-chain --step-seconds): time in
// seconds (docs/time.md). Giving --t-good, --t-bad or --hidden-chain puts the
// command in time mode; the other time options need it.
struct TimeArgs {
  double t_good = 0.0, t_bad = 0.0;
  double request_seconds = 0.0;
  std::string request_seconds_from;  // a recording directory: the requests' seconds drawn from it
  std::string fault_seconds;  // empty: every request takes request_seconds
  double think_seconds = 0.0;
  std::string backoff = "sdk";
  double retry_after = 0.0;
  std::string hidden_chain;  // a `relsim fit --hidden --json` output
  double step_seconds = 0.0;
  CLI::Option* t_good_option = nullptr;
  CLI::Option* t_bad_option = nullptr;
  CLI::Option* hidden_option = nullptr;
  CLI::Option* step_option = nullptr;
  CLI::Option* request_from_option = nullptr;

  bool timed() const;
  // timed(), for option rules (option_rules.hpp): it holds the options, not
  // these arguments, so it stays true to them wherever they move.
  std::function<bool()> timed_rule() const;
  // In time mode the validated time model, with the chain scope of --chain;
  // nullopt otherwise. Throws InputError for a bad value; the options that
  // do not fit the mode were refused while parsing (add_time_options).
  std::optional<TimeModel> time_model(const ModelArgs& model) const;
  // The chain as it was given, for reports: {"t_good", "t_bad"} or
  // {"hidden_chain", "states", "step_seconds"}; and the same in words.
  Json chain_json(const TimeModel& time) const;
  std::string chain_words(const TimeModel& time) const;
};
// Adds the time options to a command that has the model options: in time
// mode --p is no longer required, and --p --q --burst-mean --b --g are
// refused; the other time options need it. `refused`: the time options a
// command cannot take (by name), each refused with its line before any other
// rule on it.
using OptionRefusals = std::vector<std::pair<std::string, std::string>>;
void add_time_options(CLI::App& cmd, TimeArgs& args, const OptionRefusals& refused = {});
// Declared while parsing, with `timed` saying whether the command is in time
// mode: `option` (a time option) refused without it; `discrete` (--p --q
// --burst-mean --b --g, or sweep's axes of them) refused in it, each naming
// what time mode takes instead.
void needs_time_mode(CLI::Option* option, std::function<bool()> timed);
void refuse_in_time_mode(CLI::Option* discrete, std::function<bool()> timed);

}  // namespace relsim::cli
