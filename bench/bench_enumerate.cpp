// Enumeration of all 2^L good/bad sequences (docs/model.md, Exact answers): the fast engine
// (prefix products shared along the tree, tail tables) against the naive one
// (each sequence's probability recomputed from scratch), measured in the same
// run. Lengths L = n (r + 1) with r = 3: n = 5, 6, 7, 8 gives L = 20 .. 32.
//
// Counters:
//   items_per_second   sequences per second (2^L per iteration)
//   ns_per_seq_core    wall time x threads / 2^L, in nanoseconds
//   cpu_ns_per_seq     CPU time of the whole process (all threads) / 2^L: the
//                      same figure, less disturbed when other programs share
//                      the cores
//   speedup_1t         naive time / fast time with one thread (same process)
//   speedup_core_2t    naive time / (fast time with two threads x 2): per core
#include <benchmark/benchmark.h>

#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>

#include "relsim/exact/enumerate.hpp"

namespace {

constexpr int kRetries = 3;

relsim::Model bursty() {
  relsim::Model m;
  m.p = 0.3;
  m.q = 0.8;
  return m;
}

relsim::Policy policy_for(std::int64_t n) { return relsim::Policy{n, kRetries}; }

double sequences(const relsim::Policy& policy) {
  return static_cast<double>(std::uint64_t{1} << policy.max_requests());
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Seconds {
  double wall = 0.0, cpu = 0.0;
};

// Wall and process CPU time of one call, added to `total`.
template <class Engine>
void timed(Seconds& total, Engine engine) {
  const double c0 = process_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(engine());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  total.wall += wall;
  total.cpu += process_cpu_seconds() - c0;
}

void report(benchmark::State& state, const relsim::Policy& policy, const Seconds& total, int threads) {
  const double per_iteration = sequences(policy);
  const double all = static_cast<double>(state.iterations()) * per_iteration;
  state.SetItemsProcessed(static_cast<std::int64_t>(all));
  state.counters["L"] = static_cast<double>(policy.max_requests());
  state.counters["threads"] = threads;
  state.counters["ns_per_seq_core"] = total.wall * 1e9 * threads / all;
  state.counters["cpu_ns_per_seq"] = total.cpu * 1e9 / all;
}

// Args: n, threads.
void BM_EnumerateFast(benchmark::State& state) {
  const relsim::Model model = bursty();
  const relsim::Policy policy = policy_for(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  relsim::EnumerateOptions options;
  options.threads = threads;
  Seconds total;
  for (auto _ : state) timed(total, [&] { return relsim::exact_enumerate(model, policy, options); });
  report(state, policy, total, threads);
}
BENCHMARK(BM_EnumerateFast)
    ->ArgNames({"n", "threads"})
    ->ArgsProduct({{5, 6, 7, 8}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Args: n. Single thread.
void BM_EnumerateNaive(benchmark::State& state) {
  const relsim::Model model = bursty();
  const relsim::Policy policy = policy_for(state.range(0));
  relsim::EnumerateOptions options;
  options.threads = 1;
  Seconds total;
  for (auto _ : state) timed(total, [&] { return relsim::exact_enumerate_naive(model, policy, options); });
  report(state, policy, total, 1);
}
BENCHMARK(BM_EnumerateNaive)->ArgNames({"n"})->Arg(5)->Arg(6)->UseRealTime()->Unit(benchmark::kMillisecond);

// The ratio against the baseline, both timed in the same iteration. Args: n.
void BM_SpeedupOverNaive(benchmark::State& state) {
  const relsim::Model model = bursty();
  const relsim::Policy policy = policy_for(state.range(0));
  relsim::EnumerateOptions one, two;
  one.threads = 1;
  two.threads = 2;
  Seconds naive, fast1, fast2;
  for (auto _ : state) {
    timed(naive, [&] { return relsim::exact_enumerate_naive(model, policy, one); });
    timed(fast1, [&] { return relsim::exact_enumerate(model, policy, one); });
    timed(fast2, [&] { return relsim::exact_enumerate(model, policy, two); });
  }
  const double per = static_cast<double>(state.iterations()) * sequences(policy);
  state.SetItemsProcessed(static_cast<std::int64_t>(3 * per));
  state.counters["L"] = static_cast<double>(policy.max_requests());
  state.counters["naive_ns_per_seq"] = naive.wall * 1e9 / per;
  state.counters["fast1_ns_per_seq"] = fast1.wall * 1e9 / per;
  state.counters["fast2_ns_per_seq_core"] = fast2.wall * 2e9 / per;
  state.counters["speedup_1t"] = naive.wall / fast1.wall;
  state.counters["speedup_core_2t"] = naive.wall / (2.0 * fast2.wall);
  // The same ratios from process CPU time, robust to other programs' load.
  state.counters["cpu_speedup_1t"] = naive.cpu / fast1.cpu;
  state.counters["cpu_speedup_2t"] = naive.cpu / fast2.cpu;
}
BENCHMARK(BM_SpeedupOverNaive)->ArgNames({"n"})->Arg(5)->Arg(6)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

// Length 28 costs minutes of naive enumeration, so it runs only when asked:
// RELSIM_BENCH_LONG=1 bench_enumerate --benchmark_filter=SpeedupOverNaive/n:7
int main(int argc, char** argv) {
  if (std::getenv("RELSIM_BENCH_LONG") != nullptr)
    benchmark::RegisterBenchmark("BM_SpeedupOverNaive", BM_SpeedupOverNaive)
        ->ArgNames({"n"})
        ->Arg(7)
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
