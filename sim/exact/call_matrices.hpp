#pragma once
// Internal to the exact engine: the per-call transfer matrices of a policy,
// over the discrete chain (exact.cpp) or in seconds (exact_time.cpp).
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include <Eigen/Dense>

#include "relsim/core/faults.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/exact/exact.hpp"

namespace relsim::exact_detail {

// The step from a bad request to the retry that follows it: the matrix of
// the hidden state, and (time mode) the wait before the retry.
struct RetryStep {
  const Eigen::MatrixXd* matrix = nullptr;  // lives as long as the Steps
  double mean_wait = 0.0;                   // seconds
  std::int64_t wait_micros = 0;             // the wait, when it is fixed
  // Time mode: E[wait exp(Q (duration + wait))], the step weighted by the
  // wait (Clock::track_done only; lives as long as the Steps).
  const Eigen::MatrixXd* wait_weighted = nullptr;
  // Time mode, a drawn duration D (TimeModel::request_law): E[D exp(Q (D +
  // wait))], the step weighted by the request's own duration. nullptr: the
  // duration is the clock's, fixed, and rides the step as a factor.
  const Eigen::MatrixXd* duration_weighted = nullptr;
};

// The step from one request to the next, as a matrix of the hidden state.
struct Steps {
  // From a bad request of `kind` sent in call state `from` to the retry that
  // `react` sends from `to`.
  std::function<RetryStep(FaultKind kind, const CallState& from, const CallState& to)> retry;
  // From a call's last request (nullopt: good) to the next call's first
  // request, or the next task's when the call ended the task.
  std::function<const Eigen::MatrixXd&(std::optional<FaultKind> last)> gap;
  // Time mode, drawn durations: E[D exp(Q (D + think))], the gap weighted by
  // the last request's duration D. Empty: the clock's fixed duration times gap.
  std::function<const Eigen::MatrixXd&(std::optional<FaultKind> last)> gap_weighted;
};

// Steps of the discrete chain: P^(1+b) after a bad request, P^(1+g) after a call.
Steps discrete_steps(const Chain& chain);

// What a request adds to the wall time, for the time mode: its duration
// (the wait before a retry comes with its RetryStep).
struct Clock {
  std::array<double, kFaultKinds + 1> seconds{};  // [kind] a fault's duration, [kFaultKinds] a good request's
  bool track_times = false;  // keep the per-call distribution of time (fixed waits only)
  bool track_done = false;   // keep the time of the calls that succeed (CallMatrices::advance_seconds)
  double duration(std::optional<FaultKind> fault) const {
    return seconds[fault ? static_cast<std::size_t>(*fault) : static_cast<std::size_t>(kFaultKinds)];
  }
};

std::int64_t to_micros(double seconds);

// One way a call ends the task: an outcome class after `requests` requests
// of the call, from the hidden state at the call's first request.
struct Ending {
  int outcome_class = 0;
  int requests = 0;
  Eigen::VectorXd col;  // P(this ending | state)
};

// The per-call transfer matrices of a policy. Row vectors hold the
// distribution of the hidden state at a call's first request; D_bad and
// D_good are the diagonal emission matrices. The call's own state machine
// (policy.hpp, `react`) is unrolled request by request: M_x(i, j) is the
// probability, from hidden state i at the call's first request, of reaching
// call state x with hidden state j at its next request.
struct CallMatrices {
  int most = 0;                             // most requests one call can send
  std::vector<Eigen::MatrixXd> succeed_at;  // [c - 1]: call succeeds with c requests, next call's state
  std::vector<double> succeed_flat;         // S_c(i, j) at [((c - 1) k + i) k + j]
  Eigen::MatrixXd advance;                  // sum over c of S_c
  Eigen::VectorXd success_col;              // advance * 1: P(call succeeds | state)
  std::vector<Ending> endings;
  std::vector<int> end_classes;             // outcome classes some ending has
  Eigen::MatrixXd end_cols;                 // (state, m): P(call ends the task in end_classes[m] | state)
  Eigen::MatrixXd fail_exit;                // all endings, with the state at the next task's first request
  Eigen::VectorXd attempts_col;             // E[requests of the call | state]
  Eigen::VectorXd bad_col;                  // E[bad requests of the call | state]
  Eigen::VectorXd seconds_col;              // E[seconds of the call, first start to last end | state] (time mode)
  // Clock::track_done: E[seconds of the call; it succeeds, next call's state j | state i]. Empty otherwise.
  Eigen::MatrixXd advance_seconds;
  // Time mode with fixed waits: the call's time in microseconds, by ending.
  std::map<std::int64_t, Eigen::MatrixXd> succeed_by_micros;  // call succeeds after that long, next call's state
  std::map<std::pair<int, std::int64_t>, Eigen::VectorXd> end_by_micros;  // (outcome, micros) -> P | state
  // Max-plus view for the worst case: most requests a call can take from
  // state i to state j on a path of positive probability (-1: none).
  Eigen::MatrixXi most_on_success;
  Eigen::VectorXi most_on_failure;

  // The trust bit (docs/model.md, Content faults): when a call can take a
  // content fault's wrong answer as its own (naive), the hidden state is
  // doubled, and its second half says that some call of the task did. Every
  // matrix above is then over 2k states: a call moves a task from the first
  // half to the second when it trusts a bad answer, never back; an ending
  // leads to the next task's clean half. A task alive after its last call
  // is done from the first half, partial_done from the second.
  bool trust_bit = false;
  // The states of a task that has trusted no bad answer: all, or the first half.
  Eigen::Index clean_states() const { return trust_bit ? advance.rows() / 2 : advance.rows(); }
};

// `start` over the chain's states, put in the clean half when c has a trust bit.
Eigen::RowVectorXd lifted(const CallMatrices& c, const Eigen::RowVectorXd& start);

// `bad`: P(request bad | hidden state). `memo`: reactions to replay, or to
// record for the next walk (ExactOptions::walk_memo).
CallMatrices call_matrices(const Eigen::VectorXd& bad, const Policy& policy, const FaultWeights& kinds,
                           const Steps& steps, const Clock* clock = nullptr, WalkMemo* memo = nullptr);

// A provider a call's requests go to (fallback.hpp): P(request bad | hidden
// state), the kinds of its bad requests and (time mode, cost) its clock.
struct Lane {
  Eigen::VectorXd bad;
  FaultWeights kinds;
  const Clock* clock = nullptr;  // every lane has one, or none does
};
// Where a call's requests go: its first `after` to lanes[0], the rest to
// lanes[1] when there is one. The steps between requests are the same for
// both: the hidden state holds both providers'.
struct Route {
  std::vector<Lane> lanes;
  int after = 0;
};
// The same walk over a route; `memo` only with one lane.
CallMatrices call_matrices(const Route& route, const Policy& policy, const Steps& steps, WalkMemo* memo = nullptr);

}  // namespace relsim::exact_detail

namespace relsim {

// What a walk is keyed by (react reads the policy's kind, r, s and B alone;
// the walk visits the kinds with weight) and the reactions it asked for.
struct WalkMemo::Impl {
  bool valid = false;
  PolicyKind kind = PolicyKind::simple;
  int r = 0, s = 0, B = 0;
  std::array<bool, kFaultKinds> weighted{};  // per kind, whether the first provider's weight is positive
  // With a fallback (two lanes): its K and the second provider's kinds; after 0 without.
  int after = 0;
  std::array<bool, kFaultKinds> weighted2{};
  std::vector<Reaction> reactions;
};

}  // namespace relsim
