// The transfer-matrix engine in seconds (docs/time.md): the same walk over
// a call's states as the discrete chain, each step between two requests the
// continuous chain's exp(QΔ), averaged over the client's jitter.
#include <array>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/exact/exact.hpp"
#include "exact/call_matrices.hpp"
#include "exact/cost.hpp"
#include "exact/exact_internal.hpp"
#include "exact/seconds_distribution.hpp"

namespace relsim {
namespace {

using exact_detail::CallMatrices;
using exact_detail::to_micros;

// The step matrices of one run, each computed once per distinct
// (duration, wait, jitter): a handful per policy. A retry's step depends on
// the fault's kind, the layer that retries and its retry number alone
// (wait_before), so each is looked up once and then read from a table
// indexed by those three: the walk asks for it once per call state and kind.
// A drawn duration D (TimeModel::request_law) is independent of the wait,
// and exp(Q t) for one Q commute, so its steps are E[exp(QD)] or
// E[D exp(QD)] times the wait's.
class TimeSteps {
 public:
  TimeSteps(const TimeModel& time, bool weighted) : time_(time), want_weighted_(weighted) {
    if (time.request_law.empty()) return;
    LawSteps law = law_steps_over(time, time.chain);
    law_ = std::move(law.step);
    law_weighted_ = std::move(law.weighted);
  }

  exact_detail::RetryStep retry(FaultKind kind, const CallState& from, const CallState& to) {
    const bool http = to.http == from.http + 1;
    const auto index = static_cast<std::size_t>(http ? from.http : from.stream);
    if (index >= table_.size()) table_.resize(index + 1);
    std::optional<exact_detail::RetryStep>& slot = table_[index][static_cast<std::size_t>(kind) * 2 + (http ? 1 : 0)];
    if (!slot) {
      const Wait w = wait_before(time_, from, to, kind);
      const Key key{fixed(kind), w.max, w.jitter, time_.drawn(kind)};
      slot = exact_detail::RetryStep{&get(key), w.max * (1.0 - w.jitter / 2.0), to_micros(w.max),
                                     want_weighted_ ? &weighted(key) : nullptr,
                                     want_weighted_ && key.drawn ? &duration_weighted(key) : nullptr};
    }
    return *slot;
  }
  const Eigen::MatrixXd& gap(std::optional<FaultKind> last) {
    return get(Key{fixed(last) + time_.think_seconds, 0.0, 0.0, time_.drawn(last)});
  }
  // E[D exp(Q (D + think))] for the last request's duration D.
  const Eigen::MatrixXd& gap_weighted(std::optional<FaultKind> last) {
    const Key key{fixed(last) + time_.think_seconds, 0.0, 0.0, time_.drawn(last)};
    if (key.drawn) return duration_weighted(key);
    return remember(gap_weighted_, key, [&] { return Eigen::MatrixXd(time_.seconds_of(last) * get(key)); });
  }

 private:
  // A step: a fixed time, then a wait (max, jitter), after a drawn duration or not.
  struct Key {
    double fixed, wait, jitter;
    bool drawn;
    bool operator<(const Key& o) const {
      return std::tie(fixed, wait, jitter, drawn) < std::tie(o.fixed, o.wait, o.jitter, o.drawn);
    }
  };
  double fixed(std::optional<FaultKind> kind) const { return time_.drawn(kind) ? 0.0 : time_.seconds_of(kind); }
  template <class Make>
  static const Eigen::MatrixXd& remember(std::map<Key, Eigen::MatrixXd>& cache, const Key& key, Make make) {
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, make()).first;
    return it->second;
  }
  const Eigen::MatrixXd& get(const Key& k) {
    return remember(cache_, k, [&] {
      Eigen::MatrixXd m = time_.chain.averaged_transition(k.fixed, k.wait, k.jitter);
      return k.drawn ? Eigen::MatrixXd(law_ * m) : m;
    });
  }
  // E[W exp(Q (D + W))].
  const Eigen::MatrixXd& weighted(const Key& k) {
    return remember(weighted_, k, [&] {
      Eigen::MatrixXd m = time_.chain.wait_weighted_transition(k.fixed, k.wait, k.jitter);
      return k.drawn ? Eigen::MatrixXd(law_ * m) : m;
    });
  }
  // E[D exp(Q (D + W))], D drawn.
  const Eigen::MatrixXd& duration_weighted(const Key& k) {
    return remember(duration_weighted_, k, [&] {
      return Eigen::MatrixXd(law_weighted_ * time_.chain.averaged_transition(k.fixed, k.wait, k.jitter));
    });
  }
  const TimeModel& time_;
  bool want_weighted_;  // only for the done tasks' mean seconds (ExactOptions::done_seconds)
  Eigen::MatrixXd law_, law_weighted_;  // E[exp(QD)], E[D exp(QD)] over the drawn durations
  std::map<Key, Eigen::MatrixXd> cache_, weighted_, duration_weighted_, gap_weighted_;
  // [retry number][kind * 2 + (HTTP layer)]: the steps already looked up.
  std::vector<std::array<std::optional<exact_detail::RetryStep>, 2 * kFaultKinds>> table_;
};

}  // namespace

ExactResult exact_time(const TimeModel& given, const Policy& policy, const ExactOptions& options) {
  validate(given);
  validate(policy);
  if (options.tools) throw InputError("tool-faults: time mode (--t-good, --t-bad) does not support tool calls yet");
  // With a fallback the hidden state holds both providers' (fallback.hpp).
  TimeModel time = given;
  Eigen::VectorXd second_bad;
  if (options.fallback) {
    exact_detail::check_fallback(*options.fallback, options, policy, true);
    FallbackTimeChain both = fallback_time_chain(given.chain, *options.fallback);
    time.chain = std::move(both.chain);
    second_bad = std::move(both.second_bad);
  }
  TimeSteps cache(time, options.done_seconds);
  exact_detail::Steps steps;
  steps.retry = [&cache](FaultKind kind, const CallState& from, const CallState& to) {
    return cache.retry(kind, from, to);
  };
  steps.gap = [&cache](std::optional<FaultKind> last) -> const Eigen::MatrixXd& { return cache.gap(last); };
  if (!time.request_law.empty() && options.done_seconds)
    steps.gap_weighted = [&cache](std::optional<FaultKind> last) -> const Eigen::MatrixXd& {
      return cache.gap_weighted(last);
    };
  exact_detail::Clock clock;
  for (int kind = 0; kind < kFaultKinds; ++kind)
    clock.seconds[static_cast<std::size_t>(kind)] = time.seconds_of(static_cast<FaultKind>(kind));
  clock.seconds[kFaultKinds] = time.seconds_of(std::nullopt);
  clock.track_times = options.distribution && time.fixed_times();
  clock.track_done = options.done_seconds;
  exact_detail::Route route{{{time.chain.bad, options.kinds, &clock}}, 0};
  if (options.fallback) {
    route.lanes.push_back({second_bad, options.fallback->kinds, &clock});
    route.after = options.fallback->after;
  }
  const CallMatrices c = exact_detail::call_matrices(route, policy, steps, options.walk_memo);
  const Eigen::RowVectorXd start = time.scope == ChainScope::fresh
                                       ? time.chain.initial
                                       : exact_detail::continuous_start_of(c, time.chain.initial, policy.n);
  ExactResult out = exact_detail::result_from(c, start, policy, options, time.think_seconds);
  out.timed = true;
  if (clock.track_times) exact_detail::seconds_distribution(c, start, policy, time.think_seconds, options, out);
  if (options.billing) exact_detail::add_cost(route, policy, options, steps, start, out);
  out.fallback = options.fallback;
  return out;
}

Quantiles seconds_quantiles(const std::vector<SecondsBin>& bins) {
  double total = 0.0;
  for (const auto& b : bins) total += b.probability;
  Quantiles q;
  double* slot[] = {&q.p50, &q.p90, &q.p99};
  const double level[] = {0.5, 0.9, 0.99};
  int next = 0;
  double cum = 0.0;
  // Levels relative to the mass kept (pruning drops at most a few 1e-300).
  for (const auto& b : bins) {
    cum += b.probability;
    while (next < 3 && cum >= level[next] * total * (1.0 - 1e-12)) *slot[next++] = b.seconds;
    if (next == 3) break;
  }
  return q;
}

}  // namespace relsim
