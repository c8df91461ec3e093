// relsim tune (issue 15, goal: 10^4 schedules in under 2 s on 2 cores) on
// t_good = 3600 s, t_bad = 120 s, n = 20 calls, 1 s per request, a fault mix
// with pre-response kinds (so s, r and B all matter), target 0.99. Items are
// schedules; times in seconds.
//
//   BM_TuneEvaluate/threads:T  exact_time without distributions on the first
//                              10^4 schedules of the default space: the
//                              search's inner loop.
//   BM_TuneSearch/threads:2    run_tune itself on a space of about 10^4
//                              schedules (s <= 12, r <= 4): the loop, the
//                              front, p99 of its members (exact or simulated,
//                              20000 tasks), the anchors.
//   BM_TuneOverMatrix          baseline in the same run: the discrete
//                              engine (exact_matrix, distribution off) on the
//                              same 10^4 policies with the matching Gilbert
//                              chain (one step per second), 2 threads; the
//                              counter time_over_matrix is what the time
//                              model costs on top.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "relsim/exact/exact.hpp"
#include "relsim/sweep/tune.hpp"

namespace {

constexpr std::int64_t kSchedules = 10'000;

relsim::TuneConfig config(int threads) {
  relsim::TuneConfig c;
  c.time.chain = relsim::two_state_time_chain(3600.0, 120.0);
  c.time.request_seconds = 1.0;
  c.n = 20;
  c.kinds = relsim::parse_fault_weights("cut=1,stall=1,slow_headers=2,http_529=1,overloaded=1");
  c.target = 0.99;
  c.threads = threads;
  return c;
}

std::vector<relsim::TuneSchedule> first_schedules(const relsim::TuneConfig& c) {
  std::vector<relsim::TuneSchedule> all = relsim::tune_schedules(relsim::TuneSpace{}, c.n, c.kinds);
  all.resize(static_cast<std::size_t>(std::min<std::int64_t>(kSchedules, static_cast<std::int64_t>(all.size()))));
  return all;
}

// The default space narrowed to about 10^4 schedules (9914 with this fault mix).
relsim::TuneSpace ten_thousand() {
  relsim::TuneSpace space;
  space.s_max = 12;
  space.r_max = 4;
  return space;
}

template <class Body>
double seconds(Body body) {
  const auto t0 = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_TuneEvaluate(benchmark::State& state) {
  const relsim::TuneConfig c = config(static_cast<int>(state.range(0)));
  const std::vector<relsim::TuneSchedule> schedules = first_schedules(c);
  const auto count = static_cast<std::int64_t>(schedules.size());
  std::vector<double> success(schedules.size());
  for (auto _ : state) {
#pragma omp parallel for schedule(dynamic, 4) num_threads(c.threads)
    for (std::int64_t i = 0; i < count; ++i)
      success[static_cast<std::size_t>(i)] =
          relsim::evaluate_schedule(c, schedules[static_cast<std::size_t>(i)], false).success;
    benchmark::DoNotOptimize(success.data());
  }
  state.SetItemsProcessed(state.iterations() * count);
  state.counters["schedules"] = static_cast<double>(count);
  state.counters["s_per_10k"] = benchmark::Counter(static_cast<double>(state.iterations() * count) / 1e4,
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TuneEvaluate)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime();

void BM_TuneSearch(benchmark::State& state) {
  const relsim::TuneConfig c = config(static_cast<int>(state.range(0)));
  const relsim::TuneSpace space = ten_thousand();
  const std::int64_t count = relsim::count_tune_schedules(space, c.kinds);
  std::size_t front = 0;
  for (auto _ : state) {
    const relsim::TuneResult r = relsim::run_tune(space, c);
    front = r.front.size();
    benchmark::DoNotOptimize(r.meeting);
  }
  state.SetItemsProcessed(state.iterations() * count);
  state.counters["schedules"] = static_cast<double>(count);
  state.counters["front"] = static_cast<double>(front);
  state.counters["s_per_10k"] = benchmark::Counter(static_cast<double>(state.iterations() * count) / 1e4,
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TuneSearch)->ArgName("threads")->Arg(2)->Unit(benchmark::kSecond)->UseRealTime();

// The discrete engine on the same policies: Gilbert's chain observed every
// second (docs/time.md, discrete correspondence), 2 threads.
void BM_TuneOverMatrix(benchmark::State& state) {
  const relsim::TuneConfig c = config(2);
  const std::vector<relsim::TuneSchedule> schedules = first_schedules(c);
  const auto count = static_cast<std::int64_t>(schedules.size());
  relsim::Model model;
  model.p = 120.0 / 3720.0;
  model.q = model.p + (1.0 - model.p) * std::exp(-(1.0 / 3600.0 + 1.0 / 120.0));
  relsim::ExactOptions options;
  options.kinds = c.kinds;
  options.distribution = false;
  std::vector<double> success(schedules.size());
  double matrix = 0.0, timed = 0.0;
  for (auto _ : state) {
    matrix += seconds([&] {
#pragma omp parallel for schedule(dynamic, 4) num_threads(2)
      for (std::int64_t i = 0; i < count; ++i)
        success[static_cast<std::size_t>(i)] =
            relsim::exact_matrix(model, schedules[static_cast<std::size_t>(i)].policy, options).success;
    });
    timed += seconds([&] {
#pragma omp parallel for schedule(dynamic, 4) num_threads(2)
      for (std::int64_t i = 0; i < count; ++i)
        success[static_cast<std::size_t>(i)] =
            relsim::evaluate_schedule(c, schedules[static_cast<std::size_t>(i)], false).success;
    });
    benchmark::DoNotOptimize(success.data());
  }
  const double it = static_cast<double>(state.iterations());
  state.SetItemsProcessed(2 * state.iterations() * count);
  state.counters["matrix_s"] = matrix / it;
  state.counters["time_s"] = timed / it;
  state.counters["time_over_matrix"] = timed / matrix;
}
BENCHMARK(BM_TuneOverMatrix)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
