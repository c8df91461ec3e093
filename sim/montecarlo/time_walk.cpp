// One task of time mode (montecarlo/time_walk.hpp): the jump chain of the
// generator drawn event by event, the policy through TaskRunner, the gaps
// from the time model's rules.
#include "montecarlo/time_walk.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "relsim/core/error.hpp"

namespace relsim::detail {
namespace {

// Cumulative sums of `weights` (negative entries count as 0), the last
// positive entry's set to exactly 1 so that a uniform on [0, 1) always finds
// an index with a positive weight.
std::vector<double> cumulative(const std::vector<double>& weights) {
  std::vector<double> cum(weights.size(), 0.0);
  double sum = 0.0;
  std::size_t last = weights.size();
  for (std::size_t j = 0; j < weights.size(); ++j) {
    if (weights[j] > 0.0) {
      sum += weights[j];
      last = j;
    }
    cum[j] = sum;
  }
  if (last == weights.size()) return cum;  // nothing positive: never searched
  for (std::size_t j = 0; j < weights.size(); ++j) cum[j] = j >= last ? 1.0 : cum[j] / sum;
  return cum;
}

// The first index j with u < cum[j], skipping `skip`.
int search(const double* cum, int size, double u, int skip) {
  for (int j = 0; j < size; ++j)
    if (j != skip && u < cum[j]) return j;
  RELSIM_ASSERT(false);
  return 0;
}

}  // namespace

TimeSimScheme TimeSimScheme::make(const TimeModel& time, const Policy& policy, const FaultWeights& kinds) {
  TimeSimScheme s;
  s.time = &time;
  s.policy = policy;
  // Model{} (p = 0) is only there to build the kind cuts, which depend on the
  // weights alone; the thresholds are not read.
  s.kinds = DrawScheme::make(Model{}, policy, kinds);
  const TimeChain& c = time.chain;
  s.states = static_cast<int>(c.states());
  const auto k = static_cast<std::size_t>(s.states);
  s.rate.resize(k);
  s.jump.resize(k * k);
  s.bad.resize(k);
  std::vector<double> weights(k);
  for (std::size_t i = 0; i < k; ++i) {
    const auto ii = static_cast<Eigen::Index>(i);
    s.bad[i] = c.bad(ii);
    for (std::size_t j = 0; j < k; ++j) weights[j] = j == i ? 0.0 : c.generator(ii, static_cast<Eigen::Index>(j));
    const std::vector<double> row = cumulative(weights);
    std::copy(row.begin(), row.end(), s.jump.begin() + static_cast<std::ptrdiff_t>(i * k));
    // The rate of leaving is the off-diagonal sum, which is -Q(i,i) for a
    // generator and never negative.
    double out = 0.0;
    for (const double w : weights) out += w > 0.0 ? w : 0.0;
    s.rate[i] = out;
  }
  for (std::size_t j = 0; j < k; ++j) weights[j] = c.initial(static_cast<Eigen::Index>(j));
  s.initial = cumulative(weights);
  return s;
}

double TimeSimScheme::sojourn(int state, StreamReader& chain) const {
  const double r = rate[static_cast<std::size_t>(state)];
  if (!(r > 0.0)) return std::numeric_limits<double>::infinity();  // absorbing
  // -log(1 - u) / r with u on [0, 1): exponential of rate r, never infinite.
  return -std::log1p(-chain.uniform()) / r;
}

int TimeSimScheme::target(int state, StreamReader& chain) const {
  if (states == 2) return 1 - state;  // the only other state: no draw
  return search(jump.data() + static_cast<std::ptrdiff_t>(state) * states, states, chain.uniform(), state);
}

ChainPosition TimeSimScheme::stationary(StreamReader& chain) const {
  ChainPosition at;
  at.state = search(initial.data(), states, chain.uniform(), -1);
  at.to_jump = sojourn(at.state, chain);
  return at;
}

void TimeSimScheme::advance(ChainPosition& at, double seconds, StreamReader& chain) const {
  at.to_jump -= seconds;
  // A jump exactly at the instant counts: the path is right-continuous.
  while (at.to_jump <= 0.0) {
    at.state = target(at.state, chain);
    at.to_jump += sojourn(at.state, chain);
  }
}

void TimeSimScheme::add_fallback(const Fallback& fallback, const Eigen::VectorXd& second) {
  RELSIM_ASSERT(second.size() == states);
  second_bad.assign(second.data(), second.data() + second.size());
  second_kinds = DrawScheme::make(Model{}, policy, fallback.kinds);
  after = fallback.after;
  cooldown = fallback.cooldown;
}

double TimeSimScheme::draw_duration(StreamReader& duration) const {
  const std::vector<double>& law = time->request_law;
  const auto size = static_cast<double>(law.size());
  // u < 1, so the index is below size; min() guards the last rounding.
  const auto at = static_cast<std::size_t>(std::min(size - 1.0, std::floor(duration.uniform() * size)));
  return law[at];
}

bool TimeSimScheme::emits_bad(int state, int provider, StreamReader& emission) const {
  const double b = (provider == 0 ? bad : second_bad)[static_cast<std::size_t>(state)];
  if (b >= 1.0) return true;
  if (b <= 0.0) return false;
  return emission.uniform() < b;
}

TimedTask walk_time_task(const TimeSimScheme& s, std::uint64_t seed, std::uint64_t task, bool fresh, bool carry,
                         ChainPosition& at, std::array<std::int64_t, kFaultKinds>& faults,
                         std::vector<TimedRequest>* trace) {
  StreamReader chain(seed, rng::Stream::time_chain, task), emission(seed, rng::Stream::emission, task);
  StreamReader kind(seed, rng::Stream::kind, task), jitter(seed, rng::Stream::jitter, task);
  StreamReader duration(seed, rng::Stream::duration, task);
  const TimeModel& time = *s.time;
  if (fresh) at = s.stationary(chain);
  TimedTask out{TaskRunner(s.policy)};
  TaskRunner& runner = out.runner;
  CooldownClock first(s.cooldown);
  bool written = false;  // the cached prefix (Billing::cached_tokens)
  double start = 0.0;  // the current request's start, from the task's first
  for (;;) {
    const CallState from = runner.state();
    const int provider = s.provider(from.used, first.cooling(start));
    std::optional<FaultKind> fault;
    if (s.emits_bad(at.state, provider, emission)) {
      fault = (provider == 0 ? s.kinds : s.second_kinds).kind(kind.word());
      ++faults[static_cast<std::size_t>(*fault)];
    }
    if (trace) trace->push_back({fault, start});
    out.second += provider;
    if (s.nano) {
      out.nano_dollars += (*s.nano)[static_cast<std::size_t>(provider)]
                                   [fault ? static_cast<std::size_t>(*fault) : static_cast<std::size_t>(kFaultKinds)];
      if (!written && Billing::billed(fault)) {
        out.nano_dollars += s.cache_write;  // the cached prefix's write
        written = true;
      }
    }
    const std::int64_t calls = runner.call();
    runner.feed(fault);
    const double took = time.drawn(fault) ? s.draw_duration(duration) : time.seconds_of(fault);
    if (fault && provider == 0) first.failed(start + took);
    if (runner.ended()) {
      out.seconds = start + took;
      if (carry) s.advance(at, took + time.think_seconds, chain);
      return out;
    }
    double gap = took;
    if (runner.call() != calls) {
      gap += time.think_seconds;  // a good request ended the call: the next call's first request
    } else {
      const Wait w = wait_before(time, from, runner.state(), *fault);
      gap += w.jitter > 0.0 ? w.max * (1.0 - w.jitter * jitter.uniform()) : w.max;
    }
    s.advance(at, gap, chain);
    start += gap;
  }
}

}  // namespace relsim::detail
