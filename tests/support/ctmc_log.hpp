#pragma once
// Logs with timestamps drawn from the two-state chain of time mode by this
// sampler of the tests' own (docs/time.md, The chain in continuous time),
// written from the definition and nothing of relsim's code: each task's chain
// starts in the stationary law (bad with t_bad / (t_good + t_bad)) and runs
// by exponential holding times; the task's requests start at gaps uniform in
// [gap_low, gap_high] s, and a request is bad when the chain is bad at its
// start. Header-only.
#include <functional>
#include <random>

namespace relsim::test {

struct CtmcLog {
  double t_good = 300, t_bad = 60;
  int tasks = 300, requests = 10;
  double gap_low = 5, gap_high = 40;
  std::uint64_t seed = 1;
};

// Calls `request(task, seconds, bad)` for every request, task by task in
// order of start; task k starts at 1000 k seconds.
inline void draw_ctmc_log(const CtmcLog& log, const std::function<void(int, double, bool)>& request) {
  std::mt19937_64 rng(log.seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::exponential_distribution<double> good(1.0 / log.t_good), bad(1.0 / log.t_bad);
  for (int k = 0; k < log.tasks; ++k) {
    bool state = u(rng) < log.t_bad / (log.t_good + log.t_bad);
    double now = 1000.0 * k, change = now + (state ? bad(rng) : good(rng));
    for (int i = 0; i < log.requests; ++i) {
      if (i > 0) now += log.gap_low + (log.gap_high - log.gap_low) * u(rng);
      while (change <= now) {
        state = !state;
        change += state ? bad(rng) : good(rng);
      }
      request(k, now, state);
    }
  }
}

}  // namespace relsim::test
