// Healthy streams per second through the project's client and mock server on
// loopback (issue 5): n = 1 call per task, every script "ok", layered policy.
// Counters: streams/s (items per second), and the same run with a sliding
// window instead of waves, as a ratio against the coordinated start.
#include <benchmark/benchmark.h>

#include <chrono>

#include "relsim/client.hpp"
#include "relsim/server.hpp"

namespace {

double run_streams(int tasks, int concurrency, bool coordinated, int threads) {
  relsim::ServerConfig sc;
  sc.threads = threads;
  relsim::Server server(sc);
  for (int t = 0; t < tasks; ++t) server.set_script(t, {relsim::ScriptEntry::ok()});
  relsim::ClientConfig cc;
  cc.port = static_cast<std::uint16_t>(server.port());
  cc.policy.kind = relsim::PolicyKind::layered;
  cc.policy.n = 1;
  cc.policy.r = 2;
  cc.concurrency = concurrency;
  cc.coordinated_start = coordinated;
  cc.threads = threads;
  const auto start = std::chrono::steady_clock::now();
  const auto results = relsim::run_live(cc, 0, tasks);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& r : results)
    if (r.outcome.outcome != relsim::Outcome::done) throw std::runtime_error("a healthy stream failed: " + r.error);
  return seconds;
}

void BM_HealthyStreams(benchmark::State& state) {
  const int tasks = 2000;
  const int concurrency = static_cast<int>(state.range(0));
  const bool coordinated = state.range(1) != 0;
  const int threads = static_cast<int>(state.range(2));
  for (auto _ : state) {
    const double s = run_streams(tasks, concurrency, coordinated, threads);
    state.SetIterationTime(s);
  }
  state.SetItemsProcessed(state.iterations() * tasks);
  state.SetLabel(std::string(coordinated ? "waves" : "window") + ", " + std::to_string(threads) + " thread(s)");
}
BENCHMARK(BM_HealthyStreams)
    ->Args({64, 1, 1})
    ->Args({64, 0, 1})
    ->Args({64, 0, 2})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
