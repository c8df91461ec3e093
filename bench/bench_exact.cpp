// The transfer-matrix engine (docs/model.md, Exact answers) on the bursty model p = 0.3,
// q = 0.8: the large case n = 10^6 calls, r = 10 retries (goal: well under a
// second), with and without the requests distribution, and the n = 2, r = 2
// reference case. Times in milliseconds; items are calls.
//
// Baselines measured in the same run:
//   BM_MatrixDistributionCost  default options over distribution = false
//                              (what the distribution adds at n = 10^6)
//   BM_MatrixOverEnumerate     enumeration of all 2^6 sequences over the
//                              matrix, at the reference case (same answer)
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"

namespace {

relsim::Model bursty(bool continuous) {
  relsim::Model m;
  m.p = 0.3;
  m.q = 0.8;
  m.chain = continuous ? relsim::ChainScope::continuous : relsim::ChainScope::fresh;
  return m;
}

template <class Engine>
double seconds(Engine engine) {
  const auto t0 = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(engine());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Args: n, r, distribution (0/1), continuous scope (0/1).
void BM_Matrix(benchmark::State& state) {
  const relsim::Model model = bursty(state.range(3) != 0);
  const relsim::Policy policy{state.range(0), static_cast<int>(state.range(1))};
  relsim::ExactOptions options;
  options.distribution = state.range(2) != 0;
  bool complete = false;
  for (auto _ : state) {
    const relsim::ExactResult result = relsim::exact_matrix(model, policy, options);
    complete = result.distribution_complete;
    benchmark::DoNotOptimize(result.success);
  }
  state.SetItemsProcessed(state.iterations() * policy.n);
  state.counters["distribution_complete"] = complete;
}
BENCHMARK(BM_Matrix)
    ->ArgNames({"n", "r", "distribution", "continuous"})
    ->Args({1'000'000, 10, 0, 0})
    ->Args({1'000'000, 10, 1, 0})
    ->Args({1'000'000, 10, 0, 1})
    ->Args({2, 2, 1, 0})
    ->Unit(benchmark::kMillisecond);

// Args: n, r. Both option sets timed in each iteration.
void BM_MatrixDistributionCost(benchmark::State& state) {
  const relsim::Model model = bursty(false);
  const relsim::Policy policy{state.range(0), static_cast<int>(state.range(1))};
  relsim::ExactOptions totals_only;
  totals_only.distribution = false;
  double totals = 0.0, full = 0.0;
  for (auto _ : state) {
    totals += seconds([&] { return relsim::exact_matrix(model, policy, totals_only); });
    full += seconds([&] { return relsim::exact_matrix(model, policy); });
  }
  const double it = static_cast<double>(state.iterations());
  state.SetItemsProcessed(2 * state.iterations() * policy.n);
  state.counters["totals_ms"] = totals * 1e3 / it;
  state.counters["default_ms"] = full * 1e3 / it;
  state.counters["default_over_totals"] = full / totals;
}
BENCHMARK(BM_MatrixDistributionCost)->ArgNames({"n", "r"})->Args({1'000'000, 10})->Unit(benchmark::kMillisecond);

// The reference case n = 2, r = 2: the matrix against enumeration of all
// 2^6 sequences, one thread.
void BM_MatrixOverEnumerate(benchmark::State& state) {
  const relsim::Model model = bursty(false);
  const relsim::Policy policy{2, 2};
  relsim::EnumerateOptions one;
  one.threads = 1;
  double matrix = 0.0, enumerate = 0.0;
  for (auto _ : state) {
    matrix += seconds([&] { return relsim::exact_matrix(model, policy); });
    enumerate += seconds([&] { return relsim::exact_enumerate(model, policy, one); });
  }
  const double it = static_cast<double>(state.iterations());
  state.counters["matrix_us"] = matrix * 1e6 / it;
  state.counters["enumerate_us"] = enumerate * 1e6 / it;
  state.counters["enumerate_over_matrix"] = enumerate / matrix;
}
BENCHMARK(BM_MatrixOverEnumerate)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
