// The mock server under load (issue 8): 1,000 concurrent connections on
// loopback, a mix of healthy streams, slow senders and clients that vanish
// mid-stream, in three rounds against one Server. The server must stay up,
// keep its memory bounded, finish every healthy stream and release every
// connection.
//
// The client (load/storm_client.hpp) is raw Asio on one io_context run by
// one thread, so its state needs no lock; the test thread steers it through
// the server's own waits (wait_finished, open_gate) and a mutex-guarded
// tally. Every healthy stream and every vanisher is held at a gate before
// its first delta until all 1,000 connections are open at once, which is
// what makes the peak a fact rather than a hope. Nothing asserts on speed:
// each round has a watchdog that closes every client socket at a hard
// deadline, so a misbehaving server turns into a failure, never a hang.
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without it

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "load/storm_client.hpp"
#include "relsim/server/server.hpp"
#include "support/fd_limit.hpp"
#include "support/run.hpp"

namespace load_test {

using namespace relsim::test::storm;

// The mix of one storm. Stallers go last so that their read_timeout, which
// runs from the accept, starts as late as possible before the peak.
struct Mix {
  Kind kind;
  int count;
};
constexpr std::array<Mix, 7> kMix = {{{Kind::healthy, 300},
                                      {Kind::healthy_close, 300},
                                      {Kind::vanish_held, 100},
                                      {Kind::vanish_paced, 100},
                                      {Kind::trickle, 100},
                                      {Kind::stall_head, 50},
                                      {Kind::stall_body, 50}}};
constexpr int kConnections = 1000;
constexpr int kRounds = 3;
constexpr std::int64_t kFreshTask = 100'000;  // the single request after each storm
// Before each event of a vanisher's paced stream. The client goes away after
// the first delta, and the server must still have events to write then, or
// it logs the stream complete: at 20 ms the four left took 80 ms, and in the
// ASan run of 2026-12-05 (third round, the TSan build beside it) every
// vanisher of the round closed later than that. At 200 ms they take 800 ms.
constexpr std::int64_t kPacedDelayMs = 200;
constexpr auto kTestLimit = 60s;       // the whole test, storms and checks
constexpr auto kRoundLimit = 30s;      // one storm's watchdog (never reached when the server is right)
constexpr auto kCloseLimit = 10s;      // for the server to drop its connections after a storm
constexpr rlim_t kFdsNeeded = 2 * kConnections + 256;  // both ends of every connection live in this process

bool streams_to_the_end(Kind k) { return k == Kind::healthy || k == Kind::healthy_close || k == Kind::trickle; }
bool vanishes(Kind k) { return k == Kind::vanish_held || k == Kind::vanish_paced; }
bool stalls(Kind k) { return k == Kind::stall_head || k == Kind::stall_body; }

// --- process figures ------------------------------------------------------------

// VmRSS and VmHWM of this process (client and server together), in KiB.
struct Memory {
  long rss_kib = 0;
  long hwm_kib = 0;
};
Memory memory_now() {
  Memory m;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) m.rss_kib = std::stol(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0) m.hwm_kib = std::stol(line.substr(6));
  }
  return m;
}
double mib(long kib) { return static_cast<double>(kib) / 1024.0; }

using relsim::test::FdLimit;

std::string_view name_of(Kind k) {
  switch (k) {
    case Kind::healthy: return "healthy";
    case Kind::healthy_close: return "healthy_close";
    case Kind::vanish_held: return "vanish_held";
    case Kind::vanish_paced: return "vanish_paced";
    case Kind::trickle: return "trickle";
    case Kind::stall_head: return "stall_head";
    case Kind::stall_body: return "stall_body";
  }
  return "?";
}

// --- the storm ----------------------------------------------------------------------

ScriptEntry gated(const std::string& gate, std::int64_t chunk_delay_ms = 0) {
  ScriptEntry e = ScriptEntry::ok();
  e.gate = gate;
  e.chunk_delay_ms = chunk_delay_ms;
  return e;
}

std::string expected_end(Kind k) { return streams_to_the_end(k) ? "complete" : "client_gone"; }

struct RoundFigures {
  int client_peak = 0;
  std::size_t server_peak = 0;
  std::size_t ready = 0;
  std::size_t gate_released = 0;
  int completed = 0, vanished = 0, slow_completed = 0, stalls_timed_out = 0, problems = 0;
  double seconds = 0.0;
  Memory memory;
};

// Polls `pred` until it holds or `until` passes (the server exposes no wait
// on its connection count; this only observes, it never paces the storm).
template <class Pred>
bool poll_until(Pred pred, Clock::time_point until) {
  for (;;) {
    if (pred()) return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(2ms);
  }
}

RoundFigures storm(Server& server, std::int64_t round, Clock::time_point test_deadline) {
  RoundFigures f;
  const auto t0 = Clock::now();
  const auto deadline = std::min(t0 + kRoundLimit, test_deadline);
  const std::string gate = fmt::format("load-{}", round);
  // The fresh request of the round before may still be closing.
  EXPECT_TRUE(poll_until([&] { return server.connections() == 0; }, deadline));

  Round r(server.port(), round, deadline);
  std::int64_t task = 0;
  for (const Mix& m : kMix)
    for (int i = 0; i < m.count; ++i, ++task) {
      if (m.kind == Kind::vanish_paced) server.set_script(task, {gated(gate, kPacedDelayMs)});
      else if (m.kind == Kind::trickle) server.set_script(task, {ScriptEntry::ok()});
      else server.set_script(task, {gated(gate)});  // stallers never take it: their request never arrives
      r.add(m.kind, task);
    }
  EXPECT_EQ(task, kConnections);

  r.start();
  const bool all_ready = r.wait_ready(deadline);
  f.ready = r.ready_count();
  EXPECT_TRUE(all_ready) << "round " << round << ": only " << f.ready << " of " << kConnections
                         << " connections reached their waiting point";
  // Healthy streams and vanishers prove their accept by the events they got;
  // for slow senders, wait until the server has accepted them too.
  poll_until(
      [&] {
        f.server_peak = std::max(f.server_peak, server.connections());
        return f.server_peak >= static_cast<std::size_t>(kConnections);
      },
      deadline);

  auto left = [&] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()), 0ms);
  };
  std::size_t not_held = 0;
  for (const auto& c : r.conns())
    if (!stalls(c->kind) && c->kind != Kind::trickle) not_held += !server.wait_held(c->task, 1, left());
  EXPECT_EQ(not_held, 0u) << "round " << round << ": replies not waiting at the gate";

  // Vanishers at the gate go away first, and the server must notice while
  // their replies are still held; then the gate lets everything else go on.
  r.go();
  for (const auto& c : r.conns()) {
    if (c->kind == Kind::vanish_held) {
      EXPECT_TRUE(server.wait_finished(c->task, static_cast<std::size_t>(round) + 1, left()))
          << "task " << c->task << ": the held reply of a vanished client did not end";
    }
  }
  f.gate_released = server.open_gate(gate);

  EXPECT_TRUE(r.wait_done(deadline + 1s)) << "round " << round << ": the client did not finish";
  r.join();
  EXPECT_FALSE(r.watchdog_fired()) << "round " << round << ": the watchdog closed the client";
  f.client_peak = r.peak_open();

  // Every connection must be let go by the server, stallers included.
  const bool released = poll_until([&] { return server.connections() == 0; }, Clock::now() + kCloseLimit);
  EXPECT_TRUE(released) << "round " << round << ": the server still holds " << server.connections()
                        << " connections after every client closed";

  std::vector<std::string> shown;
  for (const auto& c : r.conns()) {
    std::string problem = c->problem;
    if (problem.empty() && !c->ready) problem = "never reached its waiting point";
    // The server's own account of the request. Its connections are all
    // closed by now, so every request it read has finished.
    const std::size_t i = static_cast<std::size_t>(round);
    const relsim::TaskLog log = server.log(c->task);
    if (problem.empty() && stalls(c->kind)) {
      if (!log.requests.empty()) problem = fmt::format("a stalled request was logged as {}", log.requests[0].end);
    } else if (problem.empty()) {
      if (log.requests.size() != i + 1 || log.requests[i].end.empty()) {
        problem = fmt::format("the server logged {} requests, the last unfinished", log.requests.size());
      } else {
        const relsim::LoggedRequest& req = log.requests[i];
        if (req.end != expected_end(c->kind) || req.status != 200 || req.index != round)
          problem = fmt::format("logged as {} {} (index {}), expected {}", req.status, req.end, req.index,
                                expected_end(c->kind));
      }
    }
    if (!problem.empty()) {
      ++f.problems;
      if (shown.size() < 10) shown.push_back(fmt::format("task {} ({}): {}", c->task, name_of(c->kind), problem));
      continue;
    }
    if (c->kind == Kind::trickle) ++f.slow_completed;
    if (streams_to_the_end(c->kind)) ++f.completed;
    if (vanishes(c->kind)) ++f.vanished;
    if (stalls(c->kind)) ++f.stalls_timed_out;
  }
  for (const auto& s : shown) ADD_FAILURE() << "round " << round << ": " << s;

  f.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  f.memory = memory_now();
  return f;
}

// A single healthy request on a fresh connection, after a storm.
bool fresh_request_streams(Server& server, std::int64_t k, Clock::time_point test_deadline) {
  server.set_script(kFreshTask, {ScriptEntry::ok()});
  Round r(server.port(), k, std::min(Clock::now() + 10s, test_deadline));
  r.add(Kind::healthy, kFreshTask);
  r.start();
  r.go();
  r.wait_done(Clock::now() + 11s);
  r.join();
  const Conn& c = *r.conns().front();
  EXPECT_EQ(c.problem, "") << "the fresh request after storm " << k;
  return c.problem.empty();
}

TEST(Load, ThousandConcurrentHealthySlowAndVanishingClientsLeaveTheServerWholeAndBounded) {
  FdLimit fds(kFdsNeeded);
  if (fds.soft() < kFdsNeeded)
    RELSIM_SKIP_OR_FAIL("needs " << kFdsNeeded << " file descriptors (both ends of " << kConnections
                 << " connections live in this process) but the hard RLIMIT_NOFILE is " << fds.hard()
                 << "; raise it (ulimit -Hn) to run the load test");

  const auto test_deadline = Clock::now() + kTestLimit;
  relsim::ServerConfig config;  // the defaults: read_timeout 5 s times the stallers out
  config.threads = 2;
  Server server(config);
  const Memory before = memory_now();

  std::vector<RoundFigures> rounds;
  for (std::int64_t k = 0; k < kRounds && !HasFailure(); ++k) {  // a failed storm makes the next ones noise
    rounds.push_back(storm(server, k, test_deadline));
    const RoundFigures& f = rounds.back();
    ASSERT_TRUE(fresh_request_streams(server, k, test_deadline)) << "the server stopped answering after storm " << k;
    EXPECT_EQ(f.client_peak, kConnections) << "round " << k;
    EXPECT_EQ(f.server_peak, static_cast<std::size_t>(kConnections)) << "round " << k;
    // The gate held every healthy stream and every paced vanisher (the held
    // vanishers had gone already).
    EXPECT_EQ(f.gate_released, 600u + 100u) << "round " << k;
    EXPECT_EQ(f.completed, 700) << "round " << k;  // 600 healthy + 100 trickled, every one whole
    EXPECT_EQ(f.vanished, 200) << "round " << k;
    EXPECT_EQ(f.stalls_timed_out, 100) << "round " << k;
    EXPECT_EQ(f.problems, 0) << "round " << k;
    const std::string line = fmt::format(
        "load round {}: connections held at peak {} (server {}), streams completed {} (of them trickled {}), "
        "vanished {}, stalled and timed out {}, wall {:.2f} s, VmRSS {:.1f} MiB, VmHWM {:.1f} MiB, fd soft limit {}",
        k, f.client_peak, f.server_peak, f.completed, f.slow_completed, f.vanished, f.stalls_timed_out, f.seconds,
        mib(f.memory.rss_kib), mib(f.memory.hwm_kib), static_cast<unsigned long long>(fds.soft()));
    std::printf("%s\n", line.c_str());
    RecordProperty(fmt::format("round{}", k), line);
  }
  ASSERT_EQ(rounds.size(), static_cast<std::size_t>(kRounds));

  // Memory: bounded overall, and not growing from round to round beyond the
  // request log, which keeps every request (900 a round, just under 1 KiB
  // each with its headers and body: about 0.9 MiB a round, measured over nine
  // rounds). The bounds leave room for the allocator; a leak of even 8 KiB a
  // connection would add 16 MiB over the two later rounds.
  const Memory after = memory_now();
  const long growth_kib = after.rss_kib - rounds.front().memory.rss_kib;
  const long peak_over_start_kib = after.hwm_kib - before.rss_kib;
  std::printf(
      "load: VmRSS before %.1f MiB, after round 1 %.1f MiB, after round %d %.1f MiB (growth over the later rounds "
      "%.1f MiB), VmHWM %.1f MiB (%.1f MiB over the start)\n",
      mib(before.rss_kib), mib(rounds.front().memory.rss_kib), kRounds, mib(after.rss_kib), mib(growth_kib),
      mib(after.hwm_kib), mib(peak_over_start_kib));
  RecordProperty("peak_rss_mib", fmt::format("{:.1f}", mib(after.hwm_kib)));
#if defined(__SANITIZE_ADDRESS__) || defined(RELSIM_ASAN_LIBRARY)
  // ASan's quarantine holds freed memory back on purpose: report, don't judge.
  // (The tests' own code is not instrumented under scripts/sanitize.sh asan,
  // so RELSIM_ASAN_LIBRARY says the library, and so malloc, is.)
  std::printf("load: built with AddressSanitizer, memory bounds not asserted\n");
#else
  EXPECT_LT(peak_over_start_kib, 256L * 1024) << "the storms took more than 256 MiB";
  EXPECT_LT(growth_kib, 16L * 1024) << "memory grew by more than 16 MiB between the first and the last storm";
#endif
  // The last fresh request's connection closes on the server's own time.
  EXPECT_TRUE(poll_until([&] { return server.connections() == 0; }, Clock::now() + kCloseLimit))
      << server.connections() << " connections still open at the end";
}

}  // namespace load_test
