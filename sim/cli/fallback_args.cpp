// --fallback-after --p2 --q2 --burst-mean2 --kinds2 --price-in2 --price-out2
// --shared-p --shared-q --shared-burst-mean (commands.hpp): a second provider
// for a call's later requests (docs/model.md, Fallback), read strictly.
#include <fmt/format.h>

#include "relsim/core/bursts.hpp"
#include "relsim/core/error.hpp"
#include "cli/commands.hpp"
#include "cli/option_rules.hpp"

namespace relsim::cli {
namespace {

// A chain's p and q from the options: q from --q, or from the burst mean, else p.
Model chain_of(double p, const CLI::Option* q_option, double q, const CLI::Option* burst_option, double burst_mean) {
  Model m;
  m.p = p;
  m.q = q_option->count() ? q : burst_option->count() ? q_from_burst_mean(burst_mean) : p;
  return m;
}

}  // namespace

std::optional<Fallback> FallbackArgs::parsed(const FaultWeights& first_kinds, const Policy& policy) const {
  if (!after_option->count()) return std::nullopt;
  Fallback fb;
  fb.after = after;
  fb.second = chain_of(p2, q2_option, q2, burst2_option, burst_mean2);
  fb.kinds = kinds2_option->count() ? parse_fault_weights(kinds2) : first_kinds;
  if (price_in2_option->count()) fb.price_in = price_in2;
  if (price_out2_option->count()) fb.price_out = price_out2;
  if (shared_p_option->count()) fb.shared = chain_of(shared_p, shared_q_option, shared_q, shared_burst_option,
                                                     shared_burst_mean);
  validate(fb, policy);
  return fb;
}

void add_fallback_options(CLI::App& cmd, FallbackArgs& a, const CLI::Option* price_in) {
  a.after_option = cmd.add_option("--fallback-after", a.after,
                                  "fallback: after K failed requests of a call on the first provider, the call's "
                                  "remaining requests go to a second (docs/model.md, Fallback); K >= 1");
  a.p2_option = cmd.add_option("--p2", a.p2, "fallback: the second provider's long-run fraction of bad requests, in [0, 1]");
  a.q2_option = cmd.add_option("--q2", a.q2, "fallback: the second provider's P(bad | previous bad); default p2");
  a.burst2_option = cmd.add_option("--burst-mean2", a.burst_mean2,
                                   "fallback: the second provider's mean burst length, >= 1, instead of --q2");
  a.kinds2_option = cmd.add_option("--kinds2", a.kinds2,
                                   "fallback: the second provider's fault-kind weights; default those of --kinds");
  a.price_in2_option = cmd.add_option("--price-in2", a.price_in2,
                                      "fallback: the second provider's USD per million input tokens; default --price-in");
  a.price_out2_option = cmd.add_option("--price-out2", a.price_out2,
                                       "fallback: the second provider's USD per million output tokens; default "
                                       "--price-out");
  a.shared_p_option = cmd.add_option("--shared-p", a.shared_p,
                                     "fallback: a shared outage's long-run fraction, in [0, 1): while it is bad both "
                                     "providers fail (regions of one provider); default 0, independent providers");
  a.shared_q_option = cmd.add_option("--shared-q", a.shared_q,
                                     "fallback: the shared outage's P(bad | previous bad); default --shared-p");
  a.shared_burst_option = cmd.add_option("--shared-burst-mean", a.shared_burst_mean,
                                         "fallback: the shared outage's mean length in requests, >= 1, instead of "
                                         "--shared-q");
  const std::string need = "needs --fallback-after, the failed requests of a call before it moves to the second provider";
  for (CLI::Option* option : {a.p2_option, a.q2_option, a.burst2_option, a.kinds2_option, a.price_in2_option,
                              a.price_out2_option, a.shared_p_option, a.shared_q_option, a.shared_burst_option})
    needs_option(option, a.after_option, fmt::format("{} {}", option->get_name(), need));
  needs_option(a.after_option, a.p2_option, "--fallback-after needs --p2, the second provider's fault rate");
  for (CLI::Option* option : {a.shared_q_option, a.shared_burst_option})
    needs_option(option, a.shared_p_option, fmt::format("{} needs --shared-p", option->get_name()));
  refuse_with(a.burst2_option, a.q2_option, "give --q2 or --burst-mean2, not both: --burst-mean2 L means q2 = 1 - 1/L");
  refuse_with(a.shared_burst_option, a.shared_q_option,
              "give --shared-q or --shared-burst-mean, not both: --shared-burst-mean L means q = 1 - 1/L");
  for (CLI::Option* option : {a.price_in2_option, a.price_out2_option})
    needs_option(option, price_in, fmt::format("{} needs the first provider's prices (--price-in ...)", option->get_name()));
  // The values are checked by FallbackArgs::parsed (validate), before any work.
}

}  // namespace relsim::cli
