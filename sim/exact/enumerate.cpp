#include "relsim/exact/enumerate.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

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
  if (k == 2) {  // the same operations as below, unrolled for Gilbert's chain
    const double a0 = alpha[0] * (bad ? chain.bad(0) : 1.0 - chain.bad(0));
    const double a1 = alpha[1] * (bad ? chain.bad(1) : 1.0 - chain.bad(1));
    out[0] = a0 * t(0, 0) + a1 * t(1, 0);
    out[1] = a0 * t(0, 1) + a1 * t(1, 1);
    return;
  }
  for (Eigen::Index j = 0; j < k; ++j) out[j] = 0.0;
  for (Eigen::Index i = 0; i < k; ++i) {
    const double a = alpha[i] * (bad ? chain.bad(i) : 1.0 - chain.bad(i));
    for (Eigen::Index j = 0; j < k; ++j) out[j] += a * t(i, j);
  }
}

// How the leaves below one node at depth_tail land in bins, for one policy
// state there. Leaf `bits` (the last tail_bits requests) has weight
// alpha . tail[.][bits]. The leaves are regrouped so that each bin's leaves lie
// side by side, padded with zero weights to a multiple of kLanes: a bin's mass
// is then a streaming sum with kLanes independent partial sums instead of a
// scatter into memory whose add latency chains through the same bin.
//
// Sparse form, when every leaf has at most one hidden state i with
// tail[i][bits] != 0 (Gilbert's chain, whose emissions are certain: the first
// tail request's value is the hidden state): the leaf's weight is
// alpha_i * tail[i][bits], one product, and the groups are (bin, i). The
// other terms of alpha . tail are exact zeros, so the weight is the same
// double. Dense form otherwise: k products per leaf, groups by bin.
constexpr std::size_t kLanes = 8;

struct Group {
  int bin;     // ended-state bin (an offset from L); for the ended plan, unused
  int state;   // sparse form: the hidden state i; dense form: unused (-1)
  std::uint32_t begin, end;  // [begin, end) in the plan's weights, end - begin a multiple of kLanes
};

struct TailPlan {
  std::vector<Group> groups;
  std::vector<double> weights;  // sparse: one value per slot; dense: k rows of `stride`
  std::size_t stride = 0;
};

// Sum over the leaves of a group with kLanes partial sums (lane l takes the
// slots j = l mod kLanes), added in a fixed order: the bits depend on the
// group alone. The lanes are held as four pairs of doubles, a GCC/Clang
// vector type that is one SSE2 register, so that each instruction does two
// leaves; per lane the arithmetic is the scalar one.
using Pair = double __attribute__((vector_size(16)));

inline Pair load_pair(const double* p) {
  Pair v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline double lane_sum(const Pair (&acc)[kLanes / 2]) {
  return ((acc[0][0] + acc[0][1]) + (acc[1][0] + acc[1][1])) + ((acc[2][0] + acc[2][1]) + (acc[3][0] + acc[3][1]));
}

inline double group_mass_sparse(double a, const double* w, std::uint32_t begin, std::uint32_t end) {
  const Pair av = {a, a};
  Pair acc[kLanes / 2] = {};
  for (std::uint32_t j = begin; j < end; j += kLanes)
    for (std::size_t l = 0; l < kLanes / 2; ++l) acc[l] += av * load_pair(w + j + 2 * l);
  return lane_sum(acc);
}

inline double group_mass_dense(const double* alpha, int k, const double* w, std::size_t stride, std::uint32_t begin,
                               std::uint32_t end) {
  Pair acc[kLanes / 2] = {};
  for (std::uint32_t j = begin; j < end; j += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) {
      double x = 0.0;
      for (int i = 0; i < k; ++i) x += alpha[i] * w[static_cast<std::size_t>(i) * stride + j + l];
      acc[l / 2][l % 2] += x;
    }
  return lane_sum(acc);
}

// Builds the plan from each leaf's bin (`bin_of[bits]`, below nb) and the
// tail table tail[i * tail_size + bits]. Groups come in order of bin, then
// (sparse) hidden state; inside a group the leaves keep the order of bits.
TailPlan make_plan(const std::vector<double>& tail, int k, std::size_t tail_size, const std::vector<int>& bin_of,
                   int nb, bool sparse) {
  const int per_bin = sparse ? k : 1;
  std::vector<int> key(tail_size);
  std::vector<std::uint32_t> count(static_cast<std::size_t>(nb * per_bin), 0);
  for (std::size_t bits = 0; bits < tail_size; ++bits) {
    int state = 0;
    if (sparse)
      for (int i = 0; i < k; ++i)
        if (tail[static_cast<std::size_t>(i) * tail_size + bits] != 0.0) state = i;
    key[bits] = bin_of[bits] * per_bin + state;
    ++count[static_cast<std::size_t>(key[bits])];
  }
  TailPlan plan;
  std::vector<std::uint32_t> fill(count.size());
  std::uint32_t used = 0;
  for (std::size_t c = 0; c < count.size(); ++c) {
    if (count[c] == 0) continue;
    const auto padded = static_cast<std::uint32_t>((count[c] + kLanes - 1) / kLanes * kLanes);
    plan.groups.push_back({static_cast<int>(c) / per_bin, sparse ? static_cast<int>(c) % per_bin : -1, used,
                           used + padded});
    fill[c] = used;
    used += padded;
  }
  plan.stride = used;
  const int rows = sparse ? 1 : k;
  plan.weights.assign(static_cast<std::size_t>(rows) * plan.stride, 0.0);  // padding weighs 0
  for (std::size_t bits = 0; bits < tail_size; ++bits) {
    const auto c = static_cast<std::size_t>(key[bits]);
    const std::size_t j = fill[c]++;
    if (sparse) plan.weights[j] = tail[static_cast<std::size_t>(key[bits] % per_bin) * tail_size + bits];
    else
      for (int i = 0; i < k; ++i)
        plan.weights[static_cast<std::size_t>(i) * plan.stride + j] =
            tail[static_cast<std::size_t>(i) * tail_size + bits];
  }
  return plan;
}

// Enumerates every sequence of length L from start vector `start`. The tree of
// prefixes is cut into 2^top_bits blocks (a number fixed by L alone, never by
// the thread count); inside a block the prefix weight is carried down the
// tree, one forward step per node, and the last `tail_bits` requests come from
// tables: a leaf's weight is alpha . tail[bits], its bin given by the policy
// state at depth_tail and the bits (see TailPlan). Each block sums into its
// own row of bins, and the rows are added in block order, so the bits do not
// depend on which thread ran which block.
Histogram enumerate_from(const Chain& chain, const Eigen::RowVectorXd& start, const Layout& lay, int threads,
                         const parallel::Share& share) {
  const int L = lay.length;
  const int k = static_cast<int>(chain.states());
  const int tail_bits = std::min(L, 12);
  const int depth_tail = L - tail_bits;  // depth at which the tables take over
  const int top_bits = std::min(depth_tail, 12);
  const std::size_t tail_size = std::size_t{1} << tail_bits;
  const int nb = lay.bins();

  // tail[i * tail_size + bits] = P(the tail emits bits | hidden state i at
  // depth_tail), built from the last request backwards one level at a time:
  // t(x rest) = e_x (T_x t(rest)), with t(x) = e_x for the last request.
  const auto uk = static_cast<std::size_t>(k);
  std::vector<double> tail(uk * tail_size);
  {
    auto emit = [&](int i, bool bad) { return bad ? chain.bad(i) : 1.0 - chain.bad(i); };
    // level[rest * k + i] for the m last requests, rest read first to last.
    std::vector<double> level(2 * uk), next;
    for (int x = 0; x < 2; ++x)
      for (int i = 0; i < k; ++i) level[static_cast<std::size_t>(x * k + i)] = emit(i, x == 1);
    for (int m = 1; m < tail_bits; ++m) {
      const std::size_t width = std::size_t{1} << m;
      next.assign(2 * width * uk, 0.0);
      for (int x = 0; x < 2; ++x) {
        const Eigen::MatrixXd& t = x == 1 ? chain.retry : chain.gap;
        for (std::size_t rest = 0; rest < width; ++rest)
          for (int i = 0; i < k; ++i) {
            double s = 0.0;
            for (int j = 0; j < k; ++j) s += t(i, j) * level[rest * uk + static_cast<std::size_t>(j)];
            next[((static_cast<std::size_t>(x) << m) | rest) * uk + static_cast<std::size_t>(i)] = s * emit(i, x == 1);
          }
      }
      level.swap(next);
    }
    for (std::size_t bits = 0; bits < tail_size; ++bits)
      for (std::size_t i = 0; i < uk; ++i) tail[i * tail_size + bits] = level[bits * uk + i];
  }
  bool sparse = true;
  for (std::size_t bits = 0; bits < tail_size; ++bits) {
    int nonzero = 0;
    for (int i = 0; i < k; ++i) nonzero += tail[static_cast<std::size_t>(i) * tail_size + bits] != 0.0;
    sparse = sparse && nonzero <= 1;
  }

  // The policy states reachable at depth_tail, and a plan for each active one.
  std::vector<char> reachable(static_cast<std::size_t>(L + nb), 0), next_reachable(reachable.size());
  reachable[0] = 1;
  for (int d = 0; d < depth_tail; ++d) {
    std::fill(next_reachable.begin(), next_reachable.end(), 0);
    for (int s = 0; s < L + nb; ++s)
      if (reachable[static_cast<std::size_t>(s)])
        for (bool bad : {false, true}) next_reachable[static_cast<std::size_t>(lay.step(s, d, bad))] = 1;
    reachable.swap(next_reachable);
  }
  std::vector<TailPlan> plans(static_cast<std::size_t>(L));
  std::vector<int> bin_of(tail_size), walk(tail_size);
  for (int state = 0; state < L; ++state) {
    if (!reachable[static_cast<std::size_t>(state)]) continue;
    // walk[prefix] after m requests of the tail; the prefix grows on the right.
    walk[0] = state;
    for (int m = 0; m < tail_bits; ++m)
      for (std::size_t prefix = (std::size_t{1} << m); prefix-- > 0;) {
        const int from = walk[prefix];
        walk[2 * prefix] = lay.step(from, depth_tail + m, false);
        walk[2 * prefix + 1] = lay.step(from, depth_tail + m, true);
      }
    for (std::size_t bits = 0; bits < tail_size; ++bits) {
      RELSIM_ASSERT(walk[bits] >= L);  // every sequence of full length ends the task
      bin_of[bits] = walk[bits] - L;
    }
    plans[static_cast<std::size_t>(state)] = make_plan(tail, k, tail_size, bin_of, nb, sparse);
  }
  // After the task has ended every leaf lands in the one bin; each weight is
  // still computed and added.
  std::fill(bin_of.begin(), bin_of.end(), 0);
  const TailPlan ended = make_plan(tail, k, tail_size, bin_of, nb, sparse);

  const std::size_t blocks = std::size_t{1} << top_bits;
  // This rank's blocks [first_block, last_block); the rows hold only those.
  // Named variables, not a structured binding: clang 14 cannot refer to one
  // inside an OpenMP region.
  const std::pair<std::int64_t, std::int64_t> block_range = share.range(static_cast<std::int64_t>(blocks));
  const std::int64_t first_block = block_range.first, last_block = block_range.second;
  const auto own = static_cast<std::size_t>(last_block - first_block);
  std::vector<double> block_mass(own * static_cast<std::size_t>(nb), 0.0);
  std::vector<char> block_hit(own * static_cast<std::size_t>(nb), 0);

#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > 0 ? threads : omp_get_max_threads())
  for (std::size_t block = static_cast<std::size_t>(first_block); block < static_cast<std::size_t>(last_block);
       ++block) {
    const std::size_t row = block - static_cast<std::size_t>(first_block);
    double* mass = block_mass.data() + row * static_cast<std::size_t>(nb);
    char* hit = block_hit.data() + row * static_cast<std::size_t>(nb);
    // alpha at each depth from 0 to depth_tail, k entries each.
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
      const TailPlan& plan = s >= L ? ended : plans[static_cast<std::size_t>(s)];
      const double* w = plan.weights.data();
      for (const Group& g : plan.groups) {
        double x;
        if (sparse) x = group_mass_sparse(a[g.state], w, g.begin, g.end);
        else x = group_mass_dense(a, k, w, plan.stride, g.begin, g.end);
        const int bin = s >= L ? s - L : g.bin;
        mass[bin] += x;
        // Weights are >= 0, so the sum is positive exactly when some weight is.
        hit[bin] |= x > 0.0;
      }
    }
  }

  Histogram h{std::vector<double>(static_cast<std::size_t>(nb)), std::vector<char>(static_cast<std::size_t>(nb), 0)};
  if (!share.single()) {
    // Each block's row of masses then of hits (0 or 1) to rank 0, all rows in
    // block order; rank 0 reduces them exactly as below and sends the
    // histogram back.
    const auto unb = static_cast<std::size_t>(nb);
    std::vector<double> rows(own * 2 * unb);
    for (std::size_t i = 0; i < own; ++i)
      for (std::size_t b = 0; b < unb; ++b) {
        rows[i * 2 * unb + b] = block_mass[i * unb + b];
        rows[i * 2 * unb + unb + b] = block_hit[i * unb + b] ? 1.0 : 0.0;
      }
    const std::vector<double> all =
        parallel::gather_rows(rows, static_cast<std::int64_t>(blocks), 2 * static_cast<std::int64_t>(nb), share);
    std::vector<double> reduced(2 * unb, 0.0);
    if (share.root())
      for (std::size_t b = 0; b < unb; ++b) {
        CompensatedSum sum;
        bool hit = false;
        for (std::size_t block = 0; block < blocks; ++block) {
          sum.add(all[block * 2 * unb + b]);
          hit = hit || all[block * 2 * unb + unb + b] != 0.0;
        }
        reduced[b] = sum.value();
        reduced[unb + b] = hit ? 1.0 : 0.0;
      }
    parallel::broadcast(reduced, share);
    for (std::size_t b = 0; b < unb; ++b) {
      h.mass[b] = reduced[b];
      h.hit[b] = reduced[unb + b] != 0.0;
    }
    return h;
  }
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

ExactResult exact_enumerate(const Model& model, const Policy& policy, const EnumerateOptions& options,
                            const parallel::Share& share) {
  const Layout lay = checked_layout(model, policy, options);
  const Chain chain = gilbert_chain(model);
  const Histogram h = by_scope(model, chain, [&](const Eigen::RowVectorXd& start) {
    return enumerate_from(chain, start, lay, options.threads, share);
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
