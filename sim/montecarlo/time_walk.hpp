#pragma once
// Internal: one task of simulate_time (simulate_time.hpp) walked request by
// request over the continuous-time chain, drawn event by event: exponential
// sojourns and the jump chain, from the generator alone (no exp(Qt)).
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "relsim/core/fallback.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/trace_time.hpp"

namespace relsim::detail {

// One named stream of one task read in order, one Philox block at a time:
// the i-th uniform() is rng::uniform(seed, stream, task, i) and the i-th
// word() is rng::word(seed, stream, task, i). A stream is read by one of the
// two only.
class StreamReader {
 public:
  StreamReader(std::uint64_t seed, rng::Stream stream, std::uint64_t task)
      : seed_(seed), task_(task), stream_(stream) {}
  double uniform() {
    const unsigned h = next(2);
    return rng::u53(block_[h], block_[h + 1]);
  }
  std::uint32_t word() { return block_[next(1)]; }

 private:
  // The position in the current block of the next `width` words.
  unsigned next(unsigned width) {
    if (words_ % 4 == 0) block_ = rng::block(seed_, stream_, task_, words_ / 4);
    const auto at = static_cast<unsigned>(words_ % 4);
    words_ += width;
    return at;
  }
  std::uint64_t seed_, task_;
  rng::Stream stream_;
  std::uint64_t words_ = 0;  // words of the stream used so far
  rng::Block block_{};
};

// The hidden state and the time left before it jumps, at some instant.
struct ChainPosition {
  int state = 0;
  double to_jump = 0.0;
};

// A request's cost in nano-dollars, [provider][kind], [provider][kFaultKinds] a good one.
using NanoTable = std::array<std::array<std::int64_t, kFaultKinds + 1>, 2>;

// The chain's jump structure and everything else a task's walk reads, made
// once per run.
struct TimeSimScheme {
  const TimeModel* time = nullptr;
  Policy policy;
  DrawScheme kinds;  // only its kind cuts are used: a bad request's kind as in simulate()
  int states = 0;
  std::vector<double> rate;     // -Q(i,i): the rate of leaving state i
  std::vector<double> jump;     // jump[i * states + j]: P(target <= j | leaving i), the last target's set to 1
  std::vector<double> initial;  // cumulative chain.initial, its last positive entry set to 1
  std::vector<double> bad;      // P(request bad | state)
  // With a fallback (core/fallback.hpp) the chain is both providers'
  // (fallback_time_chain) and `bad` the first's emissions.
  std::vector<double> second_bad;  // P(a request to the second provider is bad | state); empty: no fallback
  DrawScheme second_kinds;
  int after = 0;  // the fallback's K
  std::optional<Cooldown> cooldown;
  std::optional<NanoTable> nano;  // with a billing
  std::int64_t cache_write = 0;    // nano-dollars a task's first billed request adds (nano_surcharge)

  // Throws InputError for an invalid policy or weights.
  static TimeSimScheme make(const TimeModel& time, const Policy& policy, const FaultWeights& kinds);
  // time.chain must be fallback_time_chain's, `second_bad` its second_bad.
  void add_fallback(const Fallback& fallback, const Eigen::VectorXd& second_bad);
  // A drawn request's seconds: an entry of time->request_law, each as likely.
  double draw_duration(StreamReader& duration) const;

  // The provider a request goes to (0 the first, 1 the second): the
  // fallback's rule, and the second while the first cools down.
  int provider(int used, bool cooling) const {
    if (second_bad.empty()) return 0;
    return to_second_provider(used, after) || cooling ? 1 : 0;
  }

  // A state drawn from chain.initial and its sojourn: by memorylessness the
  // time left in a state seen at a fixed instant is a whole sojourn.
  ChainPosition stationary(StreamReader& chain) const;
  // The chain `seconds` later.
  void advance(ChainPosition& at, double seconds, StreamReader& chain) const;
  bool emits_bad(int state, int provider, StreamReader& emission) const;

 private:
  double sojourn(int state, StreamReader& chain) const;
  int target(int state, StreamReader& chain) const;
};

struct TimedTask {
  TaskRunner runner;
  double seconds = 0.0;            // first request's start to last request's end
  std::int64_t second = 0;         // requests sent to the second provider
  std::int64_t nano_dollars = 0;   // with TimeSimScheme::nano: what the task's requests cost
};

// Task `task`. fresh: its first request sees a state drawn from
// chain.initial (`at` is overwritten); otherwise `at` is the chain at its
// first request. carry: on return `at` is the chain at the next task's first
// request, d_last + think_seconds after the last request started. Bad
// requests sent are counted into `faults`; with `trace`, each request sent
// is appended to it with its start (trace_time.hpp).
TimedTask walk_time_task(const TimeSimScheme& s, std::uint64_t seed, std::uint64_t task, bool fresh, bool carry,
                         ChainPosition& at, std::array<std::int64_t, kFaultKinds>& faults,
                         std::vector<TimedRequest>* trace = nullptr);

}  // namespace relsim::detail
