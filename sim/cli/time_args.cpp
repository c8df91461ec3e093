// The time options every command with a model takes (docs/time.md): the
// chain's mean sojourns in seconds, how long requests take, the waits
// between them. Without them a command runs the discrete model as before.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/live/timing.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

// A `relsim fit --hidden --json` output's hidden chain: step (k x k, one
// step per request) and bad (k).
struct FittedChain {
  Eigen::MatrixXd step;
  Eigen::VectorXd bad;
};

double json_number(const Json& v, const std::string& where) {
  if (!v.is_number()) throw InputError(fmt::format("{}: {} is not a number", where, json_excerpt(v, 40)));
  return v.get<double>();
}

FittedChain read_fitted_chain(const std::string& path) {
  const std::string text = read_file(path, "hidden chain");
  const Json j = Json::parse(text, nullptr, false);
  const std::string where = fmt::format("hidden chain '{}'", path);
  if (j.is_discarded() || !j.is_object() || !j.contains("hidden") || !j["hidden"].is_object())
    throw InputError(fmt::format("{}: not a `relsim fit --hidden --json` output (no \"hidden\" object)", where));
  const Json& h = j["hidden"];
  if (!h.contains("step") || !h["step"].is_array() || !h.contains("bad") || !h["bad"].is_array())
    throw InputError(fmt::format("{}: \"hidden\" needs the arrays \"step\" and \"bad\"", where));
  const auto k = static_cast<Eigen::Index>(h["bad"].size());
  if (k < 1 || k > 64 || static_cast<Eigen::Index>(h["step"].size()) != k)
    throw InputError(fmt::format("{}: \"step\" must be k rows and \"bad\" k entries, k in [1, 64]", where));
  FittedChain chain{Eigen::MatrixXd(k, k), Eigen::VectorXd(k)};
  for (Eigen::Index i = 0; i < k; ++i) {
    const Json& row = h["step"][static_cast<std::size_t>(i)];
    if (!row.is_array() || static_cast<Eigen::Index>(row.size()) != k)
      throw InputError(fmt::format("{}: step row {} must have {} entries", where, i, k));
    for (Eigen::Index c = 0; c < k; ++c)
      chain.step(i, c) = json_number(row[static_cast<std::size_t>(c)], fmt::format("{}: step[{}][{}]", where, i, c));
    const double bad = json_number(h["bad"][static_cast<std::size_t>(i)], fmt::format("{}: bad[{}]", where, i));
    if (!(bad >= 0.0 && bad <= 1.0))
      throw InputError(fmt::format("{}: bad[{}] = {} is out of range: it must be in [0, 1]", where, i, bad));
    chain.bad(i) = bad;
  }
  return chain;
}

// Refuses what does not fit the mode: a discrete option in time mode, a
// time option without it, a missing partner.
void check_mode(const TimeArgs& a) {
  const bool sojourns = a.t_good_option->count() || a.t_bad_option->count();
  const bool hidden = a.hidden_option != nullptr && a.hidden_option->count();
  if (!a.timed()) {
    for (const CLI::Option* o : a.time_only)
      if (o->count())
        throw InputError(fmt::format("{} applies in time mode only: give the mean sojourns --t-good and --t-bad "
                                     "(seconds) too",
                                     o->get_name()));
    return;
  }
  refuse_discrete_in_time_mode(a.discrete);
  if (sojourns && hidden)
    throw InputError("--hidden-chain and --t-good/--t-bad both give the chain: use one of them");
  if (sojourns && !a.t_good_option->count())
    throw InputError("--t-bad needs --t-good: give both mean sojourns, in seconds");
  if (sojourns && !a.t_bad_option->count())
    throw InputError("--t-good needs --t-bad: give both mean sojourns, in seconds");
  if (hidden && !a.step_option->count())
    throw InputError("--hidden-chain needs --step-seconds: the seconds one step of the fitted chain lasts");
  if (!hidden && a.step_option->count())
    throw InputError("--step-seconds applies to --hidden-chain only");
}

}  // namespace

void refuse_discrete_in_time_mode(const std::vector<CLI::Option*>& discrete) {
  for (const CLI::Option* o : discrete) {
    if (!o->count()) continue;
    const std::string& name = o->get_name();
    const char* instead = name == "--p" ? "the bad fraction is t_bad / (t_good + t_bad)"
                          : name == "--q" || name == "--burst-mean"
                              ? "bursts come from the mean sojourns --t-good and --t-bad"
                          : name == "--b" ? "the wait before a retry is --backoff, in seconds"
                                          : "the time between calls is --think-seconds";
    throw InputError(fmt::format("{} does not apply in time mode (--t-good, --t-bad): {}", name, instead));
  }
}

bool TimeArgs::timed() const {
  return t_good_option->count() || t_bad_option->count() || (hidden_option != nullptr && hidden_option->count());
}

std::optional<TimeModel> TimeArgs::time_model(const ModelArgs& model) const {
  check_mode(*this);
  if (!timed()) return std::nullopt;
  TimeModel time;
  if (hidden_option->count()) {
    const FittedChain fitted = read_fitted_chain(hidden_chain);
    time.chain = uniformised_time_chain(fitted.step, fitted.bad, step_seconds);
  } else {
    time.chain = two_state_time_chain(t_good, t_bad);
  }
  time.scope = parse_chain_scope(model.chain);
  time.request_seconds = request_seconds;
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
  const double p = time.chain.initial.dot(time.chain.bad);
  if (hidden_option->count())
    return fmt::format("fitted, {} states from {}, a step every {} s (p = {:.6g})", time.chain.states(), hidden_chain,
                       step_seconds, p);
  return fmt::format("two states, mean good {} s, mean bad {} s (p = {:.6g})", t_good, t_bad, p);
}

void add_time_options(CLI::App& cmd, TimeArgs& a) {
  // In time mode the chain comes from the sojourns: --p is no longer
  // required. The relaxation runs before CLI11 checks requirements.
  CLI::Option* p = cmd.get_option_no_throw("--p");
  const auto relax = [p](const std::string&) {
    if (p != nullptr) p->required(false);
  };
  a.t_good_option = cmd.add_option("--t-good", a.t_good,
                                   "time mode: mean good sojourn of the fault chain, seconds, in (0, 1e9]")
                        ->each(relax);
  a.t_bad_option = cmd.add_option("--t-bad", a.t_bad,
                                  "time mode: mean bad sojourn (outage), seconds, in (0, 1e9]; "
                                  "p = t_bad / (t_good + t_bad)")
                       ->each(relax);
  a.hidden_option = cmd.add_option("--hidden-chain", a.hidden_chain,
                                   "time mode: the hidden chain of a `relsim fit --hidden --json` output, made "
                                   "continuous (with --step-seconds)")
                        ->each(relax);
  a.step_option = cmd.add_option("--step-seconds", a.step_seconds,
                                 "--hidden-chain: seconds one step of the fitted chain lasts, in (0, 1e9]");
  a.time_only = {
      a.step_option,
      cmd.add_option("--request-seconds", a.request_seconds, "time mode: seconds a request takes, in [0, 1e9]")
          ->capture_default_str(),
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
  for (const char* name : {"--p", "--q", "--burst-mean", "--b", "--g"})
    if (CLI::Option* o = cmd.get_option_no_throw(name)) a.discrete.push_back(o);
}

}  // namespace relsim::cli
