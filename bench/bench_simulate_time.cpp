// The Monte Carlo in seconds (simulate_time) against a straightforward
// event simulation, measured in the same run: the simple policy, n = 20
// calls, r = 2 retries, the SDK's backoff, 1 s requests, 0.5 s think, a
// two-state chain with t_good = 60 s and t_bad = 20 s, fresh tasks.
//
// The baseline is what one writes first: one std::mt19937_64, one thread,
// std::exponential_distribution sojourns and a uniform per jittered wait,
// the simple policy's rule written inline, the wall time summed in a double
// (no kinds, no histograms, no quantiles). simulate_time() is reported with 1
// and 2 threads; its `x_baseline` counter is its tasks per second over the
// baseline's, both timed by the wall clock in this process. A second case,
// the layered policy with the SDK defaults over an outage chain
// (t_good 3600 s, t_bad 120 s, s = 2, r = 2, overloaded and 529 replies), is
// reported in tasks per second only.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <random>

#include "relsim/core/time_model.hpp"
#include "relsim/montecarlo/simulate_time.hpp"

namespace {

constexpr double kTGood = 60.0, kTBad = 20.0, kRequest = 1.0, kThink = 0.5;

relsim::TimeModel bench_time() {
  relsim::TimeModel t;
  t.chain = relsim::two_state_time_chain(kTGood, kTBad);
  t.backoff = relsim::Backoff::sdk();
  t.request_seconds = kRequest;
  t.think_seconds = kThink;
  return t;
}
const relsim::Policy kPolicy{.n = 20, .r = 2};

struct BaselineTotals {
  std::int64_t successes = 0, requests = 0;
  double seconds = 0.0;
};

// The straightforward simulation of `tasks` fresh tasks.
BaselineTotals baseline(std::int64_t tasks, std::uint64_t seed) {
  const relsim::Backoff backoff = relsim::Backoff::sdk();
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::exponential_distribution<double> leave_good(1.0 / kTGood), leave_bad(1.0 / kTBad);
  BaselineTotals t;
  for (std::int64_t task = 0; task < tasks; ++task) {
    bool bad = uniform(engine) < kTBad / (kTGood + kTBad);
    double to_jump = bad ? leave_bad(engine) : leave_good(engine);
    const auto advance = [&](double dt) {
      to_jump -= dt;
      while (to_jump <= 0.0) {
        bad = !bad;
        to_jump += bad ? leave_bad(engine) : leave_good(engine);
      }
    };
    double clock = 0.0;
    bool failed = false;
    for (std::int64_t call = 0; call < kPolicy.n && !failed; ++call) {
      for (int attempt = 0;; ++attempt) {
        ++t.requests;
        if (!bad) break;
        if (attempt == kPolicy.r) {
          failed = true;
          break;
        }
        const double gap = kRequest + backoff.wait(attempt, uniform(engine));
        clock += gap;
        advance(gap);
      }
      if (!failed && call + 1 < kPolicy.n) {
        clock += kRequest + kThink;
        advance(kRequest + kThink);
      }
    }
    t.seconds += clock + kRequest;
    t.successes += failed ? 0 : 1;
  }
  return t;
}

constexpr std::int64_t kBaselineTasks = 1 << 17;
constexpr std::int64_t kSimTasks = 1 << 19;

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

// Runs simulate_time over kSimTasks tasks per iteration; returns tasks per
// wall-clock second.
double run_simulate(benchmark::State& state, const relsim::TimeModel& time, const relsim::Policy& policy,
                    relsim::SimConfig config) {
  config.tasks = kSimTasks;
  config.threads = static_cast<int>(state.range(0));
  double seconds = 0.0;
  std::int64_t tasks = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(relsim::simulate_time(time, policy, config));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    tasks += config.tasks;
    ++config.seed;
  }
  state.SetItemsProcessed(tasks);
  return static_cast<double>(tasks) / seconds;
}

void BM_SimulateTime(benchmark::State& state) {
  if (g_baseline_rate == 0.0) g_baseline_rate = measure_baseline_once();
  const double rate = run_simulate(state, bench_time(), kPolicy, relsim::SimConfig{});
  state.counters["x_baseline"] = rate / g_baseline_rate;
}
BENCHMARK(BM_SimulateTime)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("threads")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

void BM_SimulateTimeSdkOutage(benchmark::State& state) {
  relsim::TimeModel time = bench_time();
  time.chain = relsim::two_state_time_chain(3600.0, 120.0);
  time.request_seconds = 2.0;
  time.think_seconds = 0.0;
  const relsim::Policy policy{.n = 20, .r = 2, .s = 2, .kind = relsim::PolicyKind::layered};
  relsim::SimConfig config;
  config.kinds = relsim::parse_fault_weights("overloaded=1,http_529=1");
  run_simulate(state, time, policy, config);
}
BENCHMARK(BM_SimulateTimeSdkOutage)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("threads")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
