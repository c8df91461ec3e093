#pragma once
// Time in seconds (docs/time.md): faults follow a continuous-time Markov
// chain, requests take time, and a retry waits by a backoff schedule. The
// step between two requests that start Δ seconds apart is exp(QΔ); averaged
// over the client's jitter it is still a matrix, so the transfer-matrix
// engine stays exact (exact_time in exact/exact.hpp).
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"

namespace relsim {

// Bounds for every time option, in seconds: sojourns, durations and waits.
inline constexpr double kMaxSeconds = 1e9;
// Retry-after values the SDKs honour: 0 < x < 60 s (as the official SDKs).
inline constexpr double kMaxRetryAfter = 60.0;

// The wait before retry k + 1 of one layer (k = 0, 1, ...: the layer's own
// retry count so far): max_wait(k) (1 - jitter U), U uniform on [0, 1).
struct Backoff {
  enum class Kind { none, exp, list };
  Kind kind = Kind::exp;
  double base = 0.5, cap = 8.0, jitter = 0.25;  // Kind::exp
  std::vector<double> list;                      // Kind::list: list[min(k, size - 1)], no jitter

  // The official SDKs' schedule: min(0.5 2^k, 8) (1 - 0.25 U).
  static Backoff sdk() { return {}; }
  double max_wait(int k) const;
  double jitter_fraction() const { return kind == Kind::exp ? jitter : 0.0; }
  double wait(int k, double u) const { return max_wait(k) * (1.0 - jitter_fraction() * u); }
  bool jittered() const { return jitter_fraction() > 0.0; }
};

// "sdk", "exp:BASE,CAP,JITTER", "list:1,2,4,8" or "none". Throws InputError
// naming the bad entry and its range: base, cap and list entries in
// [0, kMaxSeconds], jitter in [0, 1], a list of 1 to 1000 entries.
Backoff parse_backoff(std::string_view spec);
std::string to_string(const Backoff& backoff);  // parses back to the same schedule

// A continuous-time hidden Markov chain of faults: generator Q (rows sum to
// 0), P(request bad | state), and the stationary law, which the first
// request of a fresh task sees.
struct TimeChain {
  Eigen::MatrixXd generator;
  Eigen::VectorXd bad;
  Eigen::RowVectorXd initial;

  Eigen::Index states() const { return generator.rows(); }
  // The long-run share of bad requests: P(bad) under the stationary law.
  double bad_share() const { return initial.dot(bad); }
  // exp(Q t): closed form for two states, Eigen's matrix exponential otherwise.
  Eigen::MatrixXd transition(double seconds) const;
  // E exp(Q (fixed + wait (1 - jitter U))), U uniform on [0, 1): the step when
  // the client jitters its wait. Closed form for two states; Van Loan's block
  // exponential (Van Loan 1978) for the integral otherwise.
  Eigen::MatrixXd averaged_transition(double fixed, double wait, double jitter) const;
  // E W exp(Q (fixed + W)), W = wait (1 - jitter U): the step weighted by the
  // wait, for the mean wall time of the tasks that end well (a state after a
  // long wait is not the state after a short one). Closed form for two
  // states; Van Loan's block exponential for the integral of s exp(Qs) otherwise.
  Eigen::MatrixXd wait_weighted_transition(double fixed, double wait, double jitter) const;
  // E exp(Q D) and E D exp(Q D), D one of `law`'s entries, each as likely:
  // the step over a request whose duration is drawn (TimeModel::request_law).
  Eigen::MatrixXd law_transition(const std::vector<double>& law) const;
  Eigen::MatrixXd law_weighted_transition(const std::vector<double>& law) const;
};

// Gilbert's two states in continuous time: state 0 good, state 1 bad, mean
// sojourns t_good and t_bad seconds (rates 1/t_good out of good, 1/t_bad out
// of bad), so p = t_bad / (t_good + t_bad). Throws InputError unless both are
// in (0, kMaxSeconds], naming them as the options that gave them.
TimeChain two_state_time_chain(double t_good, double t_bad, std::string_view good_name = "t-good",
                               std::string_view bad_name = "t-bad");

// A k-state discrete chain (e.g. `relsim fit --hidden`, one step per
// request) made continuous by uniformisation: jumps by `step` at rate
// 1 / step_seconds, so Q = (step - I) / step_seconds. Throws InputError for a
// matrix that is not row-stochastic or a step_seconds outside (0, kMaxSeconds].
TimeChain uniformised_time_chain(const Eigen::MatrixXd& step, const Eigen::VectorXd& bad, double step_seconds);

// E[exp(QD)] and E[D exp(QD)] of a request law over one generator Q,
// computed once (with_law_steps) for the many runs of one model (tune, solve).
struct LawSteps {
  Eigen::MatrixXd generator, step, weighted;
};

struct TimeModel {
  TimeChain chain;
  ChainScope scope = ChainScope::fresh;
  double request_seconds = 0.0;  // a good request, and a fault without its own entry
  // A fault's duration; NaN: request_seconds (stall_first: stall's, when that is given).
  std::array<double, kFaultKinds> fault_seconds = nan_fault_seconds();
  double think_seconds = 0.0;  // from the end of a call's good request to the next call's first
  Backoff backoff;
  // The retry-after the server sends with http_429; the HTTP layer waits it
  // instead of its backoff when 0 < retry_after < kMaxRetryAfter. 0: none.
  double retry_after = 0.0;
  // The seconds of a good request (and of a fault without its own entry)
  // drawn, each entry as likely, instead of fixed: the durations of recorded
  // requests (--request-seconds-from). request_seconds is then their mean.
  // Empty: every such request takes request_seconds.
  std::vector<double> request_law{};
  std::string request_law_source{};  // where the law came from (a directory), for reports
  double request_law_first = 0.0;  // the mean seconds to their first event, for reports
  // request_law's steps over chain, kept from with_law_steps; used while
  // chain.generator is still the one they were made for.
  std::shared_ptr<const LawSteps> law_steps{};

  static std::array<double, kFaultKinds> nan_fault_seconds();
  // How long a request takes: nullopt for a good one (the mean, when drawn).
  double seconds_of(std::optional<FaultKind> fault) const;
  // Whether its seconds are drawn from request_law.
  bool drawn(std::optional<FaultKind> fault) const;
  // The longest a request of any kind can take.
  double longest_request() const;
  // True when no wait is jittered and no duration drawn (then wall time is
  // exact to the microsecond).
  bool fixed_times() const;
};

// The wait before the request that follows a bad request of `kind` sent from
// call state `from`, which `react` moved to `to` (a retry, not an ending):
// the HTTP layer's retry number is from.http, the stream layer's from.stream.
struct Wait {
  double max = 0.0;     // the wait at U = 0
  double jitter = 0.0;  // the wait is max (1 - jitter U)
};
Wait wait_before(const TimeModel& time, const CallState& from, const CallState& to, FaultKind kind);
// The same rule for a bare schedule and the retry-after a 429 carried (0: none).
Wait wait_before(const Backoff& backoff, double retry_after, const CallState& from, const CallState& to,
                 FaultKind kind);

// Throws InputError naming the bad field and its range.
void validate(const TimeModel& time);

// The request law's steps over `chain`: time.law_steps when made for its
// generator, else computed now.
LawSteps law_steps_over(const TimeModel& time, const TimeChain& chain);
// Sets time.law_steps for time.chain (nothing without a request law).
void with_law_steps(TimeModel& time);

// "KIND=SECONDS,...", or "timeouts": a slow_headers fault takes the header
// timeout and a stall the idle timeout (what a client with timeouts spends on
// them). Kinds not named stay NaN (they take request_seconds). Throws
// InputError naming the bad entry.
std::array<double, kFaultKinds> parse_fault_seconds(std::string_view spec, double header_timeout,
                                                    double idle_timeout);

}  // namespace relsim
