// The fast enumeration (enumerate_kernel.hpp): prefix weights carried down
// the tree of sequences, the last requests taken from tail tables, each block
// of the tree summed into its own row, the rows reduced in block order.
#include "exact/enumerate_kernel.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "relsim/core/error.hpp"

namespace relsim::enumeration {
namespace {

// The sizes of the tree of sequences. The tree is cut into 2^top_bits blocks
// (a number fixed by L alone, never by the thread count); below depth_tail
// the last tail_bits requests come from tables.
struct Shape {
  int length, states, tail_bits, depth_tail, top_bits, bins;
  std::size_t tail_size;
};

Shape shape_of(const Layout& lay, const Chain& chain) {
  Shape sh{};
  sh.length = lay.length;
  sh.states = static_cast<int>(chain.states());
  sh.tail_bits = std::min(sh.length, 12);
  sh.depth_tail = sh.length - sh.tail_bits;
  sh.top_bits = std::min(sh.depth_tail, 12);
  sh.tail_size = std::size_t{1} << sh.tail_bits;
  sh.bins = lay.bins();
  return sh;
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

// tail[i * tail_size + bits] = P(the tail emits bits | hidden state i at
// depth_tail), built from the last request backwards one level at a time:
// t(x rest) = e_x (T_x t(rest)), with t(x) = e_x for the last request.
std::vector<double> tail_table(const Chain& chain, const Shape& sh) {
  const int k = sh.states;
  const auto uk = static_cast<std::size_t>(k);
  auto emit = [&](int i, bool bad) { return bad ? chain.bad(i) : 1.0 - chain.bad(i); };
  // level[rest * k + i] for the m last requests, rest read first to last.
  std::vector<double> level(2 * uk), next;
  for (int x = 0; x < 2; ++x)
    for (int i = 0; i < k; ++i) level[static_cast<std::size_t>(x * k + i)] = emit(i, x == 1);
  for (int m = 1; m < sh.tail_bits; ++m) {
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
  std::vector<double> tail(uk * sh.tail_size);
  for (std::size_t bits = 0; bits < sh.tail_size; ++bits)
    for (std::size_t i = 0; i < uk; ++i) tail[i * sh.tail_size + bits] = level[bits * uk + i];
  return tail;
}

// True when every leaf has at most one hidden state of nonzero weight (the
// sparse form of TailPlan).
bool sparse_tail(const std::vector<double>& tail, const Shape& sh) {
  bool sparse = true;
  for (std::size_t bits = 0; bits < sh.tail_size; ++bits) {
    int nonzero = 0;
    for (int i = 0; i < sh.states; ++i) nonzero += tail[static_cast<std::size_t>(i) * sh.tail_size + bits] != 0.0;
    sparse = sparse && nonzero <= 1;
  }
  return sparse;
}

// The policy states (active and ended) reachable after `depth` requests.
std::vector<char> reachable_states(const Layout& lay, int depth) {
  const int all = lay.length + lay.bins();
  std::vector<char> reachable(static_cast<std::size_t>(all), 0), next(reachable.size());
  reachable[0] = 1;
  for (int d = 0; d < depth; ++d) {
    std::fill(next.begin(), next.end(), 0);
    for (int s = 0; s < all; ++s)
      if (reachable[static_cast<std::size_t>(s)])
        for (bool bad : {false, true}) next[static_cast<std::size_t>(lay.step(s, d, bad))] = 1;
    reachable.swap(next);
  }
  return reachable;
}

// bin_of[bits]: the bin each leaf below active policy state `state` at
// depth_tail ends in. `walk` is scratch of tail_size entries.
void leaf_bins(const Layout& lay, const Shape& sh, int state, std::vector<int>& walk, std::vector<int>& bin_of) {
  // walk[prefix] after m requests of the tail; the prefix grows on the right.
  walk[0] = state;
  for (int m = 0; m < sh.tail_bits; ++m)
    for (std::size_t prefix = (std::size_t{1} << m); prefix-- > 0;) {
      const int from = walk[prefix];
      walk[2 * prefix] = lay.step(from, sh.depth_tail + m, false);
      walk[2 * prefix + 1] = lay.step(from, sh.depth_tail + m, true);
    }
  for (std::size_t bits = 0; bits < sh.tail_size; ++bits) {
    RELSIM_ASSERT(walk[bits] >= sh.length);  // every sequence of full length ends the task
    bin_of[bits] = walk[bits] - sh.length;
  }
}

// A plan for each policy state at depth_tail: one per reachable active
// state, and one for all the ended states.
struct TailPlans {
  std::vector<TailPlan> active;  // by active state; unreachable ones empty
  TailPlan ended;
  bool sparse = true;
};

TailPlans make_plans(const Chain& chain, const Layout& lay, const Shape& sh) {
  const std::vector<double> tail = tail_table(chain, sh);
  TailPlans plans;
  plans.sparse = sparse_tail(tail, sh);
  const std::vector<char> reachable = reachable_states(lay, sh.depth_tail);
  plans.active.resize(static_cast<std::size_t>(sh.length));
  std::vector<int> bin_of(sh.tail_size), walk(sh.tail_size);
  for (int state = 0; state < sh.length; ++state) {
    if (!reachable[static_cast<std::size_t>(state)]) continue;
    leaf_bins(lay, sh, state, walk, bin_of);
    plans.active[static_cast<std::size_t>(state)] =
        make_plan(tail, sh.states, sh.tail_size, bin_of, sh.bins, plans.sparse);
  }
  // After the task has ended every leaf lands in the one bin; each weight is
  // still computed and added.
  std::fill(bin_of.begin(), bin_of.end(), 0);
  plans.ended = make_plan(tail, sh.states, sh.tail_size, bin_of, sh.bins, plans.sparse);
  return plans;
}

// One block's sums: its prefix (the top_bits of `block`) is walked once,
// then the subtrees below it in order, each ending in the tail tables. The
// block's masses and hits go to mass[bin] and hit[bin].
void enumerate_block(const Chain& chain, const Eigen::RowVectorXd& start, const Layout& lay, const Shape& sh,
                     const TailPlans& plans, std::size_t block, double* mass, char* hit) {
  const int L = sh.length, k = sh.states, top_bits = sh.top_bits, depth_tail = sh.depth_tail;
  const bool sparse = plans.sparse;
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
    const TailPlan& plan = s >= L ? plans.ended : plans.active[static_cast<std::size_t>(s)];
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

// One row of bins per block of this rank, in block order.
struct BlockRows {
  std::size_t rows, bins;
  std::vector<double> mass;
  std::vector<char> hit;
  BlockRows(std::size_t rows_, int bins_)
      : rows(rows_), bins(static_cast<std::size_t>(bins_)), mass(rows * bins, 0.0), hit(rows * bins, 0) {}
};

// The fixed-order reduction of one process's rows (all the blocks).
Histogram reduce_blocks(const BlockRows& rows) {
  const std::size_t nb = rows.bins;
  Histogram h{std::vector<double>(nb), std::vector<char>(nb, 0)};
  for (std::size_t b = 0; b < nb; ++b) {
    CompensatedSum sum;
    for (std::size_t block = 0; block < rows.rows; ++block) {
      sum.add(rows.mass[block * nb + b]);
      h.hit[b] |= rows.hit[block * nb + b];
    }
    h.mass[b] = sum.value();
  }
  return h;
}

// The same over MPI ranks: each block's row of masses then of hits (0 or 1)
// to rank 0, all rows in block order; rank 0 reduces them exactly as
// reduce_blocks does and sends the histogram back.
Histogram reduce_blocks_across_ranks(const BlockRows& mine, std::size_t blocks, const parallel::Share& share) {
  const std::size_t unb = mine.bins;
  std::vector<double> rows(mine.rows * 2 * unb);
  for (std::size_t i = 0; i < mine.rows; ++i)
    for (std::size_t b = 0; b < unb; ++b) {
      rows[i * 2 * unb + b] = mine.mass[i * unb + b];
      rows[i * 2 * unb + unb + b] = mine.hit[i * unb + b] ? 1.0 : 0.0;
    }
  const std::vector<double> all =
      parallel::gather_rows(rows, static_cast<std::int64_t>(blocks), 2 * static_cast<std::int64_t>(unb), share);
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
  Histogram h{std::vector<double>(unb), std::vector<char>(unb, 0)};
  for (std::size_t b = 0; b < unb; ++b) {
    h.mass[b] = reduced[b];
    h.hit[b] = reduced[unb + b] != 0.0;
  }
  return h;
}

}  // namespace

// Inside a block the prefix weight is carried down the tree, one forward
// step per node, and the last `tail_bits` requests come from tables: a
// leaf's weight is alpha . tail[bits], its bin given by the policy state at
// depth_tail and the bits (see TailPlan). Each block sums into its own row of
// bins, and the rows are added in block order, so the bits do not depend on
// which thread ran which block.
Histogram enumerate_from(const Chain& chain, const Eigen::RowVectorXd& start, const Layout& lay, int threads,
                         const parallel::Share& share) {
  const Shape sh = shape_of(lay, chain);
  const TailPlans plans = make_plans(chain, lay, sh);
  const std::size_t blocks = std::size_t{1} << sh.top_bits;
  // This rank's blocks [first_block, last_block); the rows hold only those.
  // Named variables, not a structured binding: clang 14 cannot refer to one
  // inside an OpenMP region.
  const std::pair<std::int64_t, std::int64_t> block_range = share.range(static_cast<std::int64_t>(blocks));
  const auto first_block = static_cast<std::size_t>(block_range.first);
  const auto last_block = static_cast<std::size_t>(block_range.second);
  BlockRows rows(last_block - first_block, sh.bins);

  // An exception must not escape the region (std::terminate): FirstError
  // carries the first one out, to be rethrown below.
  FirstError error;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads > 0 ? threads : omp_get_max_threads())
  for (std::size_t block = first_block; block < last_block; ++block)
    error.run([&] {
      const std::size_t row = (block - first_block) * rows.bins;
      enumerate_block(chain, start, lay, sh, plans, block, rows.mass.data() + row, rows.hit.data() + row);
    });
  error.rethrow();
  return share.single() ? reduce_blocks(rows) : reduce_blocks_across_ranks(rows, blocks, share);
}

}  // namespace relsim::enumeration
