#include "relsim/exact/exact.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "relsim/core/error.hpp"
#include "exact/call_matrices.hpp"
#include "exact/cost.hpp"
#include "exact/exact_internal.hpp"
#include "exact/requests_distribution.hpp"

namespace relsim {
namespace exact_detail {
namespace {

// The time of the done path through the calls of a task:
// w(l) = E[seconds of the calls so far; all succeeded, state l] / P(all succeeded),
// carried beside the forward vector (CallMatrices::advance_seconds).
class DonePath {
 public:
  explicit DonePath(const CallMatrices& c) : c_(c), on_(c.advance_seconds.size() > 0) {
    const auto k = static_cast<std::size_t>(c.advance.rows());
    w_.assign(k, 0.0);
    next_.assign(k, 0.0);
  }
  // Before the call: v is the forward vector at its first request.
  void call(const std::vector<double>& v) {
    if (!on_) return;
    std::fill(next_.begin(), next_.end(), 0.0);
    const auto k = static_cast<Eigen::Index>(w_.size());
    for (Eigen::Index i = 0; i < k; ++i)
      for (Eigen::Index l = 0; l < k; ++l)
        next_[static_cast<std::size_t>(l)] +=
            w_[static_cast<std::size_t>(i)] * c_.advance(i, l) + v[static_cast<std::size_t>(i)] * c_.advance_seconds(i, l);
  }
  // After it, with the forward vector's normaliser s.
  void normalise(double s) {
    if (!on_) return;
    for (std::size_t l = 0; l < w_.size(); ++l) w_[l] = next_[l] / s;
  }
  // E[wall time | done] after n calls with `think` seconds between them,
  // `v` the normalised forward vector after the last call: done is its
  // first `clean` states (CallMatrices::clean_states).
  double mean(std::int64_t n, double think, const std::vector<double>& v, std::size_t clean) const {
    if (!on_) return std::numeric_limits<double>::quiet_NaN();
    double calls = 0.0, share = 0.0;
    for (std::size_t l = 0; l < clean; ++l) calls += w_[l];
    if (clean < w_.size()) {
      for (std::size_t l = 0; l < clean; ++l) share += v[l];
      calls /= share;
    }
    return calls + static_cast<double>(n - 1) * think;
  }

 private:
  const CallMatrices& c_;
  bool on_;
  std::vector<double> w_, next_;
};

// A matrix's entries row by row.
std::vector<double> row_major(const Eigen::MatrixXd& m) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(m.size()));
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) out.push_back(m(i, j));
  return out;
}

// With the trust bit, the tasks alive after the last call in its second
// half took a bad answer: their mass (of `alive`, by the normalised forward
// vector `v`) goes to partial_done, and log10_success keeps the clean
// half's. Returns the done mass.
double split_trusted(const CallMatrices& c, const std::vector<double>& v, double alive, Totals& t) {
  if (!c.trust_bit) return alive;
  const auto clean = static_cast<std::size_t>(c.clean_states());
  double clean_share = 0.0, trusted_share = 0.0;
  for (std::size_t l = 0; l < v.size(); ++l) (l < clean ? clean_share : trusted_share) += v[l];
  t.outcomes[static_cast<std::size_t>(index_of(OutcomeClass{Outcome::partial_done, std::nullopt}))] +=
      alive * trusted_share;
  t.log10_success += clean_share > 0.0 ? std::log10(clean_share) : -std::numeric_limits<double>::infinity();
  return alive * clean_share;
}

}  // namespace

Totals totals(const CallMatrices& c, const Eigen::RowVectorXd& chain_start, std::int64_t n, bool want_exit,
              double think, double goes_on) {
  RELSIM_ASSERT(!want_exit || goes_on == 1.0);
  const Eigen::RowVectorXd start = lifted(c, chain_start);
  Totals t;
  const Eigen::Index k = start.size();
  const Eigen::Index m_end = c.end_cols.cols();
  // Plain loops over small row-major copies: this runs 10^6 times and more,
  // where Eigen's dynamic-size expressions cost more than the arithmetic.
  const std::vector<double> advance = row_major(c.advance), exit_m = row_major(c.fail_exit),
                            end_cols = row_major(c.end_cols);
  std::vector<double> v(static_cast<std::size_t>(k)), next(static_cast<std::size_t>(k));
  DonePath done(c);
  std::vector<double> ends(static_cast<std::size_t>(m_end)), exit(static_cast<std::size_t>(k), 0.0);
  const double start_sum = start.sum();
  for (Eigen::Index i = 0; i < k; ++i) v[static_cast<std::size_t>(i)] = start(i) / start_sum;
  double alive = 1.0;  // P(every call so far succeeded); may underflow, log10 does not
  for (std::int64_t j = 0; j < n; ++j) {
    double attempts = 0.0, bad = 0.0, seconds = 0.0;
    std::fill(next.begin(), next.end(), 0.0);
    std::fill(ends.begin(), ends.end(), 0.0);
    done.call(v);
    for (Eigen::Index i = 0; i < k; ++i) {
      const double vi = v[static_cast<std::size_t>(i)];
      if (vi == 0.0) continue;
      attempts += vi * c.attempts_col(i);
      bad += vi * c.bad_col(i);
      seconds += vi * c.seconds_col(i);
      const double* arow = &advance[static_cast<std::size_t>(i * k)];
      for (Eigen::Index l = 0; l < k; ++l) next[static_cast<std::size_t>(l)] += vi * arow[l];
      // No ending at all (a naive call that takes every fault it meets as an answer): no row to read.
      const double* erow = end_cols.data() + i * m_end;
      for (Eigen::Index m = 0; m < m_end; ++m) ends[static_cast<std::size_t>(m)] += vi * erow[m];
      if (want_exit && alive > 0.0) {
        const double* xrow = &exit_m[static_cast<std::size_t>(i * k)];
        for (Eigen::Index l = 0; l < k; ++l) exit[static_cast<std::size_t>(l)] += alive * vi * xrow[l];
      }
    }
    t.mean_requests += alive * attempts;
    t.mean_bad_requests += alive * bad;
    t.mean_seconds += alive * (seconds + (j > 0 ? think : 0.0));
    for (Eigen::Index m = 0; m < m_end; ++m)
      t.outcomes[static_cast<std::size_t>(c.end_classes[static_cast<std::size_t>(m)])] +=
          alive * ends[static_cast<std::size_t>(m)];
    double s = 0.0;
    for (const double x : next) s += x;
    if (!(s > 0.0)) {
      t.success = 0.0;
      t.log10_success = -std::numeric_limits<double>::infinity();
      if (want_exit) t.exit = Eigen::Map<const Eigen::RowVectorXd>(exit.data(), k);
      return t;
    }
    t.log10_success += std::log10(s);
    alive *= s;
    // A tool call takes no chain step: the hidden state's law stays, its mass shrinks.
    if (goes_on != 1.0) {
      t.tool_reach += alive;
      t.log10_success += std::log10(goes_on);
      alive *= goes_on;
    }
    // Past 1e-300 the product would crawl through denormals (and stick at
    // the smallest one, 0.99 x 5e-324 rounding back up), each step a slow
    // microcode assist; what it still adds to the totals is below 1e-300.
    if (alive < 1e-300) alive = 0.0;
    for (Eigen::Index l = 0; l < k; ++l) v[static_cast<std::size_t>(l)] = next[static_cast<std::size_t>(l)] / s;
    done.normalise(s);
  }
  t.mean_seconds_done = done.mean(n, think, v, static_cast<std::size_t>(c.clean_states()));
  const double done_alive = split_trusted(c, v, alive, t);
  // Below about 1e-300 the running product has lost digits to denormals;
  // the sum of logarithms has not.
  t.success = t.log10_success < -300.0 ? std::pow(10.0, t.log10_success) : done_alive;
  t.outcomes[0] = t.success;
  if (want_exit) {
    for (Eigen::Index l = 0; l < k; ++l) exit[static_cast<std::size_t>(l)] += alive * v[static_cast<std::size_t>(l)];
    t.exit = Eigen::Map<const Eigen::RowVectorXd>(exit.data(), k);
  }
  return t;
}

std::int64_t worst_case(const CallMatrices& c, const Eigen::RowVectorXd& chain_start, std::int64_t n) {
  const Eigen::RowVectorXd start = lifted(c, chain_start);
  const Eigen::Index k = start.size();
  // best(i): most requests so far on a positive path whose next call starts in state i.
  std::vector<std::int64_t> best(static_cast<std::size_t>(k), -1), next(static_cast<std::size_t>(k));
  for (Eigen::Index i = 0; i < k; ++i)
    if (start(i) > 0.0) best[static_cast<std::size_t>(i)] = 0;
  std::int64_t most = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    std::fill(next.begin(), next.end(), -1);
    bool any = false;
    for (Eigen::Index i = 0; i < k; ++i) {
      const std::int64_t b = best[static_cast<std::size_t>(i)];
      if (b < 0) continue;
      if (c.most_on_failure(i) >= 0) most = std::max(most, b + c.most_on_failure(i));
      for (Eigen::Index l = 0; l < k; ++l)
        if (c.most_on_success(i, l) >= 0) {
          auto& slot = next[static_cast<std::size_t>(l)];
          slot = std::max(slot, b + c.most_on_success(i, l));
          any = true;
        }
    }
    best.swap(next);
    if (!any) return most;
  }
  for (auto b : best) most = std::max(most, b);
  return most;
}

// With tool calls (docs/tool_model.md, Exact): Totals ran with a = P(ok),
// c_s = P(corrupted, goes on), so t.success = (a + c_s)^n S_n; of that,
// a^n S_n is done and the rest silent_wrong; class X of a tool call has
// x t.tool_reach. The extra factor (a / (a + c_s))^n is taken as
// exp(n log1p(-c_s / (a + c_s))), which keeps silent_wrong's digits when c_s is tiny.
void add_tool_outcomes(const ToolModel& tools, const Totals& t, std::int64_t n, ExactResult& out) {
  const ToolShares shares = tool_shares(tools);
  const double w = shares.goes_on();
  const double nd = static_cast<double>(n);
  const double log_keep = w > 0.0 ? nd * std::log1p(-shares.corrupted / w) : 0.0;
  out.tools = tools;
  out.log10_success = shares.ok > 0.0 ? t.log10_success + log_keep / std::log(10.0)
                                      : -std::numeric_limits<double>::infinity();
  const double done = out.log10_success < -300.0 ? std::pow(10.0, out.log10_success) : t.success * std::exp(log_keep);
  const double silent = t.success * -std::expm1(log_keep);
  out.success = done;
  out.outcomes[0] = done;
  for (int x = 0; x < kToolClasses; ++x)
    out.tool_outcomes[static_cast<std::size_t>(x)] = shares.ends[static_cast<std::size_t>(x)] * t.tool_reach;
  out.tool_outcomes[static_cast<std::size_t>(ToolClass::silent_wrong)] = silent;
  for (int x = 0; x < kToolClasses; ++x)
    if (is_wrong(static_cast<ToolClass>(x))) out.wrong += out.tool_outcomes[static_cast<std::size_t>(x)];
}

ExactResult result_from(const CallMatrices& c, const Eigen::RowVectorXd& start, const Policy& policy,
                        const ExactOptions& options, double think) {
  if (options.tools && c.trust_bit)
    throw InputError("tool-faults: a loop that takes a content fault's answer as its own (naive, with max_tokens, "
                     "bad_tool_args or duplicate_event) is not covered with tool calls yet; leave out one of them");
  const double goes_on = options.tools ? tool_shares(*options.tools).goes_on() : 1.0;
  const Totals t = totals(c, start, policy.n, false, think, goes_on);
  ExactResult out;
  out.method = "matrix";
  out.success = t.success;
  out.log10_success = t.log10_success;
  out.outcomes = t.outcomes;
  for (int o = 1; o < kOutcomeClasses; ++o) {
    const Outcome kind = outcome_class(o).outcome;
    if (kind == Outcome::env_error) out.env_error += t.outcomes[static_cast<std::size_t>(o)];
    if (is_wrong(kind)) out.wrong += t.outcomes[static_cast<std::size_t>(o)];
  }
  out.mean_requests = t.mean_requests;
  out.mean_bad_requests = t.mean_bad_requests;
  out.mean_seconds = t.mean_seconds;
  if (out.success > 0.0) out.mean_seconds_done = t.mean_seconds_done;
  // When every tool call ends the task, only the first model call is sent.
  out.max_requests = worst_case(c, start, goes_on > 0.0 ? policy.n : 1);
  if (options.tools) add_tool_outcomes(*options.tools, t, policy.n, out);
  if (options.distribution && !options.tools) requests_distribution(c, start / start.sum(), policy, options, out);
  else out.distribution_complete = false;
  return out;
}

void check_fallback(const Fallback& fallback, const ExactOptions& options, const Policy& policy, bool in_seconds) {
  if (in_seconds && !fallback.timed())
    throw InputError("fallback-after: in time mode the second provider's chain is in seconds: give --t-good2 and "
                     "--t-bad2 (not --p2)");
  if (!in_seconds && fallback.timed())
    throw InputError("fallback-after: the second provider's chain in seconds (--t-good2, --t-bad2) needs time mode "
                     "(--t-good, --t-bad)");
  validate(fallback, policy);
  if (fallback.cooldown)
    throw InputError("cooldown: a cooldown remembers when the first provider failed, which the exact engine's states "
                     "do not hold; relsim simulate gives it (in time mode)");
  if (options.tools)
    throw InputError("fallback-after: a fallback does not cover tool calls (--tool-faults) yet; leave out one of them");
}

Eigen::RowVectorXd continuous_start_of(const CallMatrices& c, const Eigen::RowVectorXd& initial, std::int64_t n) {
  const Eigen::Index k = initial.size();
  // K(i, j): P(the next task's first request is in state j | this task's is in i).
  // With the trust bit, the next task starts clean whatever this one trusted.
  Eigen::MatrixXd K(k, k);
  for (Eigen::Index i = 0; i < k; ++i) {
    const Totals t = totals(c, Eigen::RowVectorXd::Unit(k, i), n, true, 0.0);
    Eigen::RowVectorXd exit = t.exit.head(k);
    if (c.trust_bit) exit += t.exit.tail(k);
    K.row(i) = exit / exit.sum();
  }
  return long_run_distribution(K, initial);
}

}  // namespace exact_detail

ExactResult exact_matrix_from(const Chain& chain, const Eigen::RowVectorXd& start, const Policy& policy,
                              const ExactOptions& options) {
  validate(policy);
  if (options.tools) validate(options.tools->faults);
  RELSIM_ASSERT(start.size() == chain.states());
  if (options.fallback) throw InputError("fallback-after: a fallback needs the model of both providers (exact_matrix)");
  const exact_detail::Steps steps = exact_detail::discrete_steps(chain);
  const exact_detail::CallMatrices c = exact_detail::call_matrices(chain.bad, policy, options.kinds, steps);
  ExactResult out = exact_detail::result_from(c, start, policy, options, 0.0);
  if (options.billing) exact_detail::add_cost(exact_detail::Route{{{chain.bad, options.kinds}}, 0}, policy, options, steps, start, out);
  return out;
}

Eigen::RowVectorXd continuous_start(const Chain& chain, const Policy& policy, const FaultWeights& kinds) {
  validate(policy);
  const exact_detail::CallMatrices c =
      exact_detail::call_matrices(chain.bad, policy, kinds, exact_detail::discrete_steps(chain));
  return exact_detail::continuous_start_of(c, chain.initial, policy.n);
}

ExactResult exact_matrix(const Model& model, const Policy& policy, const ExactOptions& options) {
  validate(policy);
  if (options.fallback) exact_detail::check_fallback(*options.fallback, options, policy, false);
  // With a fallback the hidden state holds both providers' (fallback.hpp).
  exact_detail::Route route;
  Chain chain;
  if (options.fallback) {
    FallbackChain both = fallback_chain(model, *options.fallback);
    chain = std::move(both.chain);
    route = exact_detail::Route{{{chain.bad, options.kinds}, {both.second_bad, options.fallback->kinds}},
                                options.fallback->after};
  } else {
    chain = gilbert_chain(model);
    route = exact_detail::Route{{{chain.bad, options.kinds}}, 0};
  }
  if (options.tools) validate(options.tools->faults);
  if (options.tools && model.chain == ChainScope::continuous)
    throw InputError("chain = continuous: tool calls (--tool-faults) are not supported yet with the continuous chain "
                     "scope; use --chain fresh");
  // One set of call matrices for the continuous scope's start and the task
  // itself (continuous_start and exact_matrix_from would each make their own).
  const exact_detail::Steps steps = exact_detail::discrete_steps(chain);
  const exact_detail::CallMatrices c = exact_detail::call_matrices(route, policy, steps);
  const Eigen::RowVectorXd start = model.chain == ChainScope::fresh
                                       ? Eigen::RowVectorXd(chain.initial)
                                       : exact_detail::continuous_start_of(c, chain.initial, policy.n);
  ExactResult out = exact_detail::result_from(c, start, policy, options, 0.0);
  if (options.billing) exact_detail::add_cost(route, policy, options, steps, start, out);
  out.fallback = options.fallback;
  return out;
}

namespace {

// The weights of the kinds the HTTP layer, the stream layer and no layer
// retry under `policy` (simple: the stream layer retries every kind).
struct LayerWeights {
  double pre = 0.0, stream = 0.0, fatal = 0.0;
};

LayerWeights layer_weights(const Policy& policy, const FaultWeights& kinds) {
  LayerWeights w;
  for (int k = 0; k < kFaultKinds; ++k) {
    const double weight = kinds.weight[static_cast<std::size_t>(k)];
    const Stage stage = stage_of(static_cast<FaultKind>(k));
    // A duplicated event layered takes as its answer: the task cannot end
    // done, whatever follows; for P(done) that is a fault no layer retries.
    const bool taken = policy.kind == PolicyKind::layered && static_cast<FaultKind>(k) == FaultKind::duplicate_event;
    if (stage == Stage::fatal || taken) w.fatal += weight;
    else if (stage == Stage::pre_response && policy.kind == PolicyKind::layered) w.pre += weight;
    else w.stream += weight;
  }
  return w;
}

bool covered(const Policy& policy) { return policy.kind == PolicyKind::simple || policy.kind == PolicyKind::layered; }

// The stream layer retries every kind: the classic (1 - p^(r+1))^n.
bool classic(const LayerWeights& w) { return w.pre == 0.0 && w.fatal == 0.0; }

}  // namespace

std::optional<double> independent_success(double p, const Policy& policy, const FaultWeights& kinds) {
  if (!covered(policy)) return std::nullopt;
  const LayerWeights w = layer_weights(policy, kinds);
  // Every fault retried by the stream layer: the classic form, to the last bit.
  if (classic(w)) return std::pow(1.0 - std::pow(p, policy.r + 1), static_cast<double>(policy.n));
  const double total = w.pre + w.stream + w.fatal;
  const int s = policy.kind == PolicyKind::layered ? policy.s : 0;
  const double a = p * w.pre / total, c = p * w.stream / total;
  double http = 0.0, power = 1.0;  // sum_{j=0..s} a^j
  for (int j = 0; j <= s; ++j, power *= a) http += power;
  const double good = (1.0 - p) * http, retried = c * http;
  // G (1 + C + ... + C^r), summed directly: C may be 1 (p = 1 with no other kind).
  double call = 0.0, term = good;
  for (int k = 0; k <= policy.r; ++k, term *= retried) call += term;
  return std::pow(call, static_cast<double>(policy.n));
}

std::optional<double> independent_fallback_success(const Model& model, const Policy& policy, const FaultWeights& kinds,
                                                   const Fallback& fallback) {
  const auto fatal = [](const FaultWeights& w) { return w.weight[static_cast<std::size_t>(FaultKind::http_400)] > 0.0; };
  if (policy.kind != PolicyKind::simple || !model.independent() || !fallback.second.independent() ||
      fallback.correlated() || fatal(kinds) || fatal(fallback.kinds))
    return std::nullopt;
  const int first = std::min(fallback.after, policy.r + 1);
  const double call = 1.0 - std::pow(model.p, first) * std::pow(fallback.second.p, policy.r + 1 - first);
  return std::pow(call, static_cast<double>(policy.n));
}

std::string_view independent_form(const Policy& policy, const FaultWeights& kinds) {
  if (!covered(policy)) return "";
  return classic(layer_weights(policy, kinds)) ? "(1 - p^(r+1))^n" : "(G (1 + C + ... + C^r))^n, G and C from p, s and the kinds";
}

double ExactResult::fault_share() const {
  return mean_requests > 0.0 ? mean_bad_requests / mean_requests : std::numeric_limits<double>::quiet_NaN();
}

double max_abs_diff(const ExactResult& a, const ExactResult& b) {
  double diff = std::max(std::abs(a.success - b.success), std::abs(a.env_error - b.env_error));
  // Both lists are sorted by (requests, outcome); a bin missing on one side is 0 there.
  std::size_t i = 0, j = 0;
  auto key = [](const RequestBin& x) { return std::pair{x.requests, static_cast<int>(x.outcome)}; };
  while (i < a.requests.size() || j < b.requests.size()) {
    if (j == b.requests.size() || (i < a.requests.size() && key(a.requests[i]) < key(b.requests[j]))) {
      diff = std::max(diff, a.requests[i++].probability);
    } else if (i == a.requests.size() || key(b.requests[j]) < key(a.requests[i])) {
      diff = std::max(diff, b.requests[j++].probability);
    } else {
      diff = std::max(diff, std::abs(a.requests[i++].probability - b.requests[j++].probability));
    }
  }
  return diff;
}

}  // namespace relsim
