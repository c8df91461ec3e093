#pragma once
// The mock server's outage mode (docs/wire.md, Outage mode): instead of a
// script per task, every request is good or bad by the state, at the moment
// the server reads it, of Gilbert's two-state chain in continuous time
// (two_state_time_chain: mean good and bad sojourns t_good and t_bad model
// seconds) running in scaled real time, as a fault toggled on and off by hand
// would be. One model second lasts time_scale wall seconds (as
// ClientTiming::time_scale shrinks the client's backoff), and the clock
// starts with the server (the zero of the request log's received_ms).
//
// The on/off schedule is a pure function of the seed, fixed before the first
// request (docs/methods.md): the first state is bad with the stationary
// probability p = t_bad / (t_good + t_bad), from uniform 0 of Philox stream
// `outage` (counter task 0), and sojourn j lasts -mean log(1 - u) with u the
// uniform j + 1 of the same stream, mean t_good or t_bad by its state. By the
// memorylessness of the exponential the first sojourn's remainder has the
// same law, so the state at any fixed time is stationary: a task that starts
// at a time chosen without looking at the schedule sees what the exact
// engine's fresh scope assumes. A bad request's fault kind is drawn from the
// kind weights as the simulator draws kinds: word k of stream `kind` for
// counter task t (request k of task t), cut by the weights' shares.
#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/faults.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/rng.hpp"

namespace relsim {

struct OutageConfig {
  double t_good = 0.0, t_bad = 0.0;  // mean sojourns, model seconds
  double time_scale = 1.0;           // wall seconds per model second
  std::uint64_t seed = rng::kReferenceSeed;
  FaultWeights kinds = FaultWeights::in_stream_uniform();
};

// A mean sojourn shorter than this many wall seconds could not be told
// apart from the server's own latency.
inline constexpr double kMinOutageSojournWall = 1e-3;
// Throws InputError naming the bad value and its range: t_good and t_bad in
// (0, 1e9] model seconds, time_scale in [1e-6, 1e3], each mean sojourn at
// least kMinOutageSojournWall wall seconds, kinds as parse_fault_weights.
void validate(const OutageConfig& config);

// "T_GOOD,T_BAD" (model seconds), e.g. "120,30". Throws InputError naming the
// bad part.
std::array<double, 2> parse_outage_sojourns(std::string_view spec);

// A stretch of bad time, [start, end) in model seconds.
struct OutageInterval {
  double start = 0.0, end = 0.0;
  bool operator==(const OutageInterval&) const = default;
};

// The schedule kept so far: bad intervals from `from` on (0 unless the
// schedule outgrew kMaxOutageSwitches and its oldest part was let go).
struct OutageView {
  double from = 0.0;
  double now = 0.0;  // the clock when the view was taken, model seconds
  std::vector<OutageInterval> bad;
};

// Switch times the schedule keeps; past that the oldest half is let go (the
// draws are pure, so a question about a time before them is answered by
// drawing again from the start).
inline constexpr std::size_t kMaxOutageSwitches = 2'000'000;

// The schedule, drawn on demand as far as it is asked about. Not thread
// safe: the server asks it under its own mutex.
class OutageSchedule {
 public:
  explicit OutageSchedule(const OutageConfig& config);  // validates

  const OutageConfig& config() const { return config_; }
  // The state at model time t >= 0.
  bool bad_at(double t);
  // The bad intervals that start before `until` (the last may end after it),
  // from the oldest kept.
  OutageView view(double until);
  // The fault kind of request `index` of `task` when it is bad.
  FaultKind kind_of(std::int64_t task, std::int64_t index) const;

 private:
  // Sojourn j ends at switches_[j - forgotten_].
  void extend_past(double t);
  bool bad_sojourn(std::uint64_t j) const { return (j % 2 == 0) == first_bad_; }
  double sojourn(std::uint64_t j) const;

  OutageConfig config_;
  bool first_bad_ = false;
  std::deque<double> switches_;
  std::uint64_t forgotten_ = 0;  // sojourns let go from the front
  KindCuts cut_{};
};

// The reply of GET /control/outage: {"t_good", "t_bad", "time_scale", "seed",
// "kinds", "p", "now", "from", "bad": [[start, end], ...]}.
Json to_json(const OutageConfig& config, const OutageView& view);

}  // namespace relsim
