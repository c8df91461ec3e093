// The fleet simulation's speed (issue: at least 10^6 events per second per
// core; 10^4 agents over one simulated hour in under 10 s on 2 cores).
//
//   BM_FleetLoaded    one replicate of a loaded provider on one thread: 2,000
//                     agents, 20 tasks/s arriving for an hour, quota, capacity and queue,
//                     header timeouts, pools and gRPC throttling all at work.
//   BM_FleetHour/R    10^4 agents over one simulated hour (coordinated start,
//                     tasks back to back, 5 calls of 5 s streams each, 1%
//                     faults): R replicates on R threads (one replicate is
//                     one thread's work; two show the second core).
//   BM_HeapBaseline   the same number of events as BM_FleetLoaded pushed
//                     through a bare std::priority_queue of the same event
//                     size: the floor any event simulation pays, in the same
//                     run; `vs_heap` in BM_FleetLoaded is its time over this.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "relsim/fleet/fleet.hpp"

namespace {

using relsim::fleet::FleetResult;
using relsim::fleet::RunConfig;
using relsim::fleet::Scenario;

Scenario loaded() {
  Scenario s;
  s.agents = 2000;
  s.tenants = 4;
  s.start = relsim::fleet::parse_start("poisson:20");
  s.duration = 3600;
  s.quota = 600;
  s.capacity = 40;
  s.queue = 100;
  s.header_timeout = 3;
  s.pool = 30;
  s.throttle = relsim::fleet::parse_throttle("grpc:10,0.1");
  s.model.p = 0.05;
  s.model.q = 0.5;
  s.policy.kind = relsim::PolicyKind::layered;
  s.policy.n = 5;
  s.policy.r = 2;
  s.policy.s = 2;
  s.request_seconds = 2;
  return s;
}

Scenario hour() {
  Scenario s;
  s.agents = 10'000;
  s.tasks_per_agent = 1'000'000;
  s.duration = 3600;
  s.model.p = 0.01;
  s.model.q = 0.01;
  s.policy.kind = relsim::PolicyKind::layered;
  s.policy.n = 5;
  s.policy.r = 2;
  s.request_seconds = 5;
  return s;
}

std::int64_t loaded_events = 0;

void BM_FleetLoaded(benchmark::State& state) {
  RunConfig c;
  c.threads = 1;
  c.bin_seconds = 10;
  const Scenario s = loaded();
  std::int64_t events = 0;
  for (auto _ : state) {
    const FleetResult r = relsim::fleet::run_fleet(s, c);
    events = r.events;
    benchmark::DoNotOptimize(r.successes);
  }
  loaded_events = events;
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FleetLoaded)->Unit(benchmark::kMillisecond)->UseRealTime();

struct Event {
  double t;
  std::uint64_t seq, serial;
  std::uint32_t slot;
  std::uint8_t type;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// Pushes and pops as many events as BM_FleetLoaded processed, about as many
// pending at once as a loaded run holds (a few thousand).
void BM_HeapBaseline(benchmark::State& state) {
  const std::int64_t events = loaded_events > 0 ? loaded_events : 1'000'000;
  for (auto _ : state) {
    std::priority_queue<Event, std::vector<Event>, std::greater<>> heap;
    std::uint64_t x = 88172645463325252ull, seq = 0;
    for (int i = 0; i < 4096; ++i) heap.push(Event{static_cast<double>(i) * 1e-3, seq++, 0, 0, 0});
    for (std::int64_t i = 0; i < events; ++i) {
      const Event e = heap.top();
      heap.pop();
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift: the next event's delay
      heap.push(Event{e.t + static_cast<double>(x >> 40) * 1e-6, seq++, e.serial, e.slot, e.type});
    }
    benchmark::DoNotOptimize(heap.top().t);
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_HeapBaseline)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_FleetHour(benchmark::State& state) {
  RunConfig c;
  c.threads = static_cast<int>(state.range(0));
  c.replicates = static_cast<int>(state.range(0));
  c.bin_seconds = 60;
  const Scenario s = hour();
  std::int64_t events = 0, tasks = 0;
  for (auto _ : state) {
    const FleetResult r = relsim::fleet::run_fleet(s, c);
    events = r.events;
    tasks = r.tasks;
    benchmark::DoNotOptimize(r.successes);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FleetHour)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
