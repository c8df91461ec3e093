#include "exact/call_matrices.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "relsim/core/error.hpp"

namespace relsim::exact_detail {
namespace {

template <class Mat>
Mat positive_pattern(const Mat& m) {
  return (m.array() > 0.0).template cast<double>().matrix();
}

// Adds m to the matrix at `key`, starting it at zero.
template <class Key, class M>
void accumulate(std::map<Key, M>& into, const Key& key, const M& m) {
  auto [it, fresh] = into.try_emplace(key, M::Zero(m.rows(), m.cols()));
  it->second += m;
}

// The walk over a call's states, on matrices of type Mat: Eigen::Matrix2d
// for two hidden states (no heap, unrolled products: the search of
// `relsim tune` spends its time here), Eigen::MatrixXd otherwise.
template <class Mat>
struct Walk {
  using Vec = Eigen::Matrix<double, Mat::RowsAtCompileTime, 1>;

  // Where the walk stands: the reach of a call state from each hidden state
  // at the call's first request, its positivity pattern, and (time mode with
  // fixed waits) the same split by the time spent so far, in microseconds.
  struct Node {
    Mat reach, pattern;
    Mat time_reach;  // Clock::track_done: E[time since the call's first start; reach], per (i, j)
    std::map<std::int64_t, Mat> by_micros;
  };
  // The call states of one request count, (http, stream) -> node, in a
  // dense grid visited in (http, stream) order; the grid is reused from
  // layer to layer, so the walk allocates nothing once it is warm.
  struct Layer {
    int streams = 1;
    std::vector<Node> nodes;
    std::vector<std::uint8_t> live;
    int count = 0;
    Layer(int https, int stream_count) : streams(stream_count), nodes(static_cast<std::size_t>(https * stream_count)),
                                         live(nodes.size(), 0) {}
    Node& at(int http, int stream, Eigen::Index k) {
      const auto i = static_cast<std::size_t>(http * streams + stream);
      Node& n = nodes[i];
      if (!live[i]) {
        live[i] = 1;
        ++count;
        n.reach.setZero(k, k);
        n.pattern.setZero(k, k);
        n.time_reach.setZero(k, k);
        n.by_micros.clear();
      }
      return n;
    }
    void clear() {
      std::fill(live.begin(), live.end(), std::uint8_t{0});
      count = 0;
    }
  };
  struct Bad {
    Mat reach, pattern;  // reach D_bad, and its pattern
    Vec mass;            // reach D_bad 1
  };
  struct Step {
    Mat value, pattern;
  };

  // A provider's side of the walk (Lane): its emissions, the step out of a
  // good request, their patterns, its normalised kind weights and its clock.
  struct LaneData {
    Mat d_bad, d_good, bad_pattern, good_exit, good_exit_pattern;
    Mat good_exit_weighted;  // D_good E[D exp(Q (D + think))], with Steps::gap_weighted only
    std::vector<double> weight;
    const Clock* clock = nullptr;
  };

  const Policy& policy;
  const Steps& steps;
  const Clock* clock;  // the first lane's: whether and how the walk keeps time
  Eigen::Index k;
  std::vector<LaneData> lanes;
  int after = 0;  // requests of a call before it moves to lanes[1]
  Vec ones;
  // The ways a call can end the task: (outcome class, requests) -> the sum
  // of w M D_bad over the call states that end so (M the reach of the call
  // state, w the fault kind's weight).
  std::map<std::pair<int, int>, Mat> ends;
  std::map<const Eigen::MatrixXd*, Step> step_cache;  // the steps outlive the walk: stable keys
  Vec attempts, bad_attempts, seconds;
  Mat fail_exit, advance_seconds;
  // Calls that took a content fault's answer (Reaction::trusted_bad): the
  // same as succeed_at, advance_seconds, succeed_by_micros and
  // most_on_success, kept apart for the trust bit.
  std::vector<Mat> trusted_at;
  Mat trusted_seconds;
  std::map<std::int64_t, Eigen::MatrixXd> trusted_by_micros;
  Eigen::MatrixXi most_on_trusted;
  bool trusts = false;
  CallMatrices& c;
  WalkMemo::Impl* memo = nullptr;  // the reactions, replayed (replay) or recorded
  bool replay = false;
  std::size_t replayed = 0;

  Walk(const Route& route, const Policy& p, const Steps& s, CallMatrices& out, WalkMemo* walk_memo)
      : policy(p), steps(s), clock(route.lanes.front().clock), k(route.lanes.front().bad.size()),
        after(route.lanes.size() > 1 ? route.after : std::numeric_limits<int>::max()), c(out) {
    RELSIM_ASSERT(!route.lanes.empty() && route.lanes.size() <= 2);
    for (const Lane& lane : route.lanes) {
      RELSIM_ASSERT(lane.bad.size() == k && (lane.clock == nullptr) == (clock == nullptr));
      LaneData d;
      d.d_bad = Mat(lane.bad.asDiagonal());
      d.d_good = Mat(Eigen::VectorXd(Eigen::VectorXd::Ones(k) - lane.bad).asDiagonal());
      // Positivity is tracked on 0/1 patterns, not on the probabilities, so a
      // path whose probability underflows still counts towards the worst case.
      d.bad_pattern = positive_pattern(d.d_bad);
      d.good_exit = d.d_good * step_of(steps.gap(std::nullopt)).value;
      d.good_exit_pattern = positive_pattern(d.good_exit);
      if (steps.gap_weighted) d.good_exit_weighted = d.d_good * step_of(steps.gap_weighted(std::nullopt)).value;
      const double total = lane.kinds.total();
      RELSIM_ASSERT(total > 0.0);
      for (int kind = 0; kind < kFaultKinds; ++kind)
        d.weight.push_back(lane.kinds.weight[static_cast<std::size_t>(kind)] / total);
      d.clock = lane.clock;
      lanes.push_back(std::move(d));
    }
    ones = Vec::Ones(k);
    attempts = Vec::Zero(k);
    bad_attempts = Vec::Zero(k);
    seconds = Vec::Zero(k);
    fail_exit = Mat::Zero(k, k);
    advance_seconds = Mat::Zero(k, k);
    trusted_seconds = Mat::Zero(k, k);
    if (walk_memo) use_memo(walk_memo->impl());
  }

  const LaneData& lane_at(int used) const { return lanes[to_second_provider(used, after) ? 1 : 0]; }

  // Replays the memo's reactions when it was recorded for this policy, these
  // kinds and this route (which lane each call state's faults come from);
  // else starts it over for them.
  void use_memo(WalkMemo::Impl& m) {
    const auto weighted = [this](std::size_t lane) {
      std::array<bool, kFaultKinds> w{};
      if (lane < lanes.size())
        for (std::size_t kind = 0; kind < w.size(); ++kind) w[kind] = lanes[lane].weight[kind] > 0.0;
      return w;
    };
    const int route_after = lanes.size() > 1 ? after : 0;
    memo = &m;
    replay = m.valid && m.kind == policy.kind && m.r == policy.r && m.s == policy.s && m.B == policy.B &&
             m.weighted == weighted(0) && m.after == route_after && m.weighted2 == weighted(1);
    if (replay) return;
    // Valid once the walk has run to its end (run()): one cut short by an
    // exception leaves nothing to replay.
    m = WalkMemo::Impl{false,     policy.kind, policy.r,    policy.s, policy.B,
                       weighted(0), route_after, weighted(1), std::move(m.reactions)};
    m.reactions.clear();
  }

  Reaction reaction(const CallState& state, FaultKind kind) {
    if (replay) {
      RELSIM_ASSERT(replayed < memo->reactions.size());
      return memo->reactions[replayed++];
    }
    const Reaction re = react(policy, state, kind);
    if (memo) memo->reactions.push_back(re);
    return re;
  }

  const Step& step_of(const Eigen::MatrixXd& m) {
    auto it = step_cache.find(&m);
    if (it == step_cache.end()) it = step_cache.emplace(&m, Step{Mat(m), positive_pattern(Mat(m))}).first;
    return it->second;
  }

  // One call state at `used` requests: its good request, then each fault
  // kind; a call that ends on an answer goes to `succeed`, or to `trusted`
  // when the answer was a content fault's.
  void visit(const CallState& state, const Node& node, Layer& next, Mat& succeed, Mat& trusted) {
    const int used = state.used;
    const LaneData& lane = lane_at(used);
    const Mat& d_good = lane.d_good;
    const Mat& good_exit = lane.good_exit;
    attempts += node.reach * ones;
    succeed += node.reach * good_exit;
    if (clock) {
      const double good_seconds = lane.clock->duration(std::nullopt);
      seconds += good_seconds * (node.reach * d_good * ones);
      if (clock->track_done && steps.gap_weighted)
        advance_seconds.noalias() += node.time_reach * good_exit + node.reach * lane.good_exit_weighted;
      else if (clock->track_done)
        advance_seconds.noalias() += (node.time_reach + good_seconds * node.reach) * good_exit;
      for (const auto& [t, m] : node.by_micros)
        accumulate(c.succeed_by_micros, t + to_micros(good_seconds), Eigen::MatrixXd(m * good_exit));
    }
    // Path counts, put back to 0/1 so that they cannot overflow.
    const Mat pattern = positive_pattern(node.pattern);
    const Mat finish = pattern * lane.good_exit_pattern;
    for (Eigen::Index i = 0; i < k; ++i)
      for (Eigen::Index j = 0; j < k; ++j)
        if (finish(i, j) > 0.0) c.most_on_success(i, j) = used + 1;
    // Shared by every fault kind of this node.
    const Mat reach_bad = node.reach * lane.d_bad;
    const Bad bad{reach_bad, pattern * lane.bad_pattern, reach_bad * ones};
    bad_attempts += bad.mass;
    for (int kind = 0; kind < kFaultKinds; ++kind) {
      const double w = lane.weight[static_cast<std::size_t>(kind)];
      if (w > 0.0) visit_fault(state, node, lane, bad, static_cast<FaultKind>(kind), w, next, trusted);
    }
  }

  // A content fault the call took as its answer: the call ends as on a good
  // request, into `trusted`, from the bad request's state.
  void trust(int used, const Node& node, const LaneData& lane, const Bad& bad, FaultKind kind, double w,
             double duration, Mat& trusted) {
    trusts = true;
    const Step& gap = step_of(steps.gap(kind));
    trusted.noalias() += w * (bad.reach * gap.value);
    const Mat finish = bad.pattern * gap.pattern;
    for (Eigen::Index i = 0; i < k; ++i)
      for (Eigen::Index j = 0; j < k; ++j)
        if (finish(i, j) > 0.0) most_on_trusted(i, j) = used + 1;
    if (!clock) return;
    if (clock->track_done && steps.gap_weighted)
      trusted_seconds.noalias() +=
          w * (node.time_reach * lane.d_bad * gap.value + bad.reach * step_of(steps.gap_weighted(kind)).value);
    else if (clock->track_done)
      trusted_seconds.noalias() += w * ((node.time_reach * lane.d_bad + duration * bad.reach) * gap.value);
    for (const auto& [t, m] : node.by_micros)
      accumulate(trusted_by_micros, t + to_micros(duration), Eigen::MatrixXd(w * (m * lane.d_bad * gap.value)));
  }

  void visit_fault(const CallState& state, const Node& node, const LaneData& lane, const Bad& bad, FaultKind kind,
                   double w, Layer& next, Mat& trusted) {
    const int used = state.used;
    const Mat& d_bad = lane.d_bad;
    const Reaction re = reaction(state, kind);
    const double duration = clock ? lane.clock->duration(kind) : 0.0;
    if (clock) seconds += (w * duration) * bad.mass;
    if (re.call_done) {
      RELSIM_ASSERT(re.trusted_bad);
      return trust(used, node, lane, bad, kind, w, duration, trusted);
    }
    if (re.ended) {
      accumulate(ends, std::pair{index_of(*re.ended), used + 1}, Mat(w * bad.reach));
      fail_exit += w * (bad.reach * step_of(steps.gap(kind)).value);
      const Vec can_fail = bad.pattern * ones;
      for (Eigen::Index i = 0; i < k; ++i)
        if (can_fail(i) > 0.0) c.most_on_failure(i) = std::max(c.most_on_failure(i), used + 1);
      const int outcome = static_cast<int>(re.ended->outcome);
      for (const auto& [t, m] : node.by_micros)
        accumulate(c.end_by_micros, std::pair{outcome, t + to_micros(duration)},
                   Eigen::VectorXd(w * (m * d_bad * ones)));
      return;
    }
    RELSIM_ASSERT(re.next.used == used + 1);
    const RetryStep retry = steps.retry(kind, state, re.next);
    const Step& step = step_of(*retry.matrix);
    Node& to = next.at(re.next.http, re.next.stream, k);
    to.reach.noalias() += w * (bad.reach * step.value);
    to.pattern.noalias() += bad.pattern * step.pattern;
    if (!clock) return;
    seconds += (w * retry.mean_wait) * bad.mass;
    if (clock->track_done) {
      // The time so far and this request's duration ride the step; the
      // wait rides it weighted (E[W step], not E[W] E[step]).
      // A drawn duration rides it weighted too.
      if (retry.duration_weighted)
        to.time_reach.noalias() +=
            w * (node.time_reach * d_bad * step.value + bad.reach * step_of(*retry.duration_weighted).value);
      else
        to.time_reach.noalias() += w * ((node.time_reach * d_bad + duration * bad.reach) * step.value);
      to.time_reach.noalias() += w * (bad.reach * step_of(*retry.wait_weighted).value);
    }
    if (!clock->track_times) return;
    const std::int64_t dt = to_micros(duration) + retry.wait_micros;
    for (const auto& [t, m] : node.by_micros) accumulate(to.by_micros, t + dt, Mat(w * (m * d_bad * step.value)));
  }

  // Unrolls the call request by request and fills c.
  void run() {
    c.most = policy.max_requests_per_call();
    c.most_on_success = Eigen::MatrixXi::Constant(k, k, -1);
    c.most_on_failure = Eigen::VectorXi::Constant(k, -1);
    most_on_trusted = Eigen::MatrixXi::Constant(k, k, -1);
    Mat advance = Mat::Zero(k, k);
    // react never takes http past s nor stream past r (policy.hpp).
    const int https = std::max(policy.s, 0) + 1, streams = policy.r + 1;
    Layer layer(https, streams), next(https, streams);
    Node& first = layer.at(0, 0, k);
    first.reach = Mat::Identity(k, k);
    first.pattern = Mat::Identity(k, k);
    if (clock && clock->track_times) first.by_micros[0] = Mat::Identity(k, k);
    for (int used = 0; used < c.most && layer.count > 0; ++used) {
      next.clear();
      Mat succeed = Mat::Zero(k, k), trusted = Mat::Zero(k, k);
      for (int http = 0; http < https; ++http)
        for (int stream = 0; stream < streams; ++stream) {
          const auto i = static_cast<std::size_t>(http * streams + stream);
          if (layer.live[i]) visit(CallState{http, stream, used}, layer.nodes[i], next, succeed, trusted);
        }
      c.succeed_at.emplace_back(succeed);
      trusted_at.push_back(trusted);
      advance += succeed;
      std::swap(layer, next);
    }
    RELSIM_ASSERT(layer.count == 0);  // every call ends within `most` requests
    RELSIM_ASSERT(!replay || replayed == memo->reactions.size());  // the same walk
    if (memo) memo->valid = true;
    c.most = static_cast<int>(c.succeed_at.size());
    for (const auto& m : c.succeed_at)
      for (Eigen::Index i = 0; i < k; ++i)
        for (Eigen::Index j = 0; j < k; ++j) c.succeed_flat.push_back(m(i, j));
    c.advance = advance;
    c.success_col = c.advance * Eigen::VectorXd::Ones(k);
    c.attempts_col = attempts;
    c.bad_col = bad_attempts;
    c.seconds_col = seconds;
    if (clock && clock->track_done) c.advance_seconds = advance_seconds;
    c.fail_exit = fail_exit;
    add_endings();
    if (trusts) add_trust_bit();
  }

  // [[clean, trusted], [0, clean + trusted]]: a call's move of the doubled state.
  static Eigen::MatrixXd doubled(const Eigen::MatrixXd& clean, const Eigen::MatrixXd& trusted) {
    const Eigen::Index n = clean.rows();
    Eigen::MatrixXd out = Eigen::MatrixXd::Zero(2 * n, 2 * n);
    out.topLeftCorner(n, n) = clean;
    out.topRightCorner(n, n) = trusted;
    out.bottomRightCorner(n, n) = clean + trusted;
    return out;
  }
  // The rows of m, then the same rows again: a column over the doubled state.
  template <class M>
  static M twice(const M& m) {
    M out(2 * m.rows(), m.cols());
    if (m.size() == 0) return out;  // no columns (a call that never ends the task): no block to address
    out.topRows(m.rows()) = m;
    out.bottomRows(m.rows()) = m;
    return out;
  }

  // Doubles every matrix of c for the trust bit (CallMatrices::trust_bit).
  void add_trust_bit() {
    c.trust_bit = true;
    c.succeed_flat.clear();
    for (std::size_t u = 0; u < c.succeed_at.size(); ++u) {
      c.succeed_at[u] = doubled(c.succeed_at[u], Eigen::MatrixXd(trusted_at[u]));
      const Eigen::MatrixXd& m = c.succeed_at[u];
      for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j) c.succeed_flat.push_back(m(i, j));
    }
    Mat trusted_sum = Mat::Zero(k, k);
    for (const Mat& m : trusted_at) trusted_sum += m;
    c.advance = doubled(c.advance, Eigen::MatrixXd(trusted_sum));
    c.success_col = c.advance * Eigen::VectorXd::Ones(2 * k);
    for (Ending& e : c.endings) e.col = twice(e.col);
    c.end_cols = twice(c.end_cols);
    // An ending leads to the next task, which starts clean.
    Eigen::MatrixXd exit = Eigen::MatrixXd::Zero(2 * k, 2 * k);
    exit.topLeftCorner(k, k) = c.fail_exit;
    exit.bottomLeftCorner(k, k) = c.fail_exit;
    c.fail_exit = exit;
    c.attempts_col = twice(c.attempts_col);
    c.bad_col = twice(c.bad_col);
    c.seconds_col = twice(c.seconds_col);
    if (c.advance_seconds.size() > 0) c.advance_seconds = doubled(c.advance_seconds, Eigen::MatrixXd(trusted_seconds));
    std::map<std::int64_t, Eigen::MatrixXd> by_micros;
    const Eigen::MatrixXd none = Eigen::MatrixXd::Zero(k, k);
    for (const auto& [t, m] : c.succeed_by_micros) {
      const auto it = trusted_by_micros.find(t);
      by_micros[t] = doubled(m, it == trusted_by_micros.end() ? none : it->second);
    }
    for (const auto& [t, m] : trusted_by_micros)
      if (!c.succeed_by_micros.count(t)) by_micros[t] = doubled(none, m);
    c.succeed_by_micros = std::move(by_micros);
    for (auto& entry : c.end_by_micros) entry.second = twice(entry.second);
    Eigen::MatrixXi most = Eigen::MatrixXi::Constant(2 * k, 2 * k, -1);
    most.topLeftCorner(k, k) = c.most_on_success;
    most.topRightCorner(k, k) = most_on_trusted;
    most.bottomRightCorner(k, k) = c.most_on_success.cwiseMax(most_on_trusted);
    c.most_on_success = most;
    c.most_on_failure = twice(c.most_on_failure);
  }

  // Fills c.endings, c.end_classes and c.end_cols from `ends`.
  void add_endings() {
    for (const auto& entry : ends)
      if (std::find(c.end_classes.begin(), c.end_classes.end(), entry.first.first) == c.end_classes.end())
        c.end_classes.push_back(entry.first.first);
    c.end_cols = Eigen::MatrixXd::Zero(k, static_cast<Eigen::Index>(c.end_classes.size()));
    for (const auto& [key, m] : ends) {
      Ending e{key.first, key.second, Eigen::VectorXd(m * ones)};
      const auto col = std::find(c.end_classes.begin(), c.end_classes.end(), key.first) - c.end_classes.begin();
      c.end_cols.col(col) += e.col;
      c.endings.push_back(std::move(e));
    }
  }
};

}  // namespace

std::int64_t to_micros(double seconds) { return std::llround(seconds * 1e6); }

Eigen::RowVectorXd lifted(const CallMatrices& c, const Eigen::RowVectorXd& start) {
  if (!c.trust_bit || start.size() == c.advance.rows()) return start;
  RELSIM_ASSERT(start.size() == c.clean_states());
  Eigen::RowVectorXd out = Eigen::RowVectorXd::Zero(2 * start.size());
  out.head(start.size()) = start;
  return out;
}

Steps discrete_steps(const Chain& chain) {
  Steps s;
  s.retry = [&chain](FaultKind, const CallState&, const CallState&) { return RetryStep{&chain.retry}; };
  s.gap = [&chain](std::optional<FaultKind>) -> const Eigen::MatrixXd& { return chain.gap; };
  return s;
}

CallMatrices call_matrices(const Eigen::VectorXd& bad, const Policy& policy, const FaultWeights& kinds,
                           const Steps& steps, const Clock* clock, WalkMemo* memo) {
  return call_matrices(Route{{Lane{bad, kinds, clock}}, 0}, policy, steps, memo);
}

CallMatrices call_matrices(const Route& route, const Policy& policy, const Steps& steps, WalkMemo* memo) {
  CallMatrices c;
  if (route.lanes.front().bad.size() == 2) Walk<Eigen::Matrix2d>(route, policy, steps, c, memo).run();
  else Walk<Eigen::MatrixXd>(route, policy, steps, c, memo).run();
  return c;
}

}  // namespace relsim::exact_detail

namespace relsim {

WalkMemo::WalkMemo() : impl_(std::make_unique<Impl>()) {}
WalkMemo::~WalkMemo() = default;

}  // namespace relsim
