// The fallback to a second provider in the exact engine (docs/model.md,
// Fallback) against references outside its product chain and its walk:
//   - closed forms for independent providers under the simple policy: a call
//     succeeds with 1 - p^K p2^(r+1-K), sends request j + 1 with the product
//     of the fault rates of the j before it, and is billed at its provider's
//     prices; 200 random parameter sets, to 1e-12;
//   - a brute force over every reply sequence, each provider's chain (and the
//     shared outage's) stepped by its own two-state m-step law written out
//     by hand, the requests routed by the count TaskRunner keeps: success,
//     every outcome class, every requests bin, the cost's mean, done mean and
//     every cost bin, for every policy, independent and correlated, to 1e-12;
//   - in seconds, the same brute force with each chain moved by its two-state
//     law e^{-t(1/t_good + 1/t_bad)} over each request's duration and wait:
//     success, mean seconds and cost, every wall-time bin;
//   - identities: a fallback after the call's last request is no fallback.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "relsim/core/billing.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/fallback.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"

// Named, not anonymous: the unit tests build as unity batches.
namespace fallback_exact_test {

using namespace relsim;

double rel_err(double got, double want) { return std::abs(got - want) / std::max(1.0, std::abs(want)); }

// Prices in tenths of a cent per million tokens: each request's cost a whole
// number of nano-dollars, the cost distribution's resolution.
double random_price(std::mt19937_64& rng) { return std::uniform_int_distribution<int>(0, 100000)(rng) / 1000.0; }

Billing random_billing(std::mt19937_64& rng) {
  Billing b;
  b.input_tokens = static_cast<double>(std::uniform_int_distribution<int>(0, 200000)(rng));
  b.output_tokens = static_cast<double>(std::uniform_int_distribution<int>(0, 20000)(rng));
  b.price_in = random_price(rng);
  b.price_out = random_price(rng);
  return b;
}

// The mean bill of a bad request of `kinds` (weights normalised).
double mean_bad_cost(const Billing& billing, const FaultWeights& kinds) {
  double sum = 0.0;
  for (int k = 0; k < kFaultKinds; ++k)
    sum += kinds.weight[static_cast<std::size_t>(k)] * billing.request_cost(static_cast<FaultKind>(k));
  return sum / kinds.total();
}

TEST(FallbackExact, IndependentProvidersMatchTheClosedForms) {
  std::mt19937_64 rng(20261206);
  double worst = 0.0;
  for (int i = 0; i < 200; ++i) {
    Model model;
    model.p = std::uniform_real_distribution<double>(0.01, 0.9)(rng);
    model.q = model.p;
    Policy policy;
    policy.r = std::uniform_int_distribution<int>(0, 4)(rng);
    policy.n = std::uniform_int_distribution<int>(1, 8)(rng);
    Fallback fb;
    fb.after = std::uniform_int_distribution<int>(1, policy.r + 1)(rng);
    fb.second.p = std::uniform_real_distribution<double>(0.01, 0.9)(rng);
    fb.second.q = fb.second.p;
    fb.price_in = random_price(rng);
    fb.price_out = random_price(rng);
    ExactOptions options;
    options.fallback = fb;
    options.billing = random_billing(rng);
    options.distribution = false;  // the means alone: the closed forms give no more
    Billing second = *options.billing;  // the second provider's prices, by hand
    second.price_in = *fb.price_in;
    second.price_out = *fb.price_out;
    const ExactResult r = exact_matrix(model, policy, options);

    // One call by hand: request j goes to the first provider while j < K.
    double call_success = 1.0, call_requests = 0.0, call_cost = 0.0, reach = 1.0, cost_if_done = 0.0;
    for (int j = 0; j <= policy.r; ++j) {
      const bool first = j < fb.after;
      const double p = first ? model.p : fb.second.p;
      const Billing& bill = first ? *options.billing : second;
      const double ok = bill.request_cost(std::nullopt), bad = mean_bad_cost(bill, options.kinds);
      call_requests += reach;
      call_cost += reach * ((1.0 - p) * ok + p * bad);
      // Done at request j: j bad ones before it, billed at their providers' prices.
      double before = 0.0;
      for (int m = 0; m < j; ++m)
        before += m < fb.after ? mean_bad_cost(*options.billing, options.kinds) : mean_bad_cost(second, options.kinds);
      cost_if_done += reach * (1.0 - p) * (before + ok);
      reach *= p;
    }
    call_success -= reach;  // 1 - p^K p2^(r+1-K)
    EXPECT_LE(std::abs(call_success - (1.0 - std::pow(model.p, fb.after) *
                                                  std::pow(fb.second.p, policy.r + 1 - fb.after))), 1e-15);
    double calls = 0.0;  // E[calls sent] = sum_{c < n} S^c
    for (std::int64_t c = 0; c < policy.n; ++c) calls += std::pow(call_success, static_cast<double>(c));
    const double success = std::pow(call_success, static_cast<double>(policy.n));
    const double mean_done = static_cast<double>(policy.n) * cost_if_done / call_success;
    SCOPED_TRACE(testing::Message() << "case " << i << ": p " << model.p << ", p2 " << fb.second.p << ", K "
                                    << fb.after << ", r " << policy.r << ", n " << policy.n);
    ASSERT_TRUE(r.cost.has_value());
    for (const auto& [got, want] : {std::pair{r.success, success}, std::pair{r.mean_requests, call_requests * calls},
                                    std::pair{r.cost->mean, call_cost * calls},
                                    std::pair{r.cost->mean_done, mean_done}}) {
      EXPECT_LE(rel_err(got, want), 1e-12) << got << " against " << want;
      worst = std::max(worst, rel_err(got, want));
    }
  }
  RecordProperty("worst_relative_error", (testing::Message() << worst).GetString());
}

// --- brute force ---------------------------------------------------------------

// A two-state chain's m-step law by hand (Gilbert 1960): with
// lambda = q - p0, P^m(bad | bad) = p + (1 - p) lambda^m and
// P^m(bad | good) = p - p lambda^m.
struct TwoState {
  double p = 0.0, q = 0.0;
  double to_bad(bool from_bad, std::int64_t m) const {
    const double p0 = p * (1.0 - q) / (1.0 - p);
    const double lambda = std::pow(q - p0, static_cast<double>(m));
    return from_bad ? p + (1.0 - p) * lambda : p - p * lambda;
  }
};

// The joint law of (own1, own2, shared) as an 8-array, index own1 + 2 own2 + 4 shared.
using Law = std::array<double, 8>;

// The joint law one step on, each chain c moving by to_bad(c, from_bad) on its own.
template <class ToBad>
Law step_law(const Law& law, ToBad&& to_bad) {
  Law out{};
  for (int from = 0; from < 8; ++from) {
    if (law[static_cast<std::size_t>(from)] == 0.0) continue;
    for (int to = 0; to < 8; ++to) {
      double w = law[static_cast<std::size_t>(from)];
      for (int c = 0; c < 3; ++c) {
        const double bad = to_bad(c, ((from >> c) & 1) != 0);
        w *= ((to >> c) & 1) ? bad : 1.0 - bad;
      }
      out[static_cast<std::size_t>(to)] += w;
    }
  }
  return out;
}

Law step(const Law& law, const std::array<TwoState, 3>& chains, std::int64_t m) {
  return step_law(law, [&](int c, bool from_bad) { return chains[static_cast<std::size_t>(c)].to_bad(from_bad, m); });
}

struct Ending {
  double probability;
  std::int64_t requests;
  double usd;
  OutcomeClass outcome;
};

struct Providers {
  std::array<TwoState, 3> chains;  // first, second, shared (p = 0: never bad)
  std::int64_t b = 0, g = 0;
  int after = 1;
  std::array<std::vector<std::pair<FaultKind, double>>, 2> kinds;  // normalised, per provider
  std::array<Billing, 2> billing;
};

void walk(const Providers& s, TaskRunner runner, const Law& law, double usd, std::vector<Ending>& out) {
  const int lane = runner.state().used < s.after ? 0 : 1;
  Law good{}, bad{};
  for (int i = 0; i < 8; ++i) {
    const bool down = ((i >> lane) & 1) || ((i >> 2) & 1);
    (down ? bad : good)[static_cast<std::size_t>(i)] = law[static_cast<std::size_t>(i)];
  }
  const auto go = [&](std::optional<FaultKind> reply, const Law& mass, double share) {
    double total = 0.0;
    Law scaled{};
    for (int i = 0; i < 8; ++i) total += scaled[static_cast<std::size_t>(i)] = mass[static_cast<std::size_t>(i)] * share;
    if (!(total > 0.0)) return;
    TaskRunner next = runner;
    const double cost = usd + s.billing[static_cast<std::size_t>(lane)].request_cost(reply);
    if (!next.feed(reply)) {
      out.push_back({total, next.requests(), cost, next.outcome()});
      return;
    }
    walk(s, next, step(scaled, s.chains, 1 + (reply ? s.b : s.g)), cost, out);
  };
  go(std::nullopt, good, 1.0);
  for (const auto& [kind, share] : s.kinds[static_cast<std::size_t>(lane)]) go(kind, bad, share);
}

std::int64_t nano(double usd) { return std::llround(usd * 1e9); }

TEST(FallbackExact, BurstyProvidersMatchABruteForceOverBothChainsSequences) {
  std::mt19937_64 rng(11);
  const std::vector<FaultKind> pool = {FaultKind::cut,      FaultKind::stall,        FaultKind::overloaded,
                                       FaultKind::http_529, FaultKind::slow_headers, FaultKind::http_400};
  const PolicyKind policies[] = {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted};
  std::size_t paths = 0;
  double worst = 0.0;
  for (int i = 0; i < 48; ++i) {
    Model model;
    model.p = std::uniform_real_distribution<double>(0.05, 0.45)(rng);
    // q below p too (faults that avoid each other) in one case in four.
    model.q = std::uniform_real_distribution<double>(i % 4 == 3 ? min_q_for(model.p) : model.p, 0.95)(rng);
    model.b = i % 3;
    model.g = (i / 2) % 2;
    Policy policy;
    policy.kind = policies[i % 4];
    policy.n = 1 + i % 3;
    policy.r = 1 + (i / 4) % 2;
    policy.s = (i / 8) % 2;
    policy.B = 3;
    Fallback fb;
    fb.after = std::uniform_int_distribution<int>(1, policy.max_requests_per_call())(rng);
    fb.second.p = std::uniform_real_distribution<double>(0.05, 0.45)(rng);
    fb.second.q = std::uniform_real_distribution<double>(i % 4 == 1 ? 0.0 : fb.second.p, 0.95)(rng);
    if (i % 3 != 0) {  // two in three correlated
      fb.shared.p = std::uniform_real_distribution<double>(0.02, 0.2)(rng);
      fb.shared.q = std::uniform_real_distribution<double>(fb.shared.p, 0.9)(rng);
    }
    fb.price_in = random_price(rng);
    fb.price_out = random_price(rng);
    Providers s;
    s.chains = {TwoState{model.p, model.q}, TwoState{fb.second.p, fb.second.q}, TwoState{fb.shared.p, fb.shared.q}};
    s.b = model.b;
    s.g = model.g;
    s.after = fb.after;
    ExactOptions options;
    options.kinds = FaultWeights{};
    fb.kinds = FaultWeights{};
    for (int lane = 0; lane < 2; ++lane) {
      std::vector<FaultKind> shuffled = pool;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      FaultWeights& w = lane == 0 ? options.kinds : fb.kinds;
      double total = 0.0;
      for (int k = 0; k < 2; ++k) {
        const double x = std::uniform_real_distribution<double>(0.2, 1.0)(rng);
        s.kinds[static_cast<std::size_t>(lane)].push_back({shuffled[static_cast<std::size_t>(k)], x});
        w.weight[static_cast<std::size_t>(shuffled[static_cast<std::size_t>(k)])] = x;
        total += x;
      }
      for (auto& k : s.kinds[static_cast<std::size_t>(lane)]) k.second /= total;
    }
    options.billing = random_billing(rng);
    options.fallback = fb;
    s.billing = {*options.billing, *options.billing};
    s.billing[1].price_in = *fb.price_in;
    s.billing[1].price_out = *fb.price_out;
    SCOPED_TRACE(testing::Message() << "case " << i << ": " << to_string(policy.kind) << ", p " << model.p << ", q "
                                    << model.q << ", p2 " << fb.second.p << ", q2 " << fb.second.q << ", shared p "
                                    << fb.shared.p << ", K " << fb.after << ", b " << model.b << ", g " << model.g
                                    << ", n " << policy.n << ", r " << policy.r << ", s " << policy.s);
    const ExactResult r = exact_matrix(model, policy, options);
    ASSERT_TRUE(r.cost.has_value() && r.cost->complete && r.distribution_complete);

    // The stationary start, each chain at its own p.
    Law start{};
    for (int x = 0; x < 8; ++x) {
      double w = 1.0;
      for (int c = 0; c < 3; ++c) w *= ((x >> c) & 1) ? s.chains[static_cast<std::size_t>(c)].p : 1.0 - s.chains[static_cast<std::size_t>(c)].p;
      start[static_cast<std::size_t>(x)] = w;
    }
    std::vector<Ending> ends;
    walk(s, TaskRunner(policy), start, 0.0, ends);
    paths += ends.size();
    double mass = 0.0, mean_req = 0.0, mean_usd = 0.0, done = 0.0, done_usd = 0.0;
    std::vector<double> outcomes(kOutcomeClasses, 0.0);
    std::map<std::pair<std::int64_t, Outcome>, double> req_bins, usd_bins;
    for (const Ending& e : ends) {
      mass += e.probability;
      mean_req += e.probability * static_cast<double>(e.requests);
      mean_usd += e.probability * e.usd;
      outcomes[static_cast<std::size_t>(index_of(e.outcome))] += e.probability;
      if (e.outcome.outcome == Outcome::done) {
        done += e.probability;
        done_usd += e.probability * e.usd;
      }
      req_bins[{e.requests, e.outcome.outcome}] += e.probability;
      usd_bins[{nano(e.usd), e.outcome.outcome}] += e.probability;
    }
    ASSERT_NEAR(mass, 1.0, 1e-12);
    const auto check = [&worst](double got, double want, const std::string& what) {
      EXPECT_LE(rel_err(got, want), 1e-12) << what << ": " << got << " against " << want;
      worst = std::max(worst, rel_err(got, want));
    };
    check(r.success, done, "success");
    for (int o = 0; o < kOutcomeClasses; ++o)
      check(r.outcomes[static_cast<std::size_t>(o)], outcomes[static_cast<std::size_t>(o)], outcome_class(o).name());
    check(r.mean_requests, mean_req, "mean requests");
    check(r.cost->mean, mean_usd, "mean cost");
    check(r.cost->mean_done, done_usd / done, "mean cost of a done task");
    std::map<std::pair<std::int64_t, Outcome>, double> engine_req, engine_usd;
    for (const RequestBin& bin : r.requests) engine_req[{bin.requests, bin.outcome}] += bin.probability;
    for (const CostBin& bin : r.cost->bins) engine_usd[{nano(bin.usd), bin.outcome}] += bin.probability;
    for (const auto* pair : {&req_bins, &usd_bins}) {
      const auto& engine = pair == &req_bins ? engine_req : engine_usd;
      ASSERT_EQ(engine.size(), pair->size());
      for (const auto& [key, p] : *pair) {
        ASSERT_TRUE(engine.count(key)) << key.first << ", " << to_string(key.second);
        check(engine.at(key), p, "bin " + std::to_string(key.first) + " " + std::string(to_string(key.second)));
      }
    }
  }
  RecordProperty("paths", std::to_string(paths));
  RecordProperty("worst_relative_error", (testing::Message() << worst).GetString());
}

// --- time mode ---------------------------------------------------------------

// A two-state chain in seconds by hand: from state x, P(bad after t seconds)
// = p + (x - p) e^{-t (1/t_good + 1/t_bad)}, p = t_bad / (t_good + t_bad).
struct TwoStateSeconds {
  double t_good = 1.0, t_bad = 1.0, on = 1.0;  // on = 0: never bad (no shared outage)
  double p() const { return on * t_bad / (t_good + t_bad); }
  double to_bad(bool from_bad, double t) const {
    if (on == 0.0) return 0.0;
    return p() + ((from_bad ? 1.0 : 0.0) - p()) * std::exp(-t * (1.0 / t_good + 1.0 / t_bad));
  }
};

Law step_seconds(const Law& law, const std::array<TwoStateSeconds, 3>& chains, double t) {
  return step_law(law, [&](int c, bool from_bad) { return chains[static_cast<std::size_t>(c)].to_bad(from_bad, t); });
}

struct TimedEnding {
  double probability, seconds, usd;
  Outcome outcome;
};

// Every reply sequence in seconds: a request takes its kind's duration, a
// retry waits what wait_before says (fixed waits), the next call follows the
// think time; the chains move by their laws over that time.
struct TimedProviders {
  TimeModel time;
  std::array<TwoStateSeconds, 3> chains;
  int after = 1;
  std::array<std::vector<std::pair<FaultKind, double>>, 2> kinds;
  std::array<Billing, 2> billing;
};

void walk_seconds(const TimedProviders& p, TaskRunner runner, const Law& law, double seconds, double usd,
                  std::vector<TimedEnding>& out) {
  const TimeModel& time = p.time;
  const auto& kinds = p.kinds;
  const int lane = runner.state().used < p.after ? 0 : 1;
  for (int reply = -1; reply < static_cast<int>(kinds[static_cast<std::size_t>(lane)].size()); ++reply) {
    const std::optional<FaultKind> kind =
        reply < 0 ? std::nullopt : std::optional(kinds[static_cast<std::size_t>(lane)][static_cast<std::size_t>(reply)].first);
    const double share = reply < 0 ? 1.0 : kinds[static_cast<std::size_t>(lane)][static_cast<std::size_t>(reply)].second;
    Law mass{};
    double total = 0.0;
    for (int i = 0; i < 8; ++i) {
      const bool down = ((i >> lane) & 1) || ((i >> 2) & 1);
      if (down == kind.has_value()) total += mass[static_cast<std::size_t>(i)] = law[static_cast<std::size_t>(i)] * share;
    }
    if (!(total > 0.0)) continue;
    TaskRunner next = runner;
    const CallState from = runner.state();
    const double took = seconds + time.seconds_of(kind);
    const double billed = usd + p.billing[static_cast<std::size_t>(lane)].request_cost(kind);
    if (!next.feed(kind)) {
      out.push_back({total, took, billed, next.outcome().outcome});
      continue;
    }
    const double pause = kind ? wait_before(time, from, next.state(), *kind).max : time.think_seconds;
    walk_seconds(p, next, step_seconds(mass, p.chains, time.seconds_of(kind) + pause), took + pause, billed, out);
  }
}

TEST(FallbackExact, TimeModeMatchesABruteForceInSeconds) {
  std::mt19937_64 rng(29);
  const PolicyKind policies[] = {PolicyKind::simple, PolicyKind::layered, PolicyKind::budgeted, PolicyKind::naive};
  double worst = 0.0;
  for (int i = 0; i < 16; ++i) {
    const auto sojourn = [&rng](double lo, double hi) { return std::round(std::uniform_real_distribution<double>(lo, hi)(rng)); };
    TimedProviders tp;
    std::array<TwoStateSeconds, 3>& chains = tp.chains;
    chains = {TwoStateSeconds{sojourn(60, 600), sojourn(5, 120)},
                                             TwoStateSeconds{sojourn(60, 600), sojourn(5, 120)},
                                             TwoStateSeconds{sojourn(300, 3000), sojourn(10, 300), i % 2 ? 1.0 : 0.0}};
    TimeModel& time = tp.time;
    time.chain = two_state_time_chain(chains[0].t_good, chains[0].t_bad);
    time.request_seconds = 4.0;
    time.fault_seconds[static_cast<std::size_t>(FaultKind::stall)] = 30.0;
    time.think_seconds = 1.5;
    time.backoff = parse_backoff("list:1,3,9");
    Policy policy;
    policy.kind = policies[i % 4];
    policy.n = 1 + i % 3;
    policy.r = 1 + (i / 4) % 2;
    policy.s = 1;
    policy.B = 3;
    Fallback fb;
    fb.after = 1 + i % policy.max_requests_per_call();
    fb.second_time = two_state_time_chain(chains[1].t_good, chains[1].t_bad);
    if (i % 2) fb.shared_time = two_state_time_chain(chains[2].t_good, chains[2].t_bad);
    ExactOptions options;
    options.kinds = parse_fault_weights("stall=1,http_529=1");
    fb.kinds = parse_fault_weights("cut=2,http_429=1");
    fb.price_in = 1.0;
    fb.price_out = 5.0;
    options.fallback = fb;
    options.billing = Billing{20000, 800, 3.0, 15.0};
    tp.billing = {*options.billing, Billing{20000, 800, 1.0, 5.0}};
    tp.after = fb.after;
    SCOPED_TRACE(testing::Message() << "case " << i << ": " << to_string(policy.kind) << ", K " << fb.after << ", n "
                                    << policy.n << ", r " << policy.r << (i % 2 ? ", shared outage" : ""));
    const ExactResult r = exact_time(time, policy, options);
    ASSERT_TRUE(r.seconds_complete);
    tp.kinds = {
        std::vector<std::pair<FaultKind, double>>{{FaultKind::stall, 0.5}, {FaultKind::http_529, 0.5}},
        std::vector<std::pair<FaultKind, double>>{{FaultKind::cut, 2.0 / 3.0}, {FaultKind::http_429, 1.0 / 3.0}}};
    Law start{};
    for (int x = 0; x < 8; ++x) {
      double w = 1.0;
      for (int c = 0; c < 3; ++c)
        w *= ((x >> c) & 1) ? chains[static_cast<std::size_t>(c)].p() : 1.0 - chains[static_cast<std::size_t>(c)].p();
      start[static_cast<std::size_t>(x)] = w;
    }
    std::vector<TimedEnding> ends;
    walk_seconds(tp, TaskRunner(policy), start, 0.0, 0.0, ends);
    double done = 0.0, mean = 0.0, mean_done = 0.0, usd = 0.0, usd_done = 0.0;
    std::map<std::pair<std::int64_t, Outcome>, double> bins;
    for (const TimedEnding& e : ends) {
      mean += e.probability * e.seconds;
      usd += e.probability * e.usd;
      if (e.outcome == Outcome::done) {
        done += e.probability;
        mean_done += e.probability * e.seconds;
        usd_done += e.probability * e.usd;
      }
      bins[{std::llround(e.seconds * 1e6), e.outcome}] += e.probability;
    }
    const auto check = [&worst](double got, double want, const char* what) {
      EXPECT_LE(rel_err(got, want), 1e-11) << what << ": " << got << " against " << want;
      worst = std::max(worst, rel_err(got, want));
    };
    check(r.success, done, "success");
    check(r.mean_seconds, mean, "mean seconds");
    check(r.mean_seconds_done, mean_done / done, "mean seconds of a done task");
    ASSERT_TRUE(r.cost.has_value());
    check(r.cost->mean, usd, "mean cost");
    check(r.cost->mean_done, usd_done / done, "mean cost of a done task");
    std::map<std::pair<std::int64_t, Outcome>, double> engine;
    for (const SecondsBin& bin : r.seconds) engine[{std::llround(bin.seconds * 1e6), bin.outcome}] += bin.probability;
    ASSERT_EQ(engine.size(), bins.size());
    for (const auto& [key, p] : bins) {
      ASSERT_TRUE(engine.count(key)) << key.first << " us";
      check(engine.at(key), p, "a seconds bin");
    }
  }
  RecordProperty("worst_relative_error", (testing::Message() << worst).GetString());
}

TEST(FallbackExact, AFallbackAfterTheCallsLastRequestIsNoFallback) {
  Model model;
  model.p = 0.3;
  model.q = 0.8;
  for (const PolicyKind kind : {PolicyKind::simple, PolicyKind::layered}) {
    Policy policy;
    policy.kind = kind;
    policy.n = 3;
    policy.r = 2;
    ExactOptions plain;
    plain.billing = Billing{20000, 800, 3.0, 15.0};
    ExactOptions with = plain;
    Fallback fb;
    fb.after = policy.max_requests_per_call();
    fb.second.p = 0.9;
    fb.second.q = 0.95;
    with.fallback = fb;
    const ExactResult a = exact_matrix(model, policy, plain), b = exact_matrix(model, policy, with);
    EXPECT_NEAR(a.success, b.success, 1e-14);
    EXPECT_NEAR(a.mean_requests, b.mean_requests, 1e-13);
    EXPECT_NEAR(a.cost->mean, b.cost->mean, 1e-13);
    EXPECT_LE(max_abs_diff(a, b), 1e-14);
  }
}

TEST(FallbackExact, ABadFallbackIsRefusedNamingTheValueAndItsRange) {
  const auto message = [](const Fallback& fb) {
    Policy policy;
    policy.r = 2;
    try {
      validate(fb, policy);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Fallback fb;
  fb.after = 0;
  EXPECT_NE(message(fb).find("fallback-after = 0: must be a whole number in [1, 3]"), std::string::npos) << message(fb);
  fb.after = 4;
  EXPECT_NE(message(fb).find("fallback-after = 4"), std::string::npos) << message(fb);
  fb.after = 1;
  fb.second.p = 1.2;
  EXPECT_NE(message(fb).find("second provider: p = 1.2 is out of range"), std::string::npos) << message(fb);
  fb.second.p = 0.1;
  fb.second.q = 0.1;
  fb.shared.p = 0.5;
  fb.shared.q = -0.5;
  EXPECT_NE(message(fb).find("shared outage: q = -0.5"), std::string::npos) << message(fb);
  fb.shared = Model{};
  fb.price_out = -3;
  EXPECT_NE(message(fb).find("price-out2 = -3"), std::string::npos) << message(fb);
  // Time mode needs the second provider in seconds, and the step model in steps.
  TimeModel time;
  time.chain = two_state_time_chain(600.0, 60.0);
  time.request_seconds = 5.0;
  ExactOptions options;
  options.fallback = Fallback{};
  try {
    exact_time(time, Policy{}, options);
    ADD_FAILURE() << "time mode took a fallback in steps";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("give --t-good2 and --t-bad2"), std::string::npos) << e.what();
  }
  options.fallback->second_time = two_state_time_chain(600.0, 60.0);
  EXPECT_THROW(exact_matrix(Model{}, Policy{}, options), InputError);
}

}  // namespace fallback_exact_test
