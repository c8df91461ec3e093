#pragma once
// The options of the model and the policy (--p --q --burst-mean --r --n --b
// --g --chain, --policy --s --B --kinds) and --seed, the same in every
// command that takes them (namespace relsim::cli: the command line's option
// groups, docs/architecture.md).
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"

namespace relsim::cli {

// A missing --p where time mode would go without it (ModelArgs::model, sweep).
inline constexpr const char* kNeedP = "--p is required (or, for time mode, --t-good and --t-bad)";

// --p --q --r --n --b --g --chain, shared by every command that takes a model.
struct ModelArgs {
  double p = 0.0, q = 0.0;
  double burst_mean = 0.0;  // --burst-mean L: q = 1 - 1/L
  long long b = 0, g = 0;
  long long n = 0;
  int r = 0;
  std::string chain = "fresh";
  std::string policy_kind = "simple";
  int s = 2;
  int B = 0;
  std::string kinds;  // empty: uniform over the in-stream kinds
  CLI::Option* q_option = nullptr;
  CLI::Option* burst_mean_option = nullptr;
  CLI::Option* p_option = nullptr;
  CLI::Option* kinds_option = nullptr;
  CLI::Option* n_option = nullptr;
  // --p is needed outside time mode (add_time_options leaves it to model(),
  // so that --help does not call it REQUIRED where time mode goes without).
  bool p_needed = false;

  // Validated; q from --q or --burst-mean, else p. Throws InputError when
  // --p is needed and was not given.
  Model model() const;
  Policy policy() const;  // validated
  FaultWeights fault_weights() const;
};
void add_model_options(CLI::App& cmd, ModelArgs& args, bool p_required = true);
// --seed SEED, the same in every command: an integer in [0, 2^64 - 1], read
// strictly (CLI11's own unsigned parse would take -1 as 2^64 - 1); `what`
// says what it seeds. Its default shows in --help.
CLI::Option* add_seed_option(CLI::App& cmd, std::uint64_t& seed, const std::string& what,
                             const std::string& flag = "--seed");
// A CLI11 parse error as the one line relsim prints (without "relsim: error: ").
std::string parse_error_line(const CLI::ParseError& error);
// --policy --s --B --kinds, for commands that run every policy.
void add_policy_options(CLI::App& cmd, ModelArgs& args);

}  // namespace relsim::cli
