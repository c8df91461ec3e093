// --fallback-after and the second provider's options (fallback_args.hpp): a second
// provider for a call's later requests (docs/model.md, Fallback), read strictly.
#include "relsim/options/fallback_args.hpp"

#include <fmt/format.h>

#include "relsim/core/bursts.hpp"
#include "relsim/core/error.hpp"
#include "relsim/options/option_rules.hpp"
#include "relsim/options/time_args.hpp"

namespace relsim::cli {

std::optional<Fallback> FallbackArgs::parsed(const FaultWeights& first_kinds, const Policy& policy) const {
  if (!after_option->count()) return std::nullopt;
  const auto given = [](const CLI::Option* o) { return o != nullptr && o->count() > 0; };
  // A chain's p and q: q from --q, or from the burst mean, else p.
  const auto chain_of = [](double p, const CLI::Option* qo, double q, const CLI::Option* lo, double l, const char* name) {
    return Model{p, qo && qo->count() ? q : lo->count() ? q_from_burst_mean(l, name) : p};
  };
  Fallback fb;
  fb.after = after;
  fb.kinds = kinds2_option->count() ? parse_fault_weights(kinds2) : first_kinds;
  if (given(price_in2_option)) fb.price_in = price_in2;
  if (given(price_out2_option)) fb.price_out = price_out2;
  if (given(t_good2_option)) {  // time mode
    fb.second_time = two_state_time_chain(t_good2, t_bad2, "t-good2", "t-bad2");
    if (given(shared_t_good_option))
      fb.shared_time = two_state_time_chain(shared_t_good, shared_t_bad, "shared-t-good", "shared-t-bad");
  } else {
    fb.second = chain_of(p2, q2_option, q2, burst2_option, burst_mean2, "burst-mean2");
    if (shared_p_option->count() && shared_p == 0.0)
      throw InputError("shared-p = 0 is out of range: it must be in (0, 1) (leave it out for independent providers)");
    if (shared_p_option->count())
      fb.shared = chain_of(shared_p, nullptr, 0.0, shared_burst_option, shared_burst_mean, "shared-burst-mean");
  }
  if (cooldown_option != nullptr && cooldown_option->count()) fb.cooldown = cooldown;
  validate(fb, policy);
  return fb;
}

void add_fallback_options(CLI::App& cmd, FallbackArgs& a, const CLI::Option* price_in, std::function<bool()> timed,
                          bool seconds) {
  a.after_option = cmd.add_option("--fallback-after", a.after,
                                  "fallback: after K failed requests of a call, 1 <= K <= the most it sends, its "
                                  "other requests go to a second provider (docs/model.md, Fallback)");
  a.kinds2_option = cmd.add_option("--kinds2", a.kinds2, "fallback: the second provider's fault kinds; default --kinds");
  // (option, value, help, declared): every value checked by FallbackArgs::parsed (validate), before any work.
  const std::tuple<const char*, double*, CLI::Option**, const char*, bool> doubles[] = {
      {"--p2", &a.p2, &a.p2_option, "the second provider's long-run fraction of bad requests, in [0, 1]", true},
      {"--q2", &a.q2, &a.q2_option, "the second provider's P(bad | previous bad); default p2", true},
      {"--burst-mean2", &a.burst_mean2, &a.burst2_option, "the second provider's mean burst length, >= 1, instead of --q2",
       true},
      {"--price-in2", &a.price_in2, &a.price_in2_option, "the second's USD per million input tokens; default --price-in",
       price_in != nullptr},
      {"--price-out2", &a.price_out2, &a.price_out2_option,
       "the second's USD per million output tokens; default --price-out", price_in != nullptr},
      {"--shared-p", &a.shared_p, &a.shared_p_option, "a shared outage's fraction, in (0, 1): both providers fail in it",
       true},
      {"--shared-burst-mean", &a.shared_burst_mean, &a.shared_burst_option,
       "the shared outage's mean length in requests, >= 1", true},
      {"--t-good2", &a.t_good2, &a.t_good2_option, "time mode: the second provider's mean good sojourn, seconds", seconds},
      {"--t-bad2", &a.t_bad2, &a.t_bad2_option, "time mode: the second provider's mean bad sojourn, seconds", seconds},
      {"--shared-t-good", &a.shared_t_good, &a.shared_t_good_option, "time mode: the shared outage's mean gap, seconds",
       seconds},
      {"--shared-t-bad", &a.shared_t_bad, &a.shared_t_bad_option, "time mode: the shared outage's mean length, seconds",
       seconds}};
  std::vector<CLI::Option*> second = {a.kinds2_option};
  for (const auto& [name, value, option, help, declared] : doubles)
    if (declared) second.push_back(*option = cmd.add_option(name, *value, fmt::format("fallback: {}", help)));
  for (CLI::Option* option : second)
    needs_option(option, a.after_option,
                 fmt::format("{} needs --fallback-after, the failed requests of a call before it moves to the second "
                             "provider", option->get_name()));
  refuse_when(a.after_option, [&a, timed] { return !timed() && !a.p2_option->count(); },
              "--fallback-after needs --p2, the second provider's fault rate (in time mode --t-good2 and --t-bad2)");
  for (CLI::Option* option : {a.p2_option, a.q2_option, a.burst2_option, a.shared_p_option, a.shared_burst_option})
    refuse_when(option, timed, fmt::format("{}: in time mode the chains are in seconds (--t-good2, --t-bad2, "
                                           "--shared-t-good, --shared-t-bad)", option->get_name()));
  refuse_with(a.burst2_option, a.q2_option, "give --q2 or --burst-mean2, not both: --burst-mean2 L means q2 = 1 - 1/L");
  needs_option(a.shared_burst_option, a.shared_p_option, "--shared-burst-mean needs --shared-p");
  if (price_in != nullptr)
    for (CLI::Option* one : {a.price_in2_option, a.price_out2_option})
      needs_option(one, price_in, fmt::format("{} needs --price-in", one->get_name()));
  if (!seconds) {
    refuse_when(a.after_option, timed,
                fmt::format("--fallback-after: relsim {} takes a fallback in steps only yet (--p2), not in time mode",
                            cmd.get_name()));
    return;
  }
  refuse_when(a.after_option, [&a, timed] { return timed() && !(a.t_good2_option->count() && a.t_bad2_option->count()); },
              "--fallback-after in time mode needs --t-good2 and --t-bad2, the second provider's chain in seconds");
  for (CLI::Option* option : {a.t_good2_option, a.t_bad2_option, a.shared_t_good_option, a.shared_t_bad_option})
    needs_time_mode(option, timed);
  for (const auto& [one, other] : {std::pair<CLI::Option*, const CLI::Option*>{a.t_good2_option, a.t_bad2_option},
                                   {a.t_bad2_option, a.t_good2_option}, {a.shared_t_good_option, a.shared_t_bad_option},
                                   {a.shared_t_bad_option, a.shared_t_good_option}})
    needs_option(one, other, fmt::format("{} needs {}", one->get_name(), other->get_name()));
}

void add_cooldown_options(CLI::App& cmd, FallbackArgs& a, std::function<bool()> timed) {
  a.cooldown_option = cmd.add_option("--cooldown-fails", a.cooldown.fails,
                                     "fallback: a cooldown, as LiteLLM's Router has: after F failed requests to the "
                                     "first provider within --cooldown-window, it is skipped for --cooldown-seconds, "
                                     "in [1, 1000] (time mode; docs/model.md, Cooldowns)");
  CLI::Option* window = cmd.add_option("--cooldown-window", a.cooldown.window,
                                       "the cooldown's window for the failures, seconds")
                            ->capture_default_str();
  CLI::Option* seconds = cmd.add_option("--cooldown-seconds", a.cooldown.seconds,
                                        "how long the first provider is skipped, seconds")
                             ->capture_default_str();
  needs_option(a.cooldown_option, a.after_option,
               "--cooldown-fails needs --fallback-after: a cooldown sends the calls to the second provider");
  needs_time_mode(a.cooldown_option, timed);
  for (CLI::Option* one : {window, seconds})
    needs_option(one, a.cooldown_option, fmt::format("{} needs --cooldown-fails", one->get_name()));
}

}  // namespace relsim::cli
