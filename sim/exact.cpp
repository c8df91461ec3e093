#include "relsim/exact.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "relsim/error.hpp"

namespace relsim {
namespace {

// The per-call transfer matrices of the simple policy. Row vectors hold the
// distribution of the hidden state at a call's first request; D_bad and
// D_good are the diagonal emission matrices, R = chain.retry, G = chain.gap.
// A call that meets a bad requests and then a good one maps v to
// v (D_bad R)^a D_good G: the state at the next call's first request.
struct CallMatrices {
  std::vector<Eigen::MatrixXd> succeed_at;  // S_a = (D_bad R)^a D_good G, a = 0..r
  std::vector<double> succeed_flat;         // S_a(i, j) at [(a k + i) k + j], for the distribution loop
  Eigen::MatrixXd advance;                  // sum over a of S_a
  Eigen::VectorXd success_col;              // advance * 1: P(call succeeds | state)
  Eigen::VectorXd fail_col;                 // (D_bad R)^r D_bad * 1: P(call fails | state)
  Eigen::MatrixXd fail_exit;                // (D_bad R)^r D_bad G: state after a failed call
  Eigen::VectorXd attempts_col;             // sum_a (D_bad R)^a * 1: E[attempts | state]
  // Max-plus view for the worst case: most requests a call can take from
  // state i to state j on a path of positive probability (-1: none).
  Eigen::MatrixXi most_on_success;
  Eigen::VectorXi most_on_failure;
};

Eigen::MatrixXd positive_pattern(const Eigen::MatrixXd& m) {
  return (m.array() > 0.0).cast<double>().matrix();
}

CallMatrices call_matrices(const Chain& chain, int r) {
  const Eigen::Index k = chain.states();
  const Eigen::MatrixXd d_bad = chain.bad.asDiagonal();
  const Eigen::MatrixXd d_good = (Eigen::VectorXd::Ones(k) - chain.bad).asDiagonal();
  const Eigen::MatrixXd bad_step = d_bad * chain.retry;
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(k);

  CallMatrices c;
  c.advance = Eigen::MatrixXd::Zero(k, k);
  c.attempts_col = Eigen::VectorXd::Zero(k);
  c.most_on_success = Eigen::MatrixXi::Constant(k, k, -1);
  // Positivity is tracked on 0/1 patterns, not on the probabilities, so a
  // path whose probability underflows still counts towards the worst case.
  const Eigen::MatrixXd bad_step_pattern = positive_pattern(bad_step);
  const Eigen::MatrixXd finish_pattern = positive_pattern(d_good * chain.gap);
  Eigen::MatrixXd reach = Eigen::MatrixXd::Identity(k, k);          // (D_bad R)^a
  Eigen::MatrixXd reach_pattern = Eigen::MatrixXd::Identity(k, k);  // its support
  for (int a = 0; a <= r; ++a) {
    c.attempts_col += reach * ones;
    c.succeed_at.push_back(reach * d_good * chain.gap);
    c.advance += c.succeed_at.back();
    const Eigen::MatrixXd finish = positive_pattern(reach_pattern * finish_pattern);
    for (Eigen::Index i = 0; i < k; ++i)
      for (Eigen::Index j = 0; j < k; ++j)
        if (finish(i, j) > 0.0) c.most_on_success(i, j) = a + 1;
    if (a < r) {
      reach = reach * bad_step;
      reach_pattern = positive_pattern(reach_pattern * bad_step_pattern);
    }
  }
  for (const auto& m : c.succeed_at)
    for (Eigen::Index i = 0; i < k; ++i)
      for (Eigen::Index j = 0; j < k; ++j) c.succeed_flat.push_back(m(i, j));
  c.success_col = c.advance * ones;
  c.fail_col = reach * d_bad * ones;
  c.fail_exit = reach * d_bad * chain.gap;
  const Eigen::VectorXd fail_pattern = positive_pattern(reach_pattern * positive_pattern(d_bad)) * ones;
  c.most_on_failure = Eigen::VectorXi::Constant(k, -1);
  for (Eigen::Index i = 0; i < k; ++i)
    if (fail_pattern(i) > 0.0) c.most_on_failure(i) = r + 1;
  return c;
}

// Everything but the distribution, with the forward vector renormalised at
// every call (the scaling of Rabiner 1989 for hidden Markov models), so
// log10 P(success) stays exact where P(success) underflows.
struct Totals {
  double success = 0.0;
  double log10_success = 0.0;
  double env_error = 0.0;
  double mean_requests = 0.0;
  Eigen::RowVectorXd exit;  // state at the next task's first request (unnormalised)
};

Totals totals(const CallMatrices& c, const Eigen::RowVectorXd& start, std::int64_t n, bool want_exit) {
  Totals t;
  const Eigen::Index k = start.size();
  Eigen::RowVectorXd v = start / start.sum();
  Eigen::RowVectorXd next(k);
  if (want_exit) t.exit = Eigen::RowVectorXd::Zero(k);
  double alive = 1.0;  // P(every call so far succeeded); may underflow, log10 does not
  for (std::int64_t j = 0; j < n; ++j) {
    const double attempts = v.dot(c.attempts_col);
    const double fail = v.dot(c.fail_col);
    t.mean_requests += alive * attempts;
    t.env_error += alive * fail;
    if (want_exit && alive > 0.0 && fail > 0.0) t.exit.noalias() += alive * (v * c.fail_exit);
    next.noalias() = v * c.advance;
    const double s = next.sum();
    if (!(s > 0.0)) {
      t.success = 0.0;
      t.log10_success = -std::numeric_limits<double>::infinity();
      return t;
    }
    t.log10_success += std::log10(s);
    alive *= s;
    v = next / s;
  }
  // Below about 1e-300 the running product has lost digits to denormals;
  // the sum of logarithms has not.
  t.success = t.log10_success < -300.0 ? std::pow(10.0, t.log10_success) : alive;
  if (want_exit) t.exit += alive * v;
  return t;
}

std::int64_t worst_case(const CallMatrices& c, const Eigen::RowVectorXd& start, std::int64_t n) {
  const Eigen::Index k = start.size();
  // best(i): most requests so far on a positive path whose next call starts in state i.
  std::vector<std::int64_t> best(k, -1), next(k);
  for (Eigen::Index i = 0; i < k; ++i)
    if (start(i) > 0.0) best[i] = 0;
  std::int64_t most = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    std::fill(next.begin(), next.end(), -1);
    bool any = false;
    for (Eigen::Index i = 0; i < k; ++i) {
      if (best[i] < 0) continue;
      if (c.most_on_failure(i) >= 0) most = std::max(most, best[i] + c.most_on_failure(i));
      for (Eigen::Index l = 0; l < k; ++l)
        if (c.most_on_success(i, l) >= 0) {
          next[l] = std::max(next[l], best[i] + c.most_on_success(i, l));
          any = true;
        }
    }
    best.swap(next);
    if (!any) return most;
  }
  for (auto b : best) most = std::max(most, b);
  return most;
}

// The distribution of requests per task: the forward vectors split by the
// number of extra requests (beyond one per call) so far. Its ends are
// trimmed where their mass falls below options.prune_below, and the whole
// is given up when it would cost more than options.max_distribution_work.
void distribution(const CallMatrices& c, const Eigen::RowVectorXd& start, const Policy& policy,
                  const ExactOptions& options, ExactResult& out) {
  const Eigen::Index k = start.size();
  const int r = policy.r;
  const double per_bin = static_cast<double>(r + 1) * static_cast<double>(k * k);
  constexpr std::size_t kMaxBins = 20'000'000;

  // cur holds bins lo..lo+width-1 of the extra-request count, k entries each.
  std::vector<double> cur(start.data(), start.data() + k), next;
  std::int64_t lo = 0;
  std::vector<double> env;  // env[m]: P(env_error after exactly m requests)
  double work = 0.0;
  auto fail_out = [&] {
    out.requests.clear();
    out.distribution_complete = false;
  };
  for (std::int64_t j = 0; j < policy.n; ++j) {
    const std::int64_t width = static_cast<std::int64_t>(cur.size()) / k;
    if (width == 0) break;
    work += static_cast<double>(width) * per_bin;
    if (work > options.max_distribution_work) return fail_out();
    next.assign(static_cast<std::size_t>((width + r) * k), 0.0);
    for (std::int64_t e = 0; e < width; ++e) {
      Eigen::Map<const Eigen::RowVectorXd> u(cur.data() + e * k, k);
      if (const double fail = u.dot(c.fail_col); fail > 0.0) {
        const auto m = static_cast<std::size_t>(j + lo + e + r + 1);
        if (m >= kMaxBins) return fail_out();
        if (env.size() <= m) env.resize(m + 1, 0.0);
        env[m] += fail;
      }
    }
    // next[e + a] += cur[e] S_a, as one streaming loop over e per (a, i, j)
    // so that it vectorises.
    for (int a = 0; a <= r; ++a)
      for (Eigen::Index i = 0; i < k; ++i)
        for (Eigen::Index jj = 0; jj < k; ++jj) {
          const double s = c.succeed_flat[static_cast<std::size_t>((a * k + i) * k + jj)];
          if (s == 0.0) continue;
          const double* src = cur.data() + i;
          double* dst = next.data() + a * k + jj;
          for (std::int64_t e = 0; e < width; ++e) dst[e * k] += src[e * k] * s;
        }
    // Trim negligible ends.
    std::int64_t first = 0, last = width + r - 1;
    auto mass = [&](std::int64_t e) {
      double s = 0.0;
      for (Eigen::Index i = 0; i < k; ++i) s += next[static_cast<std::size_t>(e * k + i)];
      return s;
    };
    while (first <= last && mass(first) < options.prune_below) out.pruned_mass += mass(first++);
    while (last >= first && mass(last) < options.prune_below) out.pruned_mass += mass(last--);
    cur.assign(next.begin() + first * k, next.begin() + (last + 1) * k);
    lo += first;
  }
  // Bins in order of requests, done before env_error at equal counts.
  const std::int64_t width = static_cast<std::int64_t>(cur.size()) / k;
  std::vector<RequestBin> done;
  for (std::int64_t e = 0; e < width; ++e) {
    double s = 0.0;
    for (Eigen::Index i = 0; i < k; ++i) s += cur[static_cast<std::size_t>(e * k + i)];
    if (s > 0.0) done.push_back({policy.n + lo + e, Outcome::done, s});
  }
  std::size_t d = 0;
  for (std::size_t m = 0; m < env.size(); ++m) {
    while (d < done.size() && done[d].requests <= static_cast<std::int64_t>(m)) out.requests.push_back(done[d++]);
    if (env[m] > 0.0) out.requests.push_back({static_cast<std::int64_t>(m), Outcome::env_error, env[m]});
  }
  while (d < done.size()) out.requests.push_back(done[d++]);
}

}  // namespace

ExactResult exact_matrix_from(const Chain& chain, const Eigen::RowVectorXd& start, const Policy& policy,
                              const ExactOptions& options) {
  validate(policy);
  RELSIM_ASSERT(start.size() == chain.states());
  const CallMatrices c = call_matrices(chain, policy.r);
  const Totals t = totals(c, start, policy.n, false);
  ExactResult out;
  out.method = "matrix";
  out.success = t.success;
  out.log10_success = t.log10_success;
  out.env_error = t.env_error;
  out.mean_requests = t.mean_requests;
  out.max_requests = worst_case(c, start, policy.n);
  if (options.distribution) distribution(c, start / start.sum(), policy, options, out);
  else out.distribution_complete = false;
  return out;
}

Eigen::RowVectorXd continuous_start(const Chain& chain, const Policy& policy) {
  validate(policy);
  const CallMatrices c = call_matrices(chain, policy.r);
  const Eigen::Index k = chain.states();
  // K(i, j): P(the next task's first request is in state j | this task's is in i).
  Eigen::MatrixXd K(k, k);
  for (Eigen::Index i = 0; i < k; ++i) {
    const Eigen::RowVectorXd unit = Eigen::RowVectorXd::Unit(k, i);
    const Totals t = totals(c, unit, policy.n, true);
    K.row(i) = t.exit / t.exit.sum();
  }
  return long_run_distribution(K, chain.initial);
}

ExactResult exact_matrix(const Model& model, const Policy& policy, const ExactOptions& options) {
  const Chain chain = gilbert_chain(model);
  const Eigen::RowVectorXd start =
      model.chain == ChainScope::fresh ? chain.initial : continuous_start(chain, policy);
  return exact_matrix_from(chain, start, policy, options);
}

double independent_success(double p, const Policy& policy) {
  return std::pow(1.0 - std::pow(p, policy.r + 1), static_cast<double>(policy.n));
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
