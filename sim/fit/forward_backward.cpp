#include "fit/forward_backward.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace relsim::fit {

namespace {

// Enough records per block that a block's bookkeeping is noise next to its work, few enough that
// 10^6 records make dozens of blocks for the threads to share.
constexpr std::int64_t kBlockRecords = 8192;
// Below this many blocks one thread does the E-step: waking a team costs more than it saves on a
// few thousand records (and a lot more on a loaded machine, where a team waits for its cores).
constexpr std::ptrdiff_t kParallelBlocks = 4;
constexpr double kLn2 = 0.69314718055994530942;

// The parameters laid out for the inner loops: for an outcome o (0 good, 1 bad),
// move[o][i*k + j] = step(i, j) P(o | j) and first[o][j] = initial(j) P(o | j).
struct Emitting {
  int k = 0;
  std::vector<double> move[2];
  std::vector<double> first[2];
};

Emitting emitting(const Eigen::MatrixXd& step, const Eigen::VectorXd& bad, const Eigen::RowVectorXd& initial) {
  Emitting e;
  e.k = int(step.rows());
  for (int o = 0; o < 2; ++o) {
    e.move[o].resize(std::size_t(e.k) * e.k);
    e.first[o].resize(std::size_t(e.k));
    for (int j = 0; j < e.k; ++j) {
      const double emit = o == 1 ? bad(j) : 1.0 - bad(j);
      e.first[o][j] = initial(j) * emit;
      for (int i = 0; i < e.k; ++i) e.move[o][std::size_t(i) * e.k + j] = step(i, j) * emit;
    }
  }
  return e;
}

// One block's sums. pair[o][i*k + j] sums alpha_t(i) beta_{t+1}(j) scale[t+1] / last (the scaled
// vectors of the passes below) over the steps whose
// next request has outcome o; times move[o] it is the expected number of i -> j moves.
struct Sums {
  std::vector<double> pair[2];
  std::vector<double> state[2];  // posterior of state i summed over requests with outcome o
  double log_likelihood = 0.0;

  explicit Sums(int k) {
    for (int o = 0; o < 2; ++o) {
      pair[o].assign(std::size_t(k) * k, 0.0);
      state[o].assign(std::size_t(k), 0.0);
    }
  }
  void add(const Sums& other) {
    for (int o = 0; o < 2; ++o) {
      for (std::size_t x = 0; x < pair[o].size(); ++x) pair[o][x] += other.pair[o][x];
      for (std::size_t x = 0; x < state[o].size(); ++x) state[o][x] += other.state[o][x];
    }
    log_likelihood += other.log_likelihood;
  }
};

// The passes below are templates on the number of states: K > 0 fixes it at compile time so the
// inner loops unroll (2 to 4 states, what logs support, run about twice as fast), K = 0 reads it
// from the parameters.

// Below this sum the forward vector is scaled up. Scaling by a power of two is exact, and done
// only this rarely it is off the recursion's critical path: the division by the sum at every
// request (Rabiner's scaling) was a third of the pass's latency. A request so unlikely that it
// takes the sum below the normal range has the previous vector scaled up to [1/2, 1) first
// (scale_up), which gives it the range Rabiner's scaling had.
constexpr double kScaleUpBelow = 0x1p-256;

// What the forward pass leaves for the backward pass and the likelihood: alpha_t scaled by
// 2^-(exponent so far), scale[t] the power of two it was scaled by at t (1 at most requests), so
// P(sequence) = 2^exponent * last, last the sum of the final alpha.
struct Forward {
  bool possible = true;
  std::int64_t exponent = 0;
  double last = 1.0;
};

// cur = prev * move, started from the first product, not from 0: one addition less on the
// critical path.
template <int K>
void step(const double* prev, const double* move, int k_run, double* cur) {
  const int k = K > 0 ? K : k_run;
  for (int j = 0; j < k; ++j) cur[j] = prev[0] * move[j];
  for (int i = 1; i < k; ++i) {
    const double a = prev[i];
    const double* row = move + std::size_t(i) * k;
    for (int j = 0; j < k; ++j) cur[j] += a * row[j];
  }
}

inline double sum_of(const double* v, int k) {
  double sum = 0.0;
  for (int j = 0; j < k; ++j) sum += v[j];
  return sum;
}

// Scales v (k values) by the power of two that puts its sum in [1/2, 1), multiplying `scale` by
// it and adding its exponent to `exponent`; false when v's sum is there already (or is not > 0).
bool scale_up(double* v, int k, double& scale, std::int64_t& exponent) {
  const double sum = sum_of(v, k);
  int e = 0;
  std::frexp(sum, &e);
  if (!(sum > 0.0) || e >= 0) return false;
  const double f = std::ldexp(1.0, -e);
  for (int j = 0; j < k; ++j) v[j] *= f;
  scale *= f;
  exponent += e;
  return true;
}

// Forward pass with alpha scaled by powers of two only where its sum falls below kScaleUpBelow.
template <int K>
Forward forward(const std::vector<std::uint8_t>& seq, const Emitting& e, std::vector<double>& alpha,
                std::vector<double>& scale) {
  const int k = K > 0 ? K : e.k;
  const std::size_t n = seq.size();
  alpha.resize(n * k);
  scale.resize(n);
  Forward out;
  for (std::size_t t = 0; t < n; ++t) {
    double* cur = alpha.data() + t * k;
    if (t == 0) {
      for (int j = 0; j < k; ++j) cur[j] = e.first[seq[0]][j];
    } else {
      step<K>(cur - k, e.move[seq[t]].data(), k, cur);
    }
    double c = sum_of(cur, k);
    if (t > 0 && c < std::numeric_limits<double>::min() && scale_up(cur - k, k, scale[t - 1], out.exponent)) {
      // A request so unlikely that alpha left the normal range: the previous
      // vector, scaled up to a sum in [1/2, 1), gives it the whole range back.
      step<K>(cur - k, e.move[seq[t]].data(), k, cur);
      c = sum_of(cur, k);
    }
    scale[t] = 1.0;
    if (c < kScaleUpBelow || !std::isfinite(c)) {
      if (!(c > 0.0) || !std::isfinite(c)) {
        out.possible = false;
        return out;
      }
      scale_up(cur, k, scale[t], out.exponent);  // c < 2^-256: always scales
    }
    if (t + 1 == n) out.last = c * scale[t];
  }
  return out;
}

// Backward pass with beta_t scaled by the same powers of two, so alpha_t(i) beta_t(i) / last is
// the posterior of state i at request t; adds `weight` copies of the sequence's sums.
template <int K>
void backward(const std::vector<std::uint8_t>& seq, double weight, const Emitting& e, const std::vector<double>& alpha,
              const std::vector<double>& scale, double last_sum, std::vector<double>& beta, Sums& sums) {
  const int k = K > 0 ? K : e.k;
  const std::size_t n = seq.size();
  weight /= last_sum;
  beta.assign(std::size_t(2) * k, 1.0);
  double* next = beta.data();  // beta_{t+1}, then turned into v = beta_{t+1} scale[t + 1]
  double* cur = beta.data() + k;
  const double* last = alpha.data() + (n - 1) * k;
  for (int i = 0; i < k; ++i) sums.state[seq[n - 1]][i] += weight * last[i];
  for (std::size_t t = n - 1; t-- > 0;) {
    const std::uint8_t o = seq[t + 1];
    if (scale[t + 1] != 1.0)
      for (int j = 0; j < k; ++j) next[j] *= scale[t + 1];
    const double* a = alpha.data() + t * k;
    const double* move = e.move[o].data();
    double* pair = sums.pair[o].data();
    double* state = sums.state[seq[t]].data();
    for (int i = 0; i < k; ++i) {
      const double wa = weight * a[i];
      const double* row = move + std::size_t(i) * k;
      double* prow = pair + std::size_t(i) * k;
      double b = row[0] * next[0];
      prow[0] += wa * next[0];
      for (int j = 1; j < k; ++j) {
        prow[j] += wa * next[j];
        b += row[j] * next[j];
      }
      cur[i] = b;
      state[i] += wa * b;
    }
    std::swap(next, cur);
  }
}

// Consecutive sequences cut into blocks of about kBlockRecords records: block b is
// [starts[b], starts[b + 1]). Depends on the data only, never on the thread count.
std::vector<std::size_t> block_starts(const Sequences& data) {
  std::vector<std::size_t> starts{0};
  std::int64_t in_block = 0;
  for (std::size_t s = 0; s < data.distinct.size(); ++s) {
    in_block += std::int64_t(data.distinct[s].size());
    if (in_block >= kBlockRecords && s + 1 < data.distinct.size()) {
      starts.push_back(s + 1);
      in_block = 0;
    }
  }
  starts.push_back(data.distinct.size());
  return starts;
}

// Sums each block on its own (OpenMP over blocks), the block's tasks in order; marks blocks that
// hold an impossible task.
template <int K>
void sum_blocks(const Sequences& data, const Emitting& e, const std::vector<std::size_t>& starts,
                std::vector<Sums>& block_sums, std::vector<char>& impossible) {
  const std::ptrdiff_t blocks = std::ptrdiff_t(starts.size()) - 1;
#pragma omp parallel if (blocks >= kParallelBlocks)
  {
    std::vector<double> alpha, scale, beta;
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t b = 0; b < blocks; ++b) {
      Sums& sums = block_sums[std::size_t(b)];
      for (std::size_t s = starts[std::size_t(b)]; s < starts[std::size_t(b) + 1]; ++s) {
        const std::vector<std::uint8_t>& seq = data.distinct[s];
        const Forward f = forward<K>(seq, e, alpha, scale);
        if (!f.possible) {
          impossible[std::size_t(b)] = 1;
          break;
        }
        sums.log_likelihood += data.count[s] * (double(f.exponent) * kLn2 + std::log(f.last));
        backward<K>(seq, data.count[s], e, alpha, scale, f.last, beta, sums);
      }
    }
  }
}

}  // namespace

ExpectedCounts expected_counts(const Sequences& data, const Eigen::MatrixXd& step, const Eigen::VectorXd& bad,
                               const Eigen::RowVectorXd& initial) {
  const Emitting e = emitting(step, bad, initial);
  const int k = e.k;
  const std::vector<std::size_t> starts = block_starts(data);
  const std::ptrdiff_t blocks = std::ptrdiff_t(starts.size()) - 1;
  std::vector<Sums> block_sums(static_cast<std::size_t>(blocks), Sums(k));
  std::vector<char> impossible(static_cast<std::size_t>(blocks), 0);
  switch (k) {
    case 2: sum_blocks<2>(data, e, starts, block_sums, impossible); break;
    case 3: sum_blocks<3>(data, e, starts, block_sums, impossible); break;
    case 4: sum_blocks<4>(data, e, starts, block_sums, impossible); break;
    default: sum_blocks<0>(data, e, starts, block_sums, impossible); break;
  }
  Sums total(k);
  bool possible = true;
  for (std::ptrdiff_t b = 0; b < blocks; ++b) {
    total.add(block_sums[std::size_t(b)]);
    possible = possible && !impossible[std::size_t(b)];
  }
  ExpectedCounts out;
  out.transitions.resize(k, k);
  out.occupancy.resize(k);
  out.bad.resize(k);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const std::size_t x = std::size_t(i) * k + j;
      out.transitions(i, j) = e.move[0][x] * total.pair[0][x] + e.move[1][x] * total.pair[1][x];
    }
    out.occupancy(i) = total.state[0][i] + total.state[1][i];
    out.bad(i) = total.state[1][i];
  }
  out.log_likelihood = possible ? total.log_likelihood : -std::numeric_limits<double>::infinity();
  return out;
}

}  // namespace relsim::fit
