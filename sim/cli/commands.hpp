#pragma once
// Internal to the CLI: each subcommand registers itself on the app and
// returns the function that runs it. One file per command (cmd_*.cpp).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "relsim/core/faults.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/live/timing.hpp"

namespace relsim::cli {

// Exit codes: 0 success, 1 a check or comparison failed, 2 bad input,
// 3 an internal error.
inline constexpr int kExitMiss = 1;
inline constexpr int kExitInput = 2;
inline constexpr int kExitInternal = 3;

using Runner = std::function<int()>;

// --p --q --r --n --b --g --chain, shared by every command that takes a model.
struct ModelArgs {
  double p = 0.0, q = 0.0;
  long long b = 0, g = 0;
  long long n = 0;
  int r = 0;
  std::string chain = "fresh";
  std::string policy_kind = "simple";
  int s = 2;
  int B = 0;
  std::string kinds;  // empty: uniform over the in-stream kinds
  CLI::Option* q_option = nullptr;
  CLI::Option* p_option = nullptr;
  CLI::Option* kinds_option = nullptr;
  CLI::Option* n_option = nullptr;

  Model model() const;    // validated; q defaults to p
  Policy policy() const;  // validated
  FaultWeights fault_weights() const;
};
void add_model_options(CLI::App& cmd, ModelArgs& args, bool p_required = true);
// --policy --s --B --kinds, for commands that run every policy.
void add_policy_options(CLI::App& cmd, ModelArgs& args);

// --connect-timeout ... --time-scale: the client's clock (timing.hpp).
void add_timing_options(CLI::App& cmd, ClientTiming& timing);

// The fault kinds a run draws (weight > 0), in enum order: the kinds whose
// counts simulate and demo print.
inline std::vector<FaultKind> drawn_kinds(const FaultWeights& kinds) {
  std::vector<FaultKind> drawn;
  for (int k = 0; k < kFaultKinds; ++k)
    if (kinds.weight[static_cast<std::size_t>(k)] > 0.0) drawn.push_back(static_cast<FaultKind>(k));
  return drawn;
}

Runner add_exact(CLI::App& app);
Runner add_check(CLI::App& app);
Runner add_plan(CLI::App& app);
Runner add_sweep(CLI::App& app);
Runner add_demo(CLI::App& app);
Runner add_live(CLI::App& app);
Runner add_oracle(CLI::App& app);
Runner add_simulate(CLI::App& app);
Runner add_serve(CLI::App& app);
Runner add_audit(CLI::App& app);
Runner add_fit(CLI::App& app);

}  // namespace relsim::cli
