#include "relsim/options/model_args.hpp"

#include <fmt/format.h>

#include "relsim/core/bursts.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {

Model ModelArgs::model() const {
  if (p_needed && !p_option->count())
    throw InputError(kNeedP);
  Model m;
  m.p = p;
  m.q = q_option->count() ? q : p;
  if (burst_mean_option && burst_mean_option->count()) m.q = q_from_burst_mean(burst_mean);
  m.b = b;
  m.g = g;
  m.chain = parse_chain_scope(chain);
  validate(m);
  return m;
}

Policy ModelArgs::policy() const {
  Policy pol;
  pol.n = n;
  pol.r = r;
  pol.s = s;
  pol.B = B;
  pol.kind = parse_policy_kind(policy_kind);
  validate(pol);
  return pol;
}

FaultWeights ModelArgs::fault_weights() const {
  return kinds_option && kinds_option->count() ? parse_fault_weights(kinds) : FaultWeights::in_stream_uniform();
}

void add_policy_options(CLI::App& cmd, ModelArgs& a) {
  cmd.add_option("--policy", a.policy_kind, "simple, naive, layered or budgeted (docs/policies.md)")->capture_default_str();
  cmd.add_option("--s", a.s, fmt::format("HTTP-layer (SDK) retries, in [0, {}]; not used by simple", kMaxHttpRetries))
      ->capture_default_str();
  cmd.add_option("--B", a.B, "budgeted: cap on requests per call, >= 1");
  a.kinds_option = cmd.add_option("--kinds", a.kinds,
                 "fault-kind weights of bad requests, e.g. cut=1,stall=1,slow_headers=2; "
                 "default uniform over cut,no_stop,malformed,overloaded,stall");
}

void add_model_options(CLI::App& cmd, ModelArgs& a, bool p_required) {
  a.p_option = cmd.add_option("--p", a.p, "long-run fraction of bad requests, in [0, 1]")->required(p_required);
  a.p_needed = p_required;
  a.q_option = cmd.add_option("--q", a.q,
                              "P(bad | previous bad), in [max(0, (2p-1)/p), 1]; default p (independent faults)");
  a.burst_mean_option = cmd.add_option("--burst-mean", a.burst_mean,
                                       "mean burst length in requests, >= 1, instead of --q: q = 1 - 1/L");
  refuse_with(a.burst_mean_option, a.q_option, "give --q or --burst-mean, not both: --burst-mean L means q = 1 - 1/L");
  check_value<double>(a.burst_mean_option, [](double L) { q_from_burst_mean(L); });
  cmd.add_option("--r", a.r, fmt::format("retries per call, in [0, {}]", kMaxRetries))->required(p_required);
  a.n_option = cmd.add_option("--n", a.n, fmt::format("model calls per task, in [1, {}]", kMaxCalls))->required(p_required);
  cmd.add_option("--b", a.b, "silent chain steps before a retry (backoff), >= 0")->capture_default_str();
  cmd.add_option("--g", a.g, "silent chain steps before the next call, >= 0")->capture_default_str();
  cmd.add_option("--chain", a.chain, "chain scope across tasks: fresh or continuous")->capture_default_str();
}

CLI::Option* add_seed_option(CLI::App& cmd, std::uint64_t& seed, const std::string& what, const std::string& flag) {
  return cmd
      .add_option_function<std::string>(
          flag, [&seed, name = flag.substr(2)](const std::string& text) { seed = parse_unsigned(text, name); },
          what + ", an integer in [0, 2^64 - 1]")
      ->type_name("SEED")
      ->default_str(std::to_string(seed));
}

}  // namespace relsim::cli
