#pragma once
// Internal to the exact layer: the fast enumeration of every good/bad
// sequence (enumerate_kernel.cpp) and what it shares with enumerate.cpp,
// which checks the input, runs it per chain scope and reads the result.
#include <cmath>
#include <vector>

#include <Eigen/Dense>

#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/parallel/parallel.hpp"

namespace relsim::enumeration {

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
inline void forward(const Chain& chain, const double* alpha, bool bad, double* out) {
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

// Every sequence of length L from start vector `start`, run through the
// simple policy, summed by the bin it ends in. Bit-identical for any number
// of threads and ranks (enumerate.hpp).
Histogram enumerate_from(const Chain& chain, const Eigen::RowVectorXd& start, const Layout& lay, int threads,
                         const parallel::Share& share);

}  // namespace relsim::enumeration
