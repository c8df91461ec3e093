// Healthy streams per second through the project's client and mock server on
// loopback (issue 5): n = 1 call per task, every script "ok", layered policy,
// concurrency 64, in waves (coordinated start), in a sliding window, and in
// a window on two threads. Each configuration runs twice in the same
// process: first with one connection per request (`connection: close`, the
// baseline), then with keep-alive, which reports its rate as a ratio
// against that baseline (counter `vs_close`). On a shared machine the rate
// moves with the load; `cpu_us` (the process's user + system CPU per
// stream, client and server together) moves much less.
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include <sys/resource.h>

#include "relsim/client/client.hpp"
#include "relsim/server/server.hpp"

namespace {

constexpr int kTasks = 4000;

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

// Wall seconds of run_live; adds its CPU seconds to `cpu`.
double run_streams(int tasks, int concurrency, bool coordinated, int threads, bool keep_alive, double& cpu) {
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
  cc.keep_alive = keep_alive;
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  const auto results = relsim::run_live(cc, 0, tasks);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cpu += cpu_seconds() - cpu_start;
  for (const auto& r : results)
    if (r.outcome.outcome != relsim::Outcome::done) throw std::runtime_error("a healthy stream failed: " + r.error);
  return seconds;
}

// Streams per second of the baseline (connection per request), by
// (concurrency, coordinated, threads); it runs first.
std::map<std::tuple<int, bool, int>, double>& baseline() {
  static std::map<std::tuple<int, bool, int>, double> rates;
  return rates;
}

void BM_HealthyStreams(benchmark::State& state) {
  const int concurrency = static_cast<int>(state.range(0));
  const bool coordinated = state.range(1) != 0;
  const int threads = static_cast<int>(state.range(2));
  const bool keep_alive = state.range(3) != 0;
  double total = 0.0;
  double cpu = 0.0;
  for (auto _ : state) {
    const double s = run_streams(kTasks, concurrency, coordinated, threads, keep_alive, cpu);
    state.SetIterationTime(s);
    total += s;
  }
  const double rate = static_cast<double>(state.iterations()) * kTasks / total;
  state.SetItemsProcessed(state.iterations() * kTasks);
  state.counters["cpu_us"] = 1e6 * cpu / (static_cast<double>(state.iterations()) * kTasks);
  const auto key = std::make_tuple(concurrency, coordinated, threads);
  if (!keep_alive) {
    baseline()[key] = rate;
  } else if (const auto it = baseline().find(key); it != baseline().end()) {
    state.counters["vs_close"] = rate / it->second;
  }
  state.SetLabel(std::string(coordinated ? "waves" : "window") + ", " + std::to_string(threads) + " thread(s), " +
                 (keep_alive ? "keep-alive" : "connection per request"));
}
BENCHMARK(BM_HealthyStreams)
    ->ArgNames({"conc", "waves", "threads", "keep"})
    ->Args({64, 1, 1, 0})
    ->Args({64, 1, 1, 1})
    ->Args({64, 0, 1, 0})
    ->Args({64, 0, 1, 1})
    ->Args({64, 0, 2, 0})
    ->Args({64, 0, 2, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
