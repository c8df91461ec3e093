#include "relsim/enumerate.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "relsim/error.hpp"

namespace relsim {
namespace {

// A sequence is read as bits, request 0 in the most significant place, 1 for
// bad. Policy states: 0 .. L-1 is "active, in call c at attempt a" encoded as
// c (r + 1) + a; L + bin is "ended, in this bin", where bin = outcome (L + 1)
// + requests.
struct Layout {
  int n, r, length;
  int bins() const { return 2 * (length + 1); }
  int active(int call, int attempt) const { return call * (r + 1) + attempt; }
  int ended(Outcome outcome, int requests) const {
    return length + (outcome == Outcome::done ? 0 : length + 1) + requests;
  }
  // The simple policy reads request number `depth` (0-based), bad or good.
  int step(int state, int depth, bool bad) const {
    if (state >= length) return state;
    const int call = state / (r + 1), attempt = state % (r + 1);
    if (!bad) return call + 1 == n ? ended(Outcome::done, depth + 1) : active(call + 1, 0);
    return attempt < r ? active(call, attempt + 1) : ended(Outcome::env_error, depth + 1);
  }
};

// Neumaier's compensated sum, so the fixed-order reduction over blocks loses
// nothing to the number of blocks.
struct CompensatedSum {
  double sum = 0.0, carry = 0.0;
  void add(double x) {
    const double t = sum + x;
    carry += std::abs(sum) >= std::abs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  double value() const { return sum + carry; }
};

struct Histogram {
  std::vector<double> mass;  // by bin
  std::vector<char> hit;     // a sequence of positive weight landed here
};

// The forward step of the chain: the hidden-state vector at the next request,
// jointly with this request having been `bad` (or good).
void forward(const Chain& chain, const double* alpha, bool bad, double* out) {
  const Eigen::Index k = chain.states();
  const Eigen::MatrixXd& t = bad ? chain.retry : chain.gap;
  for (Eigen::Index j = 0; j < k; ++j) out[j] = 0.0;
  for (Eigen::Index i = 0; i < k; ++i) {
    const double a = alpha[i] * (bad ? chain.bad(i) : 1.0 - chain.bad(i));
    for (Eigen::Index j = 0; j < k; ++j) out[j] += a * t(i, j);
  }
}

// Enumerates every sequence of length L from start vector `start`. The tree of
// prefixes is cut into 2^top_bits blocks (a number fixed by L alone, never by
// the thread count); inside a block the prefix weight is carried down the
// tree, one forward step per node, and the last `tail_bits` requests come from
// tables: a leaf's weight is alpha . tail[bits], its bin table[state][bits].
Histogram enumerate_from(const Chain& chain, const Eigen::RowVectorXd& start, const Layout& lay, int threads) {
  const int L = lay.length;
  const int k = static_cast<int>(chain.states());
  const int tail_bits = std::min(L, 10);
  const int depth_tail = L - tail_bits;  // depth at which the tables take over
  const int top_bits = std::min(depth_tail, 12);
  const std::size_t tail_size = std::size_t{1} << tail_bits;
  const int nb = lay.bins();

  // tail[i * tail_size + bits] = P(the tail emits bits | hidden state i at depth_tail).
  std::vector<double> tail(static_cast<std::size_t>(k) * tail_size);
  {
    std::vector<double> t(static_cast<std::size_t>(k), 1.0), u(static_cast<std::size_t>(k));
    for (std::size_t bits = 0; bits < tail_size; ++bits) {
      // Build from the last request backwards: t <- e_x (T_x t).
      std::fill(t.begin(), t.end(), 1.0);
      for (int pos = tail_bits - 1; pos >= 0; --pos) {
        const bool bad = (bits >> (tail_bits - 1 - pos)) & 1U;
        const bool last = pos == tail_bits - 1;
        for (int i = 0; i < k; ++i) {
          double s = 0.0;
          if (last) s = 1.0;
          else {
            const Eigen::MatrixXd& m = bad ? chain.retry : chain.gap;
            for (int j = 0; j < k; ++j) s += m(i, j) * t[static_cast<std::size_t>(j)];
          }
          u[static_cast<std::size_t>(i)] = s * (bad ? chain.bad(i) : 1.0 - chain.bad(i));
        }
        t.swap(u);
      }
      for (int i = 0; i < k; ++i) tail[static_cast<std::size_t>(i) * tail_size + bits] = t[static_cast<std::size_t>(i)];
    }
  }
  // table[state * tail_size + bits]: the bin a leaf lands in, for active states.
  std::vector<int> table(static_cast<std::size_t>(L) * tail_size);
  for (int state = 0; state < L; ++state)
    for (std::size_t bits = 0; bits < tail_size; ++bits) {
      int s = state;
      for (int pos = 0; pos < tail_bits; ++pos)
        s = lay.step(s, depth_tail + pos, (bits >> (tail_bits - 1 - pos)) & 1U);
      RELSIM_ASSERT(s >= L);  // every sequence of full length ends the task
      table[static_cast<std::size_t>(state) * tail_size + bits] = s - L;
    }

  const std::size_t blocks = std::size_t{1} << top_bits;
  std::vector<double> block_mass(blocks * static_cast<std::size_t>(nb), 0.0);
  std::vector<char> block_hit(blocks * static_cast<std::size_t>(nb), 0);

#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > 0 ? threads : omp_get_max_threads())
  for (std::size_t block = 0; block < blocks; ++block) {
    double* mass = block_mass.data() + block * static_cast<std::size_t>(nb);
    char* hit = block_hit.data() + block * static_cast<std::size_t>(nb);
    std::vector<double> local(static_cast<std::size_t>(nb));
    // alpha at each depth from top_bits to depth_tail, k entries each.
    std::vector<double> alpha(static_cast<std::size_t>((L + 1) * k));
    std::vector<int> state(static_cast<std::size_t>(L + 1));
    for (int i = 0; i < k; ++i) alpha[static_cast<std::size_t>(i)] = start(i);
    state[0] = 0;
    for (int d = 0; d < top_bits; ++d) {
      const bool bad = (block >> (top_bits - 1 - d)) & 1U;
      forward(chain, &alpha[static_cast<std::size_t>(d * k)], bad, &alpha[static_cast<std::size_t>((d + 1) * k)]);
      state[static_cast<std::size_t>(d + 1)] = lay.step(state[static_cast<std::size_t>(d)], d, bad);
    }
    // Walk the middle levels in order: the subtree index counts 0 .. 2^mid - 1,
    // and only the levels below the highest changed bit are recomputed.
    const int mid = depth_tail - top_bits;
    const std::uint64_t subtrees = std::uint64_t{1} << mid;
    for (std::uint64_t sub = 0; sub < subtrees; ++sub) {
      int from = top_bits;
      if (sub > 0) {
        const std::uint64_t changed = sub ^ (sub - 1);
        from = depth_tail - (64 - __builtin_clzll(changed));
      }
      for (int d = from; d < depth_tail; ++d) {
        const bool bad = (sub >> (depth_tail - 1 - d)) & 1U;
        forward(chain, &alpha[static_cast<std::size_t>(d * k)], bad, &alpha[static_cast<std::size_t>((d + 1) * k)]);
        state[static_cast<std::size_t>(d + 1)] = lay.step(state[static_cast<std::size_t>(d)], d, bad);
      }
      const double* a = &alpha[static_cast<std::size_t>(depth_tail * k)];
      const int s = state[static_cast<std::size_t>(depth_tail)];
      if (s >= L) {
        // The task has ended: every leaf below lands in one bin. Four running
        // sums break the add-latency chain; their order is fixed.
        double acc[4] = {0, 0, 0, 0};
        bool positive = false;
        for (std::size_t bits = 0; bits < tail_size; ++bits) {
          double w = 0.0;
          for (int i = 0; i < k; ++i) w += a[i] * tail[static_cast<std::size_t>(i) * tail_size + bits];
          acc[bits & 3] += w;
          positive |= w > 0.0;
        }
        const double total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        mass[s - L] += total;
        hit[s - L] |= positive;
      } else {
        std::fill(local.begin(), local.end(), 0.0);
        const int* row = &table[static_cast<std::size_t>(s) * tail_size];
        if (k == 2) {
          const double a0 = a[0], a1 = a[1];
          const double* t0 = tail.data();
          const double* t1 = tail.data() + tail_size;
          for (std::size_t bits = 0; bits < tail_size; ++bits) {
            const double w = a0 * t0[bits] + a1 * t1[bits];
            local[static_cast<std::size_t>(row[bits])] += w;
            hit[row[bits]] |= w > 0.0;
          }
        } else {
          for (std::size_t bits = 0; bits < tail_size; ++bits) {
            double w = 0.0;
            for (int i = 0; i < k; ++i) w += a[i] * tail[static_cast<std::size_t>(i) * tail_size + bits];
            local[static_cast<std::size_t>(row[bits])] += w;
            hit[row[bits]] |= w > 0.0;
          }
        }
        for (int b = 0; b < nb; ++b) mass[b] += local[static_cast<std::size_t>(b)];
      }
    }
  }

  Histogram h{std::vector<double>(static_cast<std::size_t>(nb)), std::vector<char>(static_cast<std::size_t>(nb), 0)};
  for (int b = 0; b < nb; ++b) {
    CompensatedSum sum;
    for (std::size_t block = 0; block < blocks; ++block) {
      sum.add(block_mass[block * static_cast<std::size_t>(nb) + static_cast<std::size_t>(b)]);
      h.hit[static_cast<std::size_t>(b)] |= block_hit[block * static_cast<std::size_t>(nb) + static_cast<std::size_t>(b)];
    }
    h.mass[static_cast<std::size_t>(b)] = sum.value();
  }
  return h;
}

Layout checked_layout(const Model& model, const Policy& policy, const EnumerateOptions& options) {
  validate(model);
  validate(policy);
  if (options.max_length < 1 || options.max_length > kHardMaxEnumerateLength)
    throw InputError(fmt::format("max-length = {} is out of range: it must be in [1, {}]", options.max_length,
                                 kHardMaxEnumerateLength));
  const std::int64_t length = policy.max_requests();
  if (length > options.max_length)
    throw InputError(fmt::format(
        "enumeration of n(r+1) = {} requests means 2^{} sequences, above the limit of length {}: "
        "use --method matrix (or raise --max-length, at most {})",
        length, length, options.max_length, kHardMaxEnumerateLength));
  if (options.threads < 0)
    throw InputError(fmt::format("threads = {} is out of range: threads must be >= 0 (0: OpenMP's default)",
                                 options.threads));
  return Layout{static_cast<int>(policy.n), policy.r, static_cast<int>(length)};
}

ExactResult to_result(const Histogram& h, const Layout& lay, std::string method) {
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
  out.log10_success = std::log10(out.success);
  return out;
}

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

}  // namespace

ExactResult exact_enumerate(const Model& model, const Policy& policy, const EnumerateOptions& options) {
  const Layout lay = checked_layout(model, policy, options);
  const Chain chain = gilbert_chain(model);
  const Histogram h = by_scope(model, chain, [&](const Eigen::RowVectorXd& start) {
    return enumerate_from(chain, start, lay, options.threads);
  });
  return to_result(h, lay, "enumerate");
}

ExactResult exact_enumerate_naive(const Model& model, const Policy& policy, const EnumerateOptions& options) {
  const Layout lay = checked_layout(model, policy, options);
  const Chain chain = gilbert_chain(model);
  const int k = static_cast<int>(chain.states());
  const Histogram h = by_scope(model, chain, [&](const Eigen::RowVectorXd& start) {
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
          forward(chain, alpha.data(), bad, next.data());
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
  });
  return to_result(h, lay, "enumerate-naive");
}

}  // namespace relsim
