// The closed forms a reference agents' run is checked against
// (contention.hpp, add_predictions; docs/contention.md, "Numbers that can
// be checked before running"): counts worked out from the order of the
// agents run one at a time, the quota's 429s and its exhaustion time, the
// birthday bound on hashed keys, and the lost-update probability of an
// unlocked read-modify-write.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/contention/contention.hpp"

namespace relsim::contention {
namespace {

// Agents of tenant t among N: those i < N with i mod M = t.
std::int64_t agents_of(int t, int n, int m) { return n / m + (t < n % m ? 1 : 0); }

Prediction rate_prediction(std::string what, double value, const Rate& r) {
  Prediction p{std::move(what), value, r.value(), r.interval(), true};
  p.agrees = r.n == 0 || p.interval->covers(value);
  return p;
}

Prediction count_prediction(std::string what, double value, double measured) {
  return {std::move(what), value, measured, std::nullopt, std::abs(value - measured) < 0.5};
}

// Closed forms for agents run one at a time (--concurrency 1), where the
// order of the calls is the order of the agents (docs/contention.md).
void sequential_predictions(ContentionScores& s) {
  const ContentionConfig& c = s.config;
  const int n = c.agents, m = c.tenants;
  const bool naive = c.agent == AgentKind::naive;
  switch (c.scenario) {
    case Scenario::interleaved:
      // The first read and write of each naive agent after the first meet
      // the previous agent's entry (and memos, if any, meet at random: below).
      if (c.key_bits == 0 || !naive)
        s.predictions.push_back(count_prediction("collisions, one at a time", naive && m > 1 ? 2.0 * (n - 1) : 0.0,
                                                 double(s.collisions)));
      s.predictions.push_back(count_prediction("lost updates, one at a time", 0.0, double(s.lost_updates)));
      break;
    case Scenario::probe_pairs: {
      // Naive: both lookups of every agent after the first hit agent 0's
      // entry (tenant 0), all four wordings being alike past the threshold.
      const double wrong = naive ? 2.0 * double((n - 1) - (n - 1) / m) : 0.0;
      s.predictions.push_back(
          rate_prediction("wrong-tenant hit rate, one at a time", wrong / (2.0 * n), s.wrong_tenant_hits));
      break;
    }
    case Scenario::out_of_order: {
      // Naive: agent k takes one of k + 2 pending results at random (k left over, its own two).
      double right = 0.0;
      for (int k = 0; k < n; ++k) right += 1.0 / (k + 2);
      s.predictions.push_back(
          rate_prediction("stale accepted, one at a time", naive ? 1.0 - right / n : 0.0, s.stale_accepted));
      break;
    }
    case Scenario::crash_mid_write: {
      // Naive: agent 4 dies holding a lock that never expires; every agent after it waits out its deadline.
      const double after = naive && n > 5 ? n - 5 : 0;
      s.predictions.push_back(count_prediction("deadlocks, one at a time", after, double(s.deadlocks)));
      s.predictions.push_back(count_prediction("half-written records seen, one at a time", after,
                                               double(s.half_written_seen)));
      s.predictions.push_back(count_prediction("locks past TTL, one at a time", naive && n >= 5 ? 1 : 0,
                                               double(s.locks_past_ttl)));
      break;
    }
    case Scenario::burst: break;  // the same for any concurrency: below
    case Scenario::long_short:      // the fleet's simulation: long_short.cpp
    case Scenario::mixed: break;    // each scenario's own
  }
}

// The quota: a tenant's first Q calls are served, the rest refused; agent
// by agent, floor(Q / C) of its agents are served whole and every other one
// meets a 429 once (careful) or four times (naive, three retries at once).
void burst_prediction(ContentionScores& s) {
  const ContentionConfig& c = s.config;
  const std::int64_t calls = c.burst_calls, q = c.quota.calls;
  std::int64_t served = 0, refused = 0;
  for (int t = 0; t < c.tenants; ++t) {
    const std::int64_t n_t = agents_of(t, c.agents, c.tenants);
    served += std::min(q, n_t * calls);
    refused += std::max<std::int64_t>(0, n_t - q / calls) * (c.agent == AgentKind::naive ? 4 : 1);
  }
  const double rate = double(refused) / double(served + refused);
  if (c.concurrency == 1) {
    s.predictions.push_back(rate_prediction("tool 429 rate, one at a time", rate, s.tool_429));
    return;
  }
  // At once, the quota is spread over more agents, and more of them meet
  // a 429: one at a time is a lower bound.
  Prediction p = rate_prediction("tool 429 rate, at least (one at a time)", rate, s.tool_429);
  p.agrees = p.interval->high >= rate;
  s.predictions.push_back(std::move(p));
}

// A count's closed form with a band around it (`spread` each side, and
// half a count for rounding).
Prediction band_prediction(std::string what, double value, double measured, double low, double high) {
  Prediction p{std::move(what), value, measured, Interval{low, high}, true};
  p.agrees = p.interval->covers(measured);
  return p;
}

// The exhaustion time: a tenant's A agents all call at the moments k / R
// of one clock, so the tenant's call Q + 1, the first refused, goes at
// tick floor(Q / A): floor(Q / A) / R seconds after its first call. Nine
// agents at 0.42 calls a second use up 5,000 in 555 / 0.42 s, 22 minutes.
// Measured from the server's log for tenant t0 (the largest); a live call
// is late, never early, by the timers and the machine: the band is 5%
// below and one tick and 10% above, each with 10 ms for the clocks.
void quota_time_prediction(ContentionScores& s, const std::vector<Json>& log) {
  const ContentionConfig& c = s.config;
  const std::int64_t a = agents_of(0, c.agents, c.tenants), q = c.quota.calls;
  if (c.call_rate <= 0 || (c.concurrency > 0 && c.concurrency < c.agents) || a * c.burst_calls <= q) return;
  const double tick = 1.0 / c.call_rate, value = double(q / a) * tick;
  // The windows count from the server's start, and the agents' clock starts later: the prediction holds
  // well inside the first window.
  if (start_delay_seconds(c) + value * 1.1 + tick + 0.5 >= c.quota.window_ms / 1000.0) return;
  double first = -1, refused = -1;
  for (const Json& line : log) {
    if (line.value("tenant", "") != "t0" || !line.contains("t_ms")) continue;
    const double t = line["t_ms"].get<double>() / 1000.0;
    if (first < 0) first = t;
    if (line.value("stage", "") == "quota") {
      refused = t;
      break;
    }
  }
  const double measured = refused < 0 ? 0.0 : refused - first;
  s.predictions.push_back(band_prediction(fmt::format("seconds to use up tenant t0's tool quota ({} agents at {} calls/s)", a, c.call_rate),
                                          value, measured, 0.95 * value - 0.01, 1.1 * value + tick + 0.01));
}

// The occupancy problem (Feller, An Introduction to Probability Theory,
// II.5): n distinct texts hashed into B = 2^bits keys. The writes that
// meet an entry are n less the keys used, whatever the order; their mean
// is n - B (1 - (1 - 1/B)^n) and the keys used have variance
// B a1 + B (B - 1) a2 - B^2 a1^2 with a_j = (1 - j/B)^n. Past 2^20 keys
// (where the difference of terms near B^2 would lose the variance to
// rounding), the pairs that collide, n (n - 1) / 2B, and a Poisson
// variance: for n <= 2000 agents the next term is under 10^-3.
struct Occupancy {
  double mean = 0, variance = 0;
};
Occupancy shared_keys(std::int64_t n, int bits) {
  if (bits > 20) {
    const double pairs = double(n) * double(n - 1) / 2.0 / std::ldexp(1.0, bits);
    return {pairs, pairs};
  }
  const long double b = std::ldexp(1.0L, bits), nn = static_cast<long double>(n);
  const long double a1 = std::pow(1.0L - 1.0L / b, nn), a2 = std::pow(1.0L - 2.0L / b, nn);
  const long double used = b * (1.0L - a1), var = b * a1 + b * (b - 1.0L) * a2 - b * b * a1 * a1;
  return {static_cast<double>(nn - used), std::max(0.0, static_cast<double>(var))};
}

// Memo keys (--key-bits): the naive agents hash N texts into 2^W keys with
// no tenant; the careful ones keep all 64 bits after the tenant, so only
// agents of one tenant could meet, with odds of about 2^-64. Band: 4
// standard deviations and half a count.
void memo_prediction(ContentionScores& s) {
  const ContentionConfig& c = s.config;
  Occupancy o;
  if (c.agent == AgentKind::naive) {
    o = shared_keys(c.agents, c.key_bits);
  } else {
    for (int t = 0; t < c.tenants; ++t) {
      const Occupancy one = shared_keys(agents_of(t, c.agents, c.tenants), 64);
      o.mean += one.mean;
      o.variance += one.variance;
    }
  }
  const double band = 4.0 * std::sqrt(o.variance) + 0.5;
  s.predictions.push_back(band_prediction(
      fmt::format("memo writes that met another agent's entry ({} keys of {} bits)", c.agents,
                  c.agent == AgentKind::naive ? c.key_bits : 64),
      o.mean, double(s.key_collisions), o.mean - band, o.mean + band));
}

// Rounds (--think D, --spread S): every agent reads once a round, at a
// moment uniform over S, and writes D later. A round loses an update
// exactly when two of its N reads fall within D of each other (the later
// reader has not seen the earlier one's write, and overwrites it), and N
// uniform moments are all D apart with probability (1 - (N - 1) D / S)^N
// (the spacings of uniform points: Feller, I.9). The careful agent's
// compare-and-set loses none.
void rounds_prediction(ContentionScores& s) {
  const ContentionConfig& c = s.config;
  const double apart = std::pow(std::max(0.0, 1.0 - (c.agents - 1) * c.think_s / c.spread_s), c.agents);
  s.predictions.push_back(rate_prediction(
      fmt::format("rounds that lost an update ({} reads over {} s, each written {} s later)", c.agents, c.spread_s,
                  c.think_s),
      c.agent == AgentKind::naive ? 1.0 - apart : 0.0, s.rounds_lost));
}

}  // namespace

void add_predictions(ContentionScores& s, const std::vector<Json>& log) {
  const ContentionConfig& c = s.config;
  if (c.scenario == Scenario::burst) {
    burst_prediction(s);
    quota_time_prediction(s, log);
  } else if (c.concurrency == 1) {
    sequential_predictions(s);
  }
  if (c.scenario == Scenario::interleaved && c.key_bits > 0) memo_prediction(s);
  if (c.scenario == Scenario::interleaved && rounds(c) > 0) rounds_prediction(s);
}

}  // namespace relsim::contention
