// Brute-force enumeration (enumerate.hpp): input checks, the chain scope
// (fresh, or continuous through the task-to-task matrix), the histogram read
// as an ExactResult, and the naive enumeration the fast one is measured
// against. The fast enumeration itself is enumerate_kernel.cpp.
#include "relsim/exact/enumerate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "exact/enumerate_kernel.hpp"

namespace relsim {
namespace {

using enumeration::CompensatedSum;
using enumeration::Histogram;
using enumeration::Layout;

Layout checked_layout(const Model& model, const Policy& policy, const EnumerateOptions& options) {
  validate(model);
  validate(policy);
  if (options.max_length < 1 || options.max_length > kHardMaxEnumerateLength)
    throw InputError(fmt::format("max-length = {} is out of range: it must be in [1, {}]", options.max_length,
                                 kHardMaxEnumerateLength));
  if (policy.kind != PolicyKind::simple)
    throw InputError(fmt::format("enumeration covers the simple policy only, not policy = {}: use --method matrix",
                                 to_string(policy.kind)));
  const std::int64_t length = policy.max_requests();
  if (length > options.max_length)
    throw InputError(fmt::format(
        "enumeration of n(r+1) = {} requests means 2^{} sequences, above the limit of length {}: "
        "use --method matrix (or raise --max-length, at most {})",
        length, length, options.max_length, kHardMaxEnumerateLength));
  if (options.threads < 0)
    throw InputError(fmt::format("threads = {} is out of range: threads must be >= 0 (0: OpenMP's default)",
                                 options.threads));
  options.kinds.checked_total();
  for (int k = 0; k < kFaultKinds; ++k)
    if (options.kinds.weight[static_cast<std::size_t>(k)] > 0.0 && stage_of(static_cast<FaultKind>(k)) == Stage::fatal)
      throw InputError(fmt::format("enumeration covers retryable fault kinds only, not {} (it ends the task at "
                                   "once): use --method matrix",
                                   to_string(static_cast<FaultKind>(k))));
  return Layout{static_cast<int>(policy.n), policy.r, static_cast<int>(length)};
}

// The histogram as an ExactResult: its bins in ExactResult's order (by
// requests, then done before env_error), the totals summed compensated.
// env_error is split over the kinds in proportion to their weights: the
// kind of a failed call's last request is drawn independently of the chain.
ExactResult to_result(const Histogram& h, const Layout& lay, const FaultWeights& kinds, std::string method) {
  ExactResult out;
  out.method = std::move(method);
  CompensatedSum success, env, mean;
  for (int m = 0; m <= lay.length; ++m)
    for (Outcome o : {Outcome::done, Outcome::env_error}) {
      const auto b = static_cast<std::size_t>(lay.ended(o, m) - lay.length);
      const double x = h.mass[b];
      if (h.hit[b]) out.max_requests = std::max<std::int64_t>(out.max_requests, m);
      if (x <= 0.0) continue;
      out.requests.push_back({m, o, x});
      (o == Outcome::done ? success : env).add(x);
      mean.add(x * m);
    }
  out.success = success.value();
  out.env_error = env.value();
  out.mean_requests = mean.value();
  // A bin's request count does not say how many of its requests were bad.
  out.mean_bad_requests = std::numeric_limits<double>::quiet_NaN();
  out.log10_success = std::log10(out.success);
  out.outcomes[static_cast<std::size_t>(index_of(OutcomeClass{Outcome::done, std::nullopt}))] = out.success;
  const double total = kinds.total();
  for (int k = 0; k < kFaultKinds; ++k)
    if (const double w = kinds.weight[static_cast<std::size_t>(k)]; w > 0.0)
      out.outcomes[static_cast<std::size_t>(index_of(OutcomeClass{Outcome::env_error, static_cast<FaultKind>(k)}))] =
          out.env_error * (w / total);
  return out;
}

// sum_i weights(i) parts[i], bin by bin.
Histogram combine(const std::vector<Histogram>& parts, const Eigen::RowVectorXd& weights) {
  Histogram h{std::vector<double>(parts[0].mass.size(), 0.0), std::vector<char>(parts[0].mass.size(), 0)};
  for (std::size_t b = 0; b < h.mass.size(); ++b)
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (weights(static_cast<Eigen::Index>(i)) > 0.0) {
        h.mass[b] += weights(static_cast<Eigen::Index>(i)) * parts[i].mass[b];
        h.hit[b] |= parts[i].hit[b];
      }
  return h;
}

// Runs `one(start)` for the model's scope. Continuous: the enumeration is
// linear in its start vector, so it is run from each hidden state; the
// outcome tells the hidden state of a task's last request (good after done,
// bad after env_error), which gives the task-to-task matrix K and its
// long-run start distribution.
template <class One>
Histogram by_scope(const Model& model, const Chain& chain, One one) {
  if (model.chain == ChainScope::fresh) return one(chain.initial);
  RELSIM_ASSERT(chain.deterministic_emissions() && chain.states() == 2);
  std::vector<Histogram> parts;
  Eigen::MatrixXd K(2, 2);
  for (Eigen::Index i = 0; i < 2; ++i) {
    parts.push_back(one(Eigen::RowVectorXd::Unit(2, i)));
    double done = 0.0, env = 0.0;
    const std::size_t half = parts.back().mass.size() / 2;
    for (std::size_t b = 0; b < half; ++b) done += parts.back().mass[b];
    for (std::size_t b = half; b < 2 * half; ++b) env += parts.back().mass[b];
    K.row(i) = (done * chain.gap.row(0) + env * chain.gap.row(1)) / (done + env);
  }
  return combine(parts, long_run_distribution(K, chain.initial));
}

// Each sequence's probability recomputed from scratch, one forward step per
// request, and added to its bin.
Histogram naive_from(const Chain& chain, const Eigen::RowVectorXd& start, const Layout& lay) {
  const int k = static_cast<int>(chain.states());
  Histogram out{std::vector<double>(static_cast<std::size_t>(lay.bins()), 0.0),
                std::vector<char>(static_cast<std::size_t>(lay.bins()), 0)};
  std::vector<double> alpha(static_cast<std::size_t>(k)), next(static_cast<std::size_t>(k));
  const std::uint64_t count = std::uint64_t{1} << lay.length;
  for (std::uint64_t seq = 0; seq < count; ++seq) {
    for (int i = 0; i < k; ++i) alpha[static_cast<std::size_t>(i)] = start(i);
    int state = 0;
    double weight = 0.0;
    for (int d = 0; d < lay.length; ++d) {
      const bool bad = (seq >> (lay.length - 1 - d)) & 1U;
      state = lay.step(state, d, bad);
      if (d + 1 < lay.length) {
        enumeration::forward(chain, alpha.data(), bad, next.data());
        alpha.swap(next);
      } else {
        for (int i = 0; i < k; ++i)
          weight += alpha[static_cast<std::size_t>(i)] * (bad ? chain.bad(i) : 1.0 - chain.bad(i));
      }
    }
    out.mass[static_cast<std::size_t>(state - lay.length)] += weight;
    out.hit[static_cast<std::size_t>(state - lay.length)] |= weight > 0.0;
  }
  return out;
}

}  // namespace

ExactResult exact_enumerate(const Model& model, const Policy& policy, const EnumerateOptions& options,
                            const parallel::Share& share) {
  const Layout lay = checked_layout(model, policy, options);
  const Chain chain = gilbert_chain(model);
  const Histogram h = by_scope(model, chain, [&](const Eigen::RowVectorXd& start) {
    return enumeration::enumerate_from(chain, start, lay, options.threads, share);
  });
  return to_result(h, lay, options.kinds, "enumerate");
}

ExactResult exact_enumerate_naive(const Model& model, const Policy& policy, const EnumerateOptions& options) {
  const Layout lay = checked_layout(model, policy, options);
  const Chain chain = gilbert_chain(model);
  const Histogram h =
      by_scope(model, chain, [&](const Eigen::RowVectorXd& start) { return naive_from(chain, start, lay); });
  return to_result(h, lay, options.kinds, "enumerate-naive");
}

}  // namespace relsim
