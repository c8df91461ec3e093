// The exact cost per task (docs/model.md, Cost) against references outside
// the engine's walk:
//   - closed forms for independent faults under the simple policy, one
//     billing rule at a time (refused before the model starts, a broken
//     stream at a random break position, the default positions, a cached
//     prefix written by the task's first billed request), over 200
//     random parameter sets, to 1e-12;
//   - a brute force over every sequence of replies (good, or bad of each
//     kind) of a bursty chain, every policy, its probability carried as the
//     hidden state's law and its moves taken from TaskRunner: mean, mean
//     over done tasks, every bin and the quantiles;
//     half of them with a cached prefix, which the first billed request
//     writes;
//   - in time mode, where no brute force is written, the identity of a
//     billing whose faults are all refused: a task is billed for its good
//     requests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "relsim/core/billing.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"

namespace {

using namespace relsim;

double rel_err(double got, double want) { return std::abs(got - want) / std::max(1.0, std::abs(want)); }

// Prices in tenths of a cent per million tokens, as price lists give them
// ($0.25, $3, $15): every request's cost is then a whole number of
// nano-dollars, the distribution's resolution.
double random_price(std::mt19937_64& rng) { return std::uniform_int_distribution<int>(0, 100000)(rng) / 1000.0; }

Billing random_billing(std::mt19937_64& rng) {
  Billing b;
  b.input_tokens = static_cast<double>(std::uniform_int_distribution<int>(0, 200000)(rng));
  b.output_tokens = static_cast<double>(std::uniform_int_distribution<int>(0, 20000)(rng));
  b.price_in = random_price(rng);
  b.price_out = random_price(rng);
  return b;
}

// Independent faults, simple policy: a call sends attempt j + 1 with
// probability p^j, a task goes on to call i + 1 with s^i, s = 1 - p^(r+1);
// a call that succeeds had j bad attempts with probability p^j (1 - p) / s.
struct IndependentCost {
  double mean, mean_done;
};
IndependentCost independent_cost(double p, int r, std::int64_t n, double ok, double bad) {
  double attempts = 0.0, bad_if_done = 0.0;
  for (int j = 0; j <= r; ++j) {
    attempts += std::pow(p, j);
    bad_if_done += j * std::pow(p, j) * (1.0 - p);
  }
  const double s = 1.0 - std::pow(p, r + 1);
  double calls = 0.0;
  for (std::int64_t i = 0; i < n; ++i) calls += std::pow(s, static_cast<double>(i));
  return {((1.0 - p) * ok + p * bad) * attempts * calls, static_cast<double>(n) * (ok + bad * bad_if_done / s)};
}

TEST(ExactCost, IndependentFaultsMatchTheClosedFormsOneBillingRuleAtATime) {
  std::mt19937_64 rng(20261206);
  const FaultKind refused[] = {FaultKind::http_429, FaultKind::http_529, FaultKind::slow_headers, FaultKind::reset};
  const FaultKind broken[] = {FaultKind::cut, FaultKind::no_stop, FaultKind::malformed, FaultKind::overloaded,
                              FaultKind::stall};
  double worst = 0.0;
  for (int i = 0; i < 200; ++i) {
    Model model;
    model.p = std::uniform_real_distribution<double>(0.01, 0.9)(rng);
    model.q = model.p;
    Policy policy;
    policy.r = std::uniform_int_distribution<int>(0, 4)(rng);
    policy.n = std::uniform_int_distribution<int>(1, 8)(rng);
    Billing billing = random_billing(rng);
    // The rule: 0 refused (not billed), 1 broken at a random position, 2 broken where the mock breaks it,
    // 3 a cached prefix (with a refused kind or a broken one).
    const int rule = i % 4;
    FaultKind kind = rule == 0 || (rule == 3 && i % 8 == 3) ? refused[i % 4] : broken[i % 5];
    if (rule == 1) billing.break_at[static_cast<std::size_t>(kind)] = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    double cached = 0.0, write = 0.0, read = 0.0;
    if (rule == 3) {
      cached = std::floor(billing.input_tokens * std::uniform_real_distribution<double>(0.0, 1.0)(rng));
      read = random_price(rng);
      write = random_price(rng);
      billing.cached_tokens = cached;
      billing.cache_read = read;
      billing.cache_write = write;
    }
    // What a billed request's input costs once the prefix is cached.
    const double input = (billing.input_tokens - cached) * billing.price_in + cached * read;
    const bool billed_bad = stage_of(kind) == Stage::in_stream;
    double bad = 0.0;  // what the rule bills a bad request, by hand
    if (billed_bad)
      bad = (input + std::floor(billing.break_at[static_cast<std::size_t>(kind)] * billing.output_tokens) *
                         billing.price_out) /
            1e6;
    const double ok = (input + billing.output_tokens * billing.price_out) / 1e6;
    ExactOptions options;
    options.kinds = FaultWeights{};
    options.kinds.weight[static_cast<std::size_t>(kind)] = 1.0;
    options.billing = billing;
    const ExactResult r = exact_matrix(model, policy, options);
    ASSERT_TRUE(r.cost.has_value());
    IndependentCost want = independent_cost(model.p, policy.r, policy.n, ok, bad);
    // The first billed request writes the prefix: every task pays that once,
    // but one whose first call met r + 1 refused requests and gave up.
    const double surcharge = cached * (write - read) / 1e6;
    want.mean += surcharge * (1.0 - (billed_bad ? 0.0 : std::pow(model.p, policy.r + 1)));
    want.mean_done += surcharge;
    SCOPED_TRACE(testing::Message() << "case " << i << ": p " << model.p << ", r " << policy.r << ", n " << policy.n
                                    << ", kind " << to_string(kind) << ", rule " << rule);
    EXPECT_LE(rel_err(r.cost->mean, want.mean), 1e-12) << r.cost->mean << " against " << want.mean;
    EXPECT_LE(rel_err(r.cost->mean_done, want.mean_done), 1e-12) << r.cost->mean_done << " against " << want.mean_done;
    worst = std::max({worst, rel_err(r.cost->mean, want.mean), rel_err(r.cost->mean_done, want.mean_done)});
  }
  RecordProperty("worst_relative_error", (testing::Message() << worst).GetString());
}

// --- brute force ---------------------------------------------------------------

struct Ending {
  double probability;
  double usd;
  Outcome outcome;
};

// Every reply sequence of a task from the hidden state's law `law` (its
// mass the sequence's probability so far), each request's reply good or
// one of `kinds`, moved on by the runner and by the chain (retry after a
// bad request, gap after a good one).
// `written`: a billed request has written the cached prefix (a cost with
// cached tokens: the first billed request pays cached x (write - read) more).
void walk(const Chain& chain, const std::vector<std::pair<FaultKind, double>>& kinds, const Billing& billing,
          TaskRunner runner, const Eigen::RowVectorXd& law, double usd, bool written, std::vector<Ending>& out) {
  const Eigen::RowVectorXd good = law.cwiseProduct((Eigen::VectorXd::Ones(law.size()) - chain.bad).transpose());
  const Eigen::RowVectorXd bad = law.cwiseProduct(chain.bad.transpose());
  const auto go = [&](std::optional<FaultKind> reply, const Eigen::RowVectorXd& mass) {
    if (!(mass.sum() > 0.0)) return;
    TaskRunner next = runner;
    // A stream is billed, broken (in-stream) or whole (content).
    const bool billed = !reply || stage_of(*reply) == Stage::in_stream || stage_of(*reply) == Stage::content;
    double cost = usd + billing.request_cost(reply);
    if (billed && !written) cost += billing.cached_tokens * (billing.cache_write - billing.cache_read) / 1e6;
    if (!next.feed(reply)) {
      out.push_back({mass.sum(), cost, next.outcome().outcome});
      return;
    }
    // A retry steps as a retry; a new call (after a good answer, or a
    // content fault a naive loop took for one) as a gap.
    const bool retry = reply && next.call() == runner.call();
    walk(chain, kinds, billing, next, mass * (retry ? chain.retry : chain.gap), cost, written || billed, out);
  };
  go(std::nullopt, good);
  for (const auto& [kind, share] : kinds) go(kind, bad * share);
}

// The smallest cost whose cumulative probability reaches `level` (the
// engine's rule, docs/model.md, Requests per task).
double quantile(std::vector<Ending> ends, double level) {
  std::sort(ends.begin(), ends.end(), [](const Ending& a, const Ending& b) { return a.usd < b.usd; });
  double total = 0.0, cum = 0.0;
  for (const Ending& e : ends) total += e.probability;
  for (const Ending& e : ends) {
    cum += e.probability;
    if (cum >= level * total * (1.0 - 1e-12)) return e.usd;
  }
  return ends.back().usd;
}

std::int64_t nano(double usd) { return std::llround(usd * 1e9); }

TEST(ExactCost, BurstyFaultsMatchABruteForceOverEveryReplySequence) {
  std::mt19937_64 rng(7);
  const std::vector<FaultKind> pool = {FaultKind::cut,       FaultKind::stall,   FaultKind::overloaded,
                                       FaultKind::no_stop,   FaultKind::http_529, FaultKind::slow_headers,
                                       FaultKind::http_400,  FaultKind::max_tokens, FaultKind::duplicate_event};
  const PolicyKind kinds_of_policy[] = {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered,
                                        PolicyKind::budgeted};
  int cases = 0;
  std::size_t paths = 0;
  for (int i = 0; i < 40; ++i) {
    Model model;
    model.p = std::uniform_real_distribution<double>(0.05, 0.45)(rng);
    model.q = std::uniform_real_distribution<double>(model.p, 0.95)(rng);
    model.b = i % 2;
    Policy policy;
    policy.kind = kinds_of_policy[i % 4];
    policy.n = 1 + i % 3;
    policy.r = (i / 4) % 2;
    policy.s = (i / 8) % 2;
    policy.B = 2;
    // Two or three kinds with random weights; a random break position for each in-stream one.
    Billing billing = random_billing(rng);
    std::vector<std::pair<FaultKind, double>> kinds;
    ExactOptions options;
    options.kinds = FaultWeights{};
    std::vector<FaultKind> shuffled = pool;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    double total = 0.0;
    for (int k = 0; k < 2 + i % 2; ++k) {
      const double w = std::uniform_real_distribution<double>(0.2, 1.0)(rng);
      kinds.push_back({shuffled[static_cast<std::size_t>(k)], w});
      options.kinds.weight[static_cast<std::size_t>(shuffled[static_cast<std::size_t>(k)])] = w;
      total += w;
      if (stage_of(shuffled[static_cast<std::size_t>(k)]) == Stage::in_stream ||
          stage_of(shuffled[static_cast<std::size_t>(k)]) == Stage::content)
        billing.break_at[static_cast<std::size_t>(shuffled[static_cast<std::size_t>(k)])] =
            std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    }
    for (auto& k : kinds) k.second /= total;
    if (i % 2 == 1) {  // a cached prefix
      billing.cached_tokens = std::floor(billing.input_tokens * std::uniform_real_distribution<double>(0.0, 1.0)(rng));
      billing.cache_read = random_price(rng);
      billing.cache_write = random_price(rng);
    }
    options.billing = billing;
    SCOPED_TRACE(testing::Message() << "case " << i << ": " << to_string(policy.kind) << ", p " << model.p << ", q "
                                    << model.q << ", b " << model.b << ", n " << policy.n << ", r " << policy.r
                                    << ", s " << policy.s << ", kinds " << to_string(options.kinds));
    const ExactResult r = exact_matrix(model, policy, options);
    ASSERT_TRUE(r.cost.has_value());
    ASSERT_TRUE(r.cost->complete);

    const Chain chain = gilbert_chain(model);
    std::vector<Ending> ends;
    walk(chain, kinds, billing, TaskRunner(policy), chain.initial, 0.0, false, ends);
    paths += ends.size();
    double mass = 0.0, mean = 0.0, done = 0.0, done_cost = 0.0;
    std::map<std::pair<std::int64_t, Outcome>, double> bins;
    for (const Ending& e : ends) {
      mass += e.probability;
      mean += e.probability * e.usd;
      if (e.outcome == Outcome::done) {
        done += e.probability;
        done_cost += e.probability * e.usd;
      }
      bins[{nano(e.usd), e.outcome}] += e.probability;
    }
    ASSERT_NEAR(mass, 1.0, 1e-12);
    EXPECT_LE(rel_err(r.cost->mean, mean), 1e-12) << r.cost->mean << " against " << mean;
    EXPECT_LE(rel_err(r.cost->mean_done, done_cost / done), 1e-12) << r.cost->mean_done << " against " << done_cost / done;
    // Every bin: the engine's, to the nano-dollar, against the brute force's.
    std::map<std::pair<std::int64_t, Outcome>, double> engine;
    for (const CostBin& bin : r.cost->bins) engine[{nano(bin.usd), bin.outcome}] += bin.probability;
    ASSERT_EQ(engine.size(), bins.size());
    for (const auto& [key, p] : bins) {
      ASSERT_TRUE(engine.count(key)) << key.first << " nano-USD, " << to_string(key.second);
      EXPECT_NEAR(engine[key], p, 1e-12) << key.first << " nano-USD, " << to_string(key.second);
    }
    EXPECT_EQ(nano(r.cost->quantiles.p50), nano(quantile(ends, 0.5)));
    EXPECT_EQ(nano(r.cost->quantiles.p90), nano(quantile(ends, 0.9)));
    EXPECT_EQ(nano(r.cost->quantiles.p99), nano(quantile(ends, 0.99)));
    ++cases;
  }
  RecordProperty("cases", cases);
  RecordProperty("paths", std::to_string(paths));
}

// In seconds: with every fault refused before the model starts, a task is
// billed for its good requests alone, E[requests] - E[bad requests] of them
// (both from the task's own walk), and a done task for exactly n.
TEST(ExactCost, TimeModeBillsTheGoodRequestsWhenEveryFaultIsRefused) {
  TimeModel time;
  time.chain = two_state_time_chain(600.0, 60.0);
  time.request_seconds = 5.0;
  time.backoff = parse_backoff("list:1,2,4");
  Policy policy;
  policy.kind = PolicyKind::layered;
  policy.n = 6;
  policy.r = 1;
  policy.s = 2;
  ExactOptions options;
  options.kinds = parse_fault_weights("http_529=2,http_429=1,reset=1");
  Billing billing;
  billing.input_tokens = 12000;
  billing.output_tokens = 800;
  billing.price_in = 3.0;
  billing.price_out = 15.0;
  options.billing = billing;
  const ExactResult r = exact_time(time, policy, options);
  ASSERT_TRUE(r.cost.has_value());
  const double ok = billing.request_cost(std::nullopt);
  EXPECT_LE(rel_err(r.cost->mean, ok * (r.mean_requests - r.mean_bad_requests)), 1e-12);
  EXPECT_LE(rel_err(r.cost->mean_done, ok * 6.0), 1e-12);
  ASSERT_TRUE(r.cost->complete);
  // The least a task can cost: a first call that fails before any good request.
  EXPECT_EQ(r.cost->bins.front().usd, 0.0);
  EXPECT_NEAR(r.cost->bins.back().usd, 6.0 * ok, 1e-9);
}

TEST(ExactCost, BadBillingIsRefusedNamingTheValueAndItsRange) {
  const auto message = [](const Billing& b) {
    try {
      validate(b);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Billing b;
  b.price_in = -1.0;
  EXPECT_NE(message(b).find("price-in = -1 is out of range"), std::string::npos) << message(b);
  b = Billing{};
  b.input_tokens = 1.5;
  EXPECT_NE(message(b).find("input-tokens = 1.5 is out of range: it must be a whole number"), std::string::npos);
  b = Billing{};
  b.break_at[static_cast<std::size_t>(FaultKind::http_529)] = 0.5;
  EXPECT_NE(message(b).find("never billed"), std::string::npos) << message(b);
  EXPECT_THROW(parse_break_at("cut=1.5"), InputError);
  EXPECT_THROW(parse_break_at("http_429=0.5"), InputError);
  EXPECT_THROW(parse_break_at("cut=0.5,cut=0.2"), InputError);
  const auto at = parse_break_at("stall=0.25");
  EXPECT_EQ(at[static_cast<std::size_t>(FaultKind::stall)], 0.25);
  EXPECT_EQ(at[static_cast<std::size_t>(FaultKind::cut)], 0.5);  // the default kept
  // The content kinds stream a whole (wrong) answer: billed whole.
  EXPECT_EQ(break_at_string(Billing::default_break_at()),
            "cut=0.5,no_stop=1,malformed=0,overloaded=0,stall=0,max_tokens=1,bad_tool_args=1,duplicate_event=1,"
            "stall_first=0");
  // The tokens streamed before a break, whole: 0.29 x 100 is 29 (not the
  // 28.999999999999996 of a double product), 0.5 x 3 is 1.
  Billing tokens;
  tokens.output_tokens = 100;
  tokens.break_at[static_cast<std::size_t>(FaultKind::cut)] = 0.29;
  EXPECT_EQ(tokens.billed_output(FaultKind::cut), 29.0);
  tokens.output_tokens = 3;
  tokens.break_at[static_cast<std::size_t>(FaultKind::cut)] = 0.5;
  EXPECT_EQ(tokens.billed_output(FaultKind::cut), 1.0);
  EXPECT_EQ(tokens.billed_output(FaultKind::http_529), 0.0);
  EXPECT_EQ(tokens.billed_output(std::nullopt), 3.0);
}

}  // namespace
