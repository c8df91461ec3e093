#pragma once
// Brute-force enumeration (docs/model.md, Exact answers): every good/bad sequence of length
// n (r + 1), weighted by the chain, the simple policy run over it, summed.
// An oracle for the transfer-matrix engine that shares none of its code.
#include <cstdint>

#include "relsim/exact/exact.hpp"
#include "relsim/parallel/parallel.hpp"

namespace relsim {

inline constexpr int kDefaultMaxEnumerateLength = 40;
inline constexpr int kHardMaxEnumerateLength = 62;

struct EnumerateOptions {
  int max_length = kDefaultMaxEnumerateLength;  // refuse longer sequences
  int threads = 0;                              // 0: OpenMP's default
  // Kinds of bad requests. The enumeration sees only good and bad, so it
  // covers retryable kinds alone (a fatal kind such as http_400 is refused);
  // the weights split env_error by the kind of the call's last request.
  FaultWeights kinds = FaultWeights::in_stream_uniform();
};

// Throws InputError when n (r + 1) exceeds options.max_length. The result is
// bit-identical for any number of threads and ranks. MPI ranks sharing the
// enumeration (parallel.hpp, every rank of `share` calling this alike): rank
// k sums a contiguous range of the fixed blocks, rank 0 gathers the
// per-block sums and adds them in block order, as one process does, and
// every rank gets the result.
ExactResult exact_enumerate(const Model& model, const Policy& policy,
                            const EnumerateOptions& options = {}, const parallel::Share& share = {});

// The straightforward enumeration the fast one is measured against: each
// sequence's probability recomputed from scratch. For benchmarks and tests.
ExactResult exact_enumerate_naive(const Model& model, const Policy& policy,
                                  const EnumerateOptions& options = {});

}  // namespace relsim
