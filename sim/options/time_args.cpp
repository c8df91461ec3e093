// The time options every command with a model takes (docs/time.md): the
// chain's mean sojourns in seconds, how long requests take, the waits
// between them. Without them a command runs the discrete model as before.
#include "relsim/options/time_args.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/client/timing.hpp"
#include "relsim/fit/fit_report.hpp"
#include "relsim/formats/recorded_seconds.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {

void needs_time_mode(CLI::Option* option, std::function<bool()> timed) {
  refuse_when(option, [timed = std::move(timed)] { return !timed(); },
              fmt::format("{} applies in time mode only: give the mean sojourns --t-good and --t-bad (seconds) too",
                          option->get_name()));
}

void refuse_in_time_mode(CLI::Option* discrete, std::function<bool()> timed) {
  const std::string& name = discrete->get_name();
  const char* instead = name == "--p" ? "the bad fraction is t_bad / (t_good + t_bad)"
                        : name == "--q" || name == "--burst-mean"
                            ? "bursts come from the mean sojourns --t-good and --t-bad"
                        : name == "--b" ? "the wait before a retry is --backoff, in seconds"
                                        : "the time between calls is --think-seconds";
  refuse_when(discrete, std::move(timed),
              fmt::format("{} does not apply in time mode (--t-good, --t-bad): {}", name, instead));
}

bool TimeArgs::timed() const { return timed_rule()(); }

std::function<bool()> TimeArgs::timed_rule() const {
  return [good = t_good_option, bad = t_bad_option, hidden = hidden_option] {
    return good->count() || bad->count() || (hidden != nullptr && hidden->count());
  };
}

std::optional<TimeModel> TimeArgs::time_model(const ModelArgs& model) const {
  if (!timed()) return std::nullopt;
  TimeModel time;
  if (hidden_option->count()) {
    const fit::HiddenChainFile fitted = fit::read_hidden_chain(hidden_chain);
    time.chain = uniformised_time_chain(fitted.step, fitted.bad, step_seconds);
  } else {
    time.chain = two_state_time_chain(t_good, t_bad);
  }
  time.scope = parse_chain_scope(model.chain);
  time.request_seconds = request_seconds;
  if (request_from_option != nullptr && request_from_option->count()) {
    if (request_seconds_from.empty())
      throw InputError("request-seconds-from is empty: give a recording directory (relsim proxy --record DIR)");
    const RecordedSeconds recorded = read_recorded_seconds(request_seconds_from);
    const auto mean = [](const std::vector<double>& v) {
      double sum = 0.0;
      for (const double x : v) sum += x;
      return sum / static_cast<double>(v.size());
    };
    time.request_law = recorded.seconds;
    time.request_seconds = mean(recorded.seconds);
    time.request_law_source = request_seconds_from;
    time.request_law_first = mean(recorded.first_seconds);
    with_law_steps(time);
  }
  if (!fault_seconds.empty()) {
    const ClientTiming timing;  // the live client's timeouts
    time.fault_seconds = parse_fault_seconds(fault_seconds, timing.header_timeout, timing.idle_timeout);
  }
  time.think_seconds = think_seconds;
  time.backoff = parse_backoff(backoff);
  time.retry_after = retry_after;
  validate(time);
  return time;
}

Json TimeArgs::chain_json(const TimeModel& time) const {
  if (hidden_option->count())
    return Json{{"hidden_chain", hidden_chain}, {"states", time.chain.states()}, {"step_seconds", step_seconds}};
  return Json{{"t_good", t_good}, {"t_bad", t_bad}};
}

std::string TimeArgs::chain_words(const TimeModel& time) const {
  const double p = time.chain.bad_share();
  if (hidden_option->count())
    return fmt::format("fitted, {} states from {}, a step every {} s (p = {:.6g})", time.chain.states(), hidden_chain,
                       step_seconds, p);
  return fmt::format("two states, mean good {} s, mean bad {} s (p = {:.6g})", t_good, t_bad, p);
}

void add_time_options(CLI::App& cmd, TimeArgs& a, const OptionRefusals& refused) {
  // In time mode the chain comes from the sojourns: --p is needed outside it
  // only, which ModelArgs::model() checks (CLI11 cannot say "required unless").
  if (CLI::Option* p = cmd.get_option_no_throw("--p"); p != nullptr && p->get_required()) {
    p->required(false);
    p->description(p->get_description() + "; required outside time mode");
  }
  a.t_good_option = cmd.add_option("--t-good", a.t_good,
                                   "time mode: mean good sojourn of the fault chain, seconds, in (0, 1e9]");
  a.t_bad_option = cmd.add_option("--t-bad", a.t_bad,
                                  "time mode: mean bad sojourn (outage), seconds, in (0, 1e9]; "
                                  "p = t_bad / (t_good + t_bad)");
  a.hidden_option = cmd.add_option("--hidden-chain", a.hidden_chain,
                                   "time mode: the hidden chain of a `relsim fit --hidden --json` output, made "
                                   "continuous (with --step-seconds)");
  a.step_option = cmd.add_option("--step-seconds", a.step_seconds,
                                 "--hidden-chain: seconds one step of the fitted chain lasts, in (0, 1e9]");
  CLI::Option* request = cmd.add_option("--request-seconds", a.request_seconds,
                                        "time mode: seconds a request takes, in [0, 1e9]")
                             ->capture_default_str();
  CLI::Option* request_from = a.request_from_option =
      cmd.add_option("--request-seconds-from", a.request_seconds_from,
                     "time mode: a recording directory (relsim proxy --record): each request's seconds drawn from "
                     "its recorded durations, not fixed");
  CLI::Option* time_only[] = {
      a.step_option, request, request_from,
      cmd.add_option("--fault-seconds", a.fault_seconds,
                     "time mode: a fault's seconds, KIND=SECONDS,... (others take --request-seconds), or timeouts "
                     "(slow_headers 60 s, stall 30 s: the client's header and idle timeouts)"),
      cmd.add_option("--think-seconds", a.think_seconds,
                     "time mode: seconds from a call's good request to the next call, in [0, 1e9]")
          ->capture_default_str(),
      cmd.add_option("--backoff", a.backoff,
                     "time mode: wait before retry k+1, min(BASE 2^k, CAP)(1 - JITTER U): sdk (exp:0.5,8,0.25), "
                     "exp:BASE,CAP,JITTER, list:1,2,4,... (no jitter) or none")
          ->capture_default_str(),
      cmd.add_option("--retry-after", a.retry_after,
                     "time mode: the retry-after of an http_429, honoured when in (0, 60) s; 0: none")
          ->capture_default_str()};
  // The rules, in the order their lines come: the command's refusals first.
  for (const auto& [name, line] : refused) refuse_when(cmd.get_option(name), [] { return true; }, line);
  for (const CLI::Option* sojourn : {a.t_good_option, a.t_bad_option})
    refuse_with(a.hidden_option, sojourn, "--hidden-chain and --t-good/--t-bad both give the chain: use one of them");
  refuse_with(request_from, request, "--request-seconds-from and --request-seconds both give a request's seconds: use one of them");
  needs_option(a.t_bad_option, a.t_good_option, "--t-bad needs --t-good: give both mean sojourns, in seconds");
  needs_option(a.t_good_option, a.t_bad_option, "--t-good needs --t-bad: give both mean sojourns, in seconds");
  needs_option(a.hidden_option, a.step_option,
               "--hidden-chain needs --step-seconds: the seconds one step of the fitted chain lasts");
  const std::function<bool()> timed = a.timed_rule();
  for (CLI::Option* o : time_only) needs_time_mode(o, timed);
  // In time mode, --step-seconds without --hidden-chain.
  needs_option(a.step_option, a.hidden_option, "--step-seconds applies to --hidden-chain only");
  for (const char* name : {"--p", "--q", "--burst-mean", "--b", "--g"})
    if (CLI::Option* o = cmd.get_option_no_throw(name)) refuse_in_time_mode(o, timed);
}

}  // namespace relsim::cli
