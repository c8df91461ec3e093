// The Monte Carlo engine against a straightforward simulation, measured in
// the same run: n = 2, r = 2, p = 0.3, q = 0.8, fresh chain, in-stream kinds.
//
// The baseline is what one writes first: one std::mt19937_64, one thread,
// one uniform per request walking the Gilbert chain, one
// std::discrete_distribution draw per bad request. simulate() is reported
// with 1 and 2 threads; its `x_baseline` counter is its tasks per second over
// the baseline's, both timed by the wall clock in this process.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <random>

#include "relsim/core/model.hpp"
#include "relsim/montecarlo/simulate.hpp"

namespace {

relsim::Model bench_model() {
  relsim::Model m;
  m.p = 0.3;
  m.q = 0.8;
  return m;
}
const relsim::Policy kPolicy{.n = 2, .r = 2};

struct BaselineTotals {
  std::int64_t successes = 0, requests = 0;
  std::array<std::int64_t, relsim::kFaultKinds> faults{};
};

// The straightforward simulation of `tasks` fresh tasks.
BaselineTotals baseline(std::int64_t tasks, std::uint64_t seed) {
  const relsim::Model model = bench_model();
  const relsim::Chain chain = relsim::gilbert_chain(model);
  const double after_bad = chain.retry(1, 1), after_good = chain.gap(0, 1);
  const relsim::FaultWeights weights = relsim::FaultWeights::in_stream_uniform();
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::discrete_distribution<int> kind(weights.weight.begin(), weights.weight.end());
  BaselineTotals t;
  for (std::int64_t task = 0; task < tasks; ++task) {
    double p_bad = model.p;  // stationary start
    bool failed = false;
    for (std::int64_t call = 0; call < kPolicy.n && !failed; ++call) {
      for (int attempt = 0;; ++attempt) {
        ++t.requests;
        const bool bad = uniform(engine) < p_bad;
        if (!bad) {
          p_bad = after_good;
          break;
        }
        ++t.faults[static_cast<std::size_t>(kind(engine))];
        p_bad = after_bad;
        if (attempt == kPolicy.r) {
          failed = true;
          break;
        }
      }
    }
    t.successes += failed ? 0 : 1;
  }
  return t;
}

constexpr std::int64_t kBaselineTasks = 1 << 20;
constexpr std::int64_t kSimTasks = 1 << 22;

double g_baseline_rate = 0.0;  // tasks per second, wall clock

double measure_baseline_once() {
  const auto start = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(baseline(kBaselineTasks, 1));
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return static_cast<double>(kBaselineTasks) / took.count();
}

void BM_Baseline(benchmark::State& state) {
  double seconds = 0.0;
  std::int64_t tasks = 0;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(baseline(kBaselineTasks, seed++));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    tasks += kBaselineTasks;
  }
  g_baseline_rate = static_cast<double>(tasks) / seconds;
  state.SetItemsProcessed(tasks);
}
BENCHMARK(BM_Baseline)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

// range(0): threads; range(1): the kernel (relsim::Kernel, 0 = auto),
// skipped where this CPU lacks it.
void BM_Simulate(benchmark::State& state) {
  const auto kernel = static_cast<relsim::Kernel>(state.range(1));
  if (!relsim::kernel_available(kernel)) {
    state.SkipWithError("this CPU lacks the kernel");
    return;
  }
  if (g_baseline_rate == 0.0) g_baseline_rate = measure_baseline_once();
  relsim::SimConfig config;
  config.tasks = kSimTasks;
  config.threads = static_cast<int>(state.range(0));
  config.kernel = kernel;
  double seconds = 0.0;
  std::int64_t tasks = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(relsim::simulate(bench_model(), kPolicy, config));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    tasks += config.tasks;
    ++config.seed;
  }
  state.SetItemsProcessed(tasks);
  state.counters["x_baseline"] = static_cast<double>(tasks) / seconds / g_baseline_rate;
}
BENCHMARK(BM_Simulate)
    ->ArgsProduct({{1, 2}, {static_cast<int>(relsim::Kernel::automatic), static_cast<int>(relsim::Kernel::scalar),
                            static_cast<int>(relsim::Kernel::avx2), static_cast<int>(relsim::Kernel::avx512)}})
    ->ArgNames({"threads", "kernel"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
