// Proofs for time in seconds (docs/time.md): exact_time against answers from
// outside it. (a) The discrete limit: waits that are whole steps give the
// silent-step model of docs/model.md, computed by exact_matrix. (b) The hand
// closed form of docs/time.md for two states (support/time_closed_form.hpp).
// (c) Jitter: the jittered engine equals the quadrature of the fixed-wait
// engine over U. (d) Bad input: one-line InputErrors naming the value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"
#include "support/models.hpp"
#include "support/time_closed_form.hpp"
#include "support/input_error.hpp"

namespace relsim {
namespace {

using relsim_test::HandCase;
using relsim_test::TwoStateRef;

constexpr double kProofTol = 1e-12;
constexpr double kQuadTol = 1e-9;

double rel(double a, double b) { return std::abs(a - b) / std::max(1.0, std::abs(b)); }

void report(const char* what, double diff) { std::printf("[ measured ] %s: max difference %.3g\n", what, diff); }

Backoff list_backoff(std::vector<double> waits) {
  Backoff b;
  b.kind = Backoff::Kind::list;
  b.list = std::move(waits);
  return b;
}

Backoff exp_backoff(double base, double cap, double jitter) {
  Backoff b;  // Kind::exp
  b.base = base, b.cap = cap, b.jitter = jitter;
  return b;
}

Backoff no_backoff() {
  Backoff b;
  b.kind = Backoff::Kind::none;
  return b;
}

ExactOptions with_kinds(const char* kinds) {
  ExactOptions opt;
  opt.kinds = parse_fault_weights(kinds);
  return opt;
}

// ---------------------------------------------------------------- (a)
// docs/time.md, The discrete limit: a request of D seconds is one step of
// the chain, a retry waits b D (so it starts (1 + b) D after the bad one:
// P^(1 + b)), the next call waits g D after a good request (P^(1 + g)), and
// the next task in the continuous scope also starts D + g D later.
struct LimitCase {
  double t_good, t_bad, D;
  std::int64_t b, g;
  Policy policy;
  const char* kinds;
  bool continuous;
  bool no_backoff = false;  // --backoff none (then b must be 0)

  Model model() const {
    return {.p = TwoStateRef{t_good, t_bad}.p(),
            .q = TwoStateRef{t_good, t_bad}.bad_bad(D),
            .b = b,
            .g = g,
            .chain = continuous ? ChainScope::continuous : ChainScope::fresh};
  }
  TimeModel time() const {
    TimeModel t;
    t.chain = two_state_time_chain(t_good, t_bad);
    t.scope = continuous ? ChainScope::continuous : ChainScope::fresh;
    t.request_seconds = D;
    t.think_seconds = static_cast<double>(g) * D;
    t.backoff = no_backoff ? relsim::no_backoff() : list_backoff({static_cast<double>(b) * D});
    return t;
  }
  std::string str() const {
    return fmt::format("t_good={} t_bad={} D={} b={} g={} {} kinds={} {}", t_good, t_bad, D, b, g, describe(policy),
                       kinds, continuous ? "continuous" : "fresh");
  }
};

std::vector<LimitCase> limit_cases() {
  const char* mixed = "cut=1,stall=1,slow_headers=2,http_529=1,overloaded=1,http_429=1";
  return {
      {60, 20, 2.0, 3, 1, Policy{.n = 3, .r = 2, .kind = PolicyKind::simple}, "cut=1", false},
      {30, 45, 0.5, 0, 4, Policy{.n = 2, .r = 3, .kind = PolicyKind::simple}, "cut=1,stall=1", true},
      {100, 10, 1.0, 5, 2, Policy{.n = 2, .r = 1, .kind = PolicyKind::layered}, mixed, false},
      {100, 10, 1.0, 5, 2, Policy{.n = 2, .r = 1, .kind = PolicyKind::layered}, mixed, true},
      {50, 25, 4.0, 1, 10, Policy{.n = 4, .r = 0, .s = 3, .kind = PolicyKind::layered},
       "slow_headers=1,http_503=2,reset=1", false},
      {40, 8, 0.25, 2, 3, Policy{.n = 2, .r = 2, .B = 4, .kind = PolicyKind::budgeted}, mixed, true},
      {40, 8, 0.25, 2, 0, Policy{.n = 3, .r = 2, .s = 1, .kind = PolicyKind::naive},
       "cut=1,stall=1,http_500=1,reset=1,http_400=1", false},
      {7, 3, 1.5, 0, 0, Policy{.n = 5, .r = 2, .kind = PolicyKind::simple}, "overloaded=1,http_400=1", false, true},
  };
}

TEST(TimeDiscreteLimit, WholeStepWaitsEqualTheSilentStepModelForEveryPolicyAndScope) {
  double worst = 0.0;
  for (const LimitCase& c : limit_cases()) {
    const ExactOptions opt = with_kinds(c.kinds);
    const ExactResult d = exact_matrix(c.model(), c.policy, opt);
    const ExactResult t = exact_time(c.time(), c.policy, opt);
    ASSERT_TRUE(t.timed) << c.str();
    ASSERT_TRUE(t.distribution_complete && d.distribution_complete) << c.str();
    ASSERT_FALSE(d.requests.empty()) << c.str();
    double diff = max_abs_diff(t, d);
    EXPECT_LE(diff, kProofTol) << c.str();
    EXPECT_NEAR(t.wrong, d.wrong, kProofTol) << c.str();
    for (int i = 0; i < kOutcomeClasses; ++i) {
      EXPECT_NEAR(t.outcomes[i], d.outcomes[i], kProofTol) << outcome_class(i).name() << ' ' << c.str();
      diff = std::max(diff, std::abs(t.outcomes[i] - d.outcomes[i]));
    }
    EXPECT_LE(rel(t.mean_requests, d.mean_requests), kProofTol) << c.str();
    EXPECT_EQ(t.max_requests, d.max_requests) << c.str();
    worst = std::max({worst, diff, rel(t.mean_requests, d.mean_requests)});
  }
  report("discrete limit vs exact_matrix", worst);
}

TEST(TimeDiscreteLimit, DoneTasksTakeRequestsTimesStepPlusTheirSilentSteps) {
  // A done task of R requests made n first requests and R - n retries:
  // R D + (R - n) b D + (n - 1) g D seconds. So the seconds distribution of
  // done tasks is the requests distribution of exact_matrix, relabelled.
  double worst = 0.0;
  for (const LimitCase& c : limit_cases()) {
    const ExactOptions opt = with_kinds(c.kinds);
    const ExactResult d = exact_matrix(c.model(), c.policy, opt);
    const ExactResult t = exact_time(c.time(), c.policy, opt);
    ASSERT_TRUE(t.seconds_complete) << c.str();
    std::map<std::int64_t, double> want, got;
    const auto n = static_cast<double>(c.policy.n);
    for (const RequestBin& bin : d.requests) {
      if (bin.outcome != Outcome::done) continue;
      const auto R = static_cast<double>(bin.requests);
      const double secs = c.D * (R + (R - n) * static_cast<double>(c.b) + (n - 1.0) * static_cast<double>(c.g));
      want[std::llround(secs * 1e6)] += bin.probability;
    }
    for (const SecondsBin& bin : t.seconds)
      if (bin.outcome == Outcome::done) got[std::llround(bin.seconds * 1e6)] += bin.probability;
    for (const auto& [us, mass] : want) {
      EXPECT_NEAR(got[us], mass, kProofTol) << us << " us, " << c.str();
      worst = std::max(worst, std::abs(got[us] - mass));
    }
    EXPECT_EQ(got.size(), want.size()) << c.str();
  }
  report("discrete limit, done seconds vs relabelled requests", worst);
}

// ---------------------------------------------------------------- (b)
TimeModel hand_time_model(const HandCase& c, const Backoff& backoff) {
  TimeModel t;
  t.chain = two_state_time_chain(c.t_good, c.t_bad);
  t.scope = c.continuous ? ChainScope::continuous : ChainScope::fresh;
  t.request_seconds = c.d_good;
  t.fault_seconds[static_cast<int>(FaultKind::cut)] = c.d_bad;  // the only kind used below
  t.think_seconds = c.think;
  t.backoff = backoff;
  return t;
}

// exact_time against hand_closed_form; returns the largest difference.
double check_hand(const HandCase& c, const Backoff& backoff) {
  ExactOptions opt = with_kinds("cut=1");
  opt.distribution = false;  // the wall-time distribution has its own test below
  const ExactResult t =
      exact_time(hand_time_model(c, backoff), Policy{.n = c.n, .r = c.r, .kind = PolicyKind::simple}, opt);
  const relsim_test::HandResult h = relsim_test::hand_closed_form(c);
  EXPECT_NEAR(t.success, h.success, kProofTol) << c.str();
  EXPECT_NEAR(t.env_error, 1.0 - h.success, kProofTol) << c.str();
  EXPECT_LE(rel(t.mean_seconds, h.mean_seconds), kProofTol)
      << t.mean_seconds << " vs " << h.mean_seconds << ' ' << c.str();
  EXPECT_LE(rel(t.mean_requests, h.mean_requests), kProofTol) << c.str();
  return std::max({std::abs(t.success - h.success), rel(t.mean_seconds, h.mean_seconds),
                   rel(t.mean_requests, h.mean_requests)});
}

TEST(TimeHandClosedForm, FixedListWaitsMatchTheHandDerivationInBothScopes) {
  // list:1,5,30 with up to 5 retries: the last entry repeats.
  double worst = 0.0;
  for (bool continuous : {false, true})
    for (auto [tg, tb] : {std::pair{3600.0, 120.0}, std::pair{60.0, 60.0}, std::pair{10.0, 90.0}})
      for (int r : {0, 1, 3, 5})
        for (std::int64_t n : {1, 2, 7, 50})
          for (auto [d, think] : {std::pair{0.0, 0.0}, std::pair{2.0, 3.0}, std::pair{0.5, 0.0}}) {
            const HandCase c{tg, tb, d, d, think, {1, 5, 30}, 0.0, r, n, continuous};
            worst = std::max(worst, check_hand(c, list_backoff({1, 5, 30})));
          }
  report("hand closed form, list:1,5,30", worst);
}

TEST(TimeHandClosedForm, AFaultsOwnDurationEntersOnlyAfterABadRequest) {
  // --fault-seconds cut=7 (what a timeout costs): a good request takes d, a
  // bad one 7 s; the retry starts 7 + w after a bad request.
  double worst = 0.0;
  for (bool continuous : {false, true})
    for (double d_bad : {0.0, 7.0, 45.0}) {
      const HandCase c{600, 60, 3.0, d_bad, 1.0, {2, 10}, 0.0, 3, 6, continuous};
      worst = std::max(worst, check_hand(c, list_backoff({2, 10})));
    }
  report("hand closed form, fault seconds", worst);
}

TEST(TimeHandClosedForm, JitteredBackoffFactorisesIntoTheAveragedTwoStateStep) {
  // Each wait has its own U, and whether retry a + 1 happens does not
  // depend on U_a: so success and mean seconds are the fixed-wait formulas
  // with qbar_a = E q_a(U) and wbar_a = w_a (1 - jitter / 2).
  double worst = 0.0;
  for (bool continuous : {false, true})
    for (double jitter : {0.25, 0.5, 1.0})
      for (int r : {1, 2, 6}) {
        HandCase c{300, 90, 1.0, 1.0, 2.0, {}, jitter, r, 4, continuous};
        for (int k = 0; k < r; ++k) c.waits.push_back(std::min(0.5 * std::pow(2.0, k), 8.0));
        worst = std::max(worst, check_hand(c, exp_backoff(0.5, 8.0, jitter)));
      }
  report("hand closed form, jittered exp backoff", worst);
}

// The last case's durations have no common step above a microsecond (a
// good request 1.000001 s), so its 10^8 possible bins are far past the
// dense grid's 16 MiB and the walk finds its bins by hashing: both ways of
// holding them are checked against the enumeration.
TEST(TimeHandClosedForm, WallTimeDistributionAndQuantilesMatchCallByCallEnumeration) {
  double worst = 0.0;
  for (const HandCase& c : {HandCase{60, 30, 0.25, 0.25, 1.5, {1, 5, 30}, 0.0, 3, 3, false},
                            HandCase{900, 120, 2.0, 0.5, 0.0, {1, 5, 30}, 0.0, 4, 2, false},
                            HandCase{20, 80, 1.0, 1.0, 0.75, {0.5}, 0.0, 2, 4, false},
                            HandCase{60, 30, 1.000001, 0.25, 1.5, {1, 5, 30}, 0.0, 3, 3, false}}) {
    const ExactResult t = exact_time(hand_time_model(c, list_backoff(c.waits)),
                                     Policy{.n = c.n, .r = c.r, .kind = PolicyKind::simple}, with_kinds("cut=1"));
    ASSERT_TRUE(t.seconds_complete) << c.str();
    const auto want = relsim_test::hand_seconds_distribution(c);
    std::map<std::pair<std::int64_t, int>, double> got;
    for (const SecondsBin& bin : t.seconds) {
      ASSERT_TRUE(bin.outcome == Outcome::done || bin.outcome == Outcome::env_error) << c.str();
      got[{std::llround(bin.seconds * 1e6), bin.outcome == Outcome::done ? 0 : 1}] += bin.probability;
    }
    for (const auto& [key, mass] : want) {
      EXPECT_NEAR(got[key], mass, kProofTol) << key.first << " us, outcome " << key.second << ", " << c.str();
      worst = std::max(worst, std::abs(got[key] - mass));
    }
    EXPECT_EQ(got.size(), want.size()) << c.str();
    EXPECT_DOUBLE_EQ(t.seconds_quantiles.p50, relsim_test::quantile_seconds(want, 0.5)) << c.str();
    EXPECT_DOUBLE_EQ(t.seconds_quantiles.p90, relsim_test::quantile_seconds(want, 0.9)) << c.str();
    EXPECT_DOUBLE_EQ(t.seconds_quantiles.p99, relsim_test::quantile_seconds(want, 0.99)) << c.str();
  }
  report("hand wall-time distribution", worst);
}

TEST(TimeHandClosedForm, WorkedExampleOfDocsTimeMd) {
  // docs/time.md, Worked example: the SDK default schedule (r = 2, waits
  // 0.5 and 1 s less up to 25%) against t_bad = 120 s, t_good = 3600 s,
  // n = 20 calls of 10 s each. The literals are the hand formula evaluated
  // in Python (double precision) for the page.
  HandCase c{3600, 120, 10.0, 10.0, 0.0, {0.5, 1.0}, 0.25, 2, 20, false};
  EXPECT_NEAR(relsim_test::hand_closed_form(c).success, 0.9325925889618956, 1e-14);
  EXPECT_NEAR(relsim_test::hand_closed_form(c).mean_seconds, 192.84723423435628, 1e-11);
  check_hand(c, Backoff::sdk());
  // docs/time.md, A check by hand: list:1,5,30, r = 3, n = 3, d = 2, T = 3.
  HandCase h{600, 60, 2.0, 2.0, 3.0, {1, 5, 30}, 0.0, 3, 3, false};
  EXPECT_NEAR(relsim_test::hand_closed_form(h).success, 0.946394361766, 1e-12);
  EXPECT_NEAR(relsim_test::hand_closed_form(h).mean_seconds, 15.421598996, 1e-9);
  EXPECT_NEAR(relsim_test::hand_closed_form(h).mean_requests, 3.201123211, 1e-9);
  check_hand(h, list_backoff({1, 5, 30}));
  h.continuous = true;
  EXPECT_NEAR(relsim_test::hand_closed_form(h).success, 0.977840227916, 1e-12);
  check_hand(h, list_backoff({1, 5, 30}));
  // A fixed list of long waits, r = 4: list:10,30,60,120.
  HandCase l{3600, 120, 10.0, 10.0, 0.0, {10, 30, 60, 120}, 0.0, 4, 20, false};
  EXPECT_NEAR(relsim_test::hand_closed_form(l).success, 0.9901863406932496, 1e-14);
  check_hand(l, list_backoff({10, 30, 60, 120}));
}

TEST(TimeRetryAfter, Http429WaitsTheServersRetryAfterInsteadOfTheJitteredBackoff) {
  // layered, n = 1, s = 1, r = 0, every fault an http_429: success is
  // 1 - p P(bad at d + wait | bad), the wait being retry_after when
  // 0 < retry_after < 60 (no jitter), else the backoff's.
  const TwoStateRef ch{200, 50};
  const double d = 1.5;
  for (double ra : {0.0, 0.5, 20.0, 59.0, 60.0, 300.0}) {
    TimeModel t;
    t.chain = two_state_time_chain(ch.t_good, ch.t_bad);
    t.request_seconds = d;
    t.backoff = exp_backoff(4.0, 8.0, 0.5);
    t.retry_after = ra;
    const ExactResult e =
        exact_time(t, Policy{.n = 1, .r = 0, .s = 1, .kind = PolicyKind::layered}, with_kinds("http_429=1"));
    const bool honoured = ra > 0.0 && ra < 60.0;
    const double q = honoured ? ch.bad_bad(d + ra) : ch.bad_bad_jittered(d, 4.0, 0.5);
    const double wait = honoured ? ra : 4.0 * 0.75;
    EXPECT_NEAR(e.success, 1.0 - ch.p() * q, kProofTol) << "retry_after " << ra;
    EXPECT_LE(rel(e.mean_seconds, d + ch.p() * (wait + d)), kProofTol) << "retry_after " << ra;
  }
}

// ---------------------------------------------------------------- (c)
// A three-state chain with a half-bad middle state (Gilbert-Elliott form).
TimeChain three_state_chain() {
  TimeChain c;
  c.generator.resize(3, 3);
  c.generator << -0.02, 0.015, 0.005, 0.1, -0.3, 0.2, 0.05, 0.25, -0.3;
  c.bad = Eigen::Vector3d(0.0, 0.5, 1.0);
  // Stationary law: the null vector of Q^T, normalised.
  Eigen::FullPivLU<Eigen::MatrixXd> lu(c.generator.transpose());
  Eigen::VectorXd pi = lu.kernel().col(0);
  c.initial = (pi / pi.sum()).transpose();
  return c;
}

struct JitterCase {
  TimeChain chain;
  Policy policy;
  const char* kinds;
  double d, base, cap, jitter;
};

// Success, mean seconds, mean requests and every outcome, as one vector.
std::vector<double> summary(const ExactResult& e) {
  std::vector<double> v{e.success, e.mean_seconds, e.mean_requests};
  v.insert(v.end(), e.outcomes.begin(), e.outcomes.end());
  return v;
}

std::vector<double> fixed_run(const JitterCase& c, std::vector<double> waits) {
  TimeModel t;
  t.chain = c.chain;
  t.request_seconds = c.d;
  t.backoff = list_backoff(std::move(waits));
  return summary(exact_time(t, c.policy, with_kinds(c.kinds)));
}

std::vector<double> jittered_run(const JitterCase& c) {
  TimeModel t;
  t.chain = c.chain;
  t.request_seconds = c.d;
  t.backoff = exp_backoff(c.base, c.cap, c.jitter);
  return summary(exact_time(t, c.policy, with_kinds(c.kinds)));
}

TEST(TimeJitter, OneJitteredWaitEqualsTheQuadratureOfTheFixedWaitEngine) {
  // One wait at most per task (n = 1 and one retry): the result is the
  // average over U of the engine with the fixed wait base (1 - jitter U).
  double worst = 0.0;
  for (const TimeChain& chain : {two_state_time_chain(120, 30), three_state_chain()})
    for (double jitter : {0.25, 0.5, 1.0})
      for (const JitterCase& c :
           {JitterCase{chain, Policy{.n = 1, .r = 1, .kind = PolicyKind::simple}, "cut=1", 2.0, 6, 8, jitter},
            JitterCase{chain, Policy{.n = 1, .r = 0, .s = 1, .kind = PolicyKind::layered}, "http_503=1,cut=1", 0.5, 10,
                       8, jitter}}) {
        const double w = std::min(c.base, c.cap);
        const std::vector<double> got = jittered_run(c);
        for (std::size_t i = 0; i < got.size(); ++i) {
          const double want = relsim_test::integrate_unit(
              [&](double u) { return fixed_run(c, {w * (1.0 - jitter * u)})[i]; });
          EXPECT_LE(rel(got[i], want), kQuadTol) << "entry " << i << " jitter " << jitter << ' ' << describe(c.policy);
          worst = std::max(worst, rel(got[i], want));
        }
      }
  report("one jittered wait vs quadrature", worst);
}

TEST(TimeJitter, TwoJitteredWaitsEqualTheTwoDimensionalQuadrature) {
  // r = 2: waits 2 (1 - j U1) and 3 (1 - j U2) with independent U1, U2.
  double worst = 0.0;
  for (const TimeChain& chain : {two_state_time_chain(40, 20), three_state_chain()}) {
    const JitterCase c{chain, Policy{.n = 1, .r = 2, .kind = PolicyKind::simple}, "cut=1", 1.0, 2, 3, 0.5};
    const std::vector<double> got = jittered_run(c);
    for (std::size_t i = 0; i < 3; ++i) {
      const double want = relsim_test::integrate_unit([&](double u1) {
        return relsim_test::integrate_unit(
            [&](double u2) { return fixed_run(c, {2.0 * (1.0 - 0.5 * u1), 3.0 * (1.0 - 0.5 * u2)})[i]; });
      });
      EXPECT_LE(rel(got[i], want), kQuadTol) << "entry " << i;
      worst = std::max(worst, rel(got[i], want));
    }
  }
  report("two jittered waits vs 2-d quadrature", worst);
}

TEST(TimeChainAveraging, AveragedTransitionEqualsTheQuadratureOfTransitionForThreeStates) {
  const TimeChain c = three_state_chain();
  double worst_exp = 0.0, worst_avg = 0.0;
  for (double t : {0.0, 0.3, 4.0, 25.0, 300.0}) {
    const double d = (c.transition(t) - relsim_test::uniformised_exp(c.generator, t)).cwiseAbs().maxCoeff();
    EXPECT_LE(d, kProofTol) << "t = " << t;
    worst_exp = std::max(worst_exp, d);
  }
  for (double fixed : {0.0, 1.5})
    for (double wait : {0.5, 8.0, 60.0})
      for (double jitter : {0.0, 0.25, 1.0}) {
        const Eigen::MatrixXd got = c.averaged_transition(fixed, wait, jitter);
        for (Eigen::Index i = 0; i < 3; ++i)
          for (Eigen::Index j = 0; j < 3; ++j) {
            const double want = relsim_test::integrate_unit(
                [&](double u) { return c.transition(fixed + wait * (1.0 - jitter * u))(i, j); });
            EXPECT_NEAR(got(i, j), want, kQuadTol) << fixed << ' ' << wait << ' ' << jitter;
            worst_avg = std::max(worst_avg, std::abs(got(i, j) - want));
          }
      }
  report("3-state exp(Qt) vs uniformisation", worst_exp);
  report("3-state averaged transition vs quadrature", worst_avg);
}

TEST(TimeChainAveraging, TwoStateStepsAreTheClosedFormsOfDocsTimeMd) {
  const TwoStateRef ref{90, 30};
  const TimeChain c = two_state_time_chain(ref.t_good, ref.t_bad);
  EXPECT_NEAR(c.initial(1), 0.25, kProofTol);
  EXPECT_NEAR(c.generator(0, 1), 1.0 / 90.0, kProofTol);
  EXPECT_NEAR(c.generator(1, 0), 1.0 / 30.0, kProofTol);
  for (double t : {0.0, 1.0, 20.0, 1e4}) {
    EXPECT_NEAR(c.transition(t)(1, 1), ref.bad_bad(t), kProofTol);
    EXPECT_NEAR(c.transition(t)(0, 1), ref.good_bad(t), kProofTol);
    EXPECT_NEAR(c.averaged_transition(t, 8.0, 0.25)(1, 1), ref.bad_bad_jittered(t, 8.0, 0.25), kProofTol);
    const double good_bad = relsim_test::integrate_unit([&](double u) { return ref.good_bad(t + 8.0 * (1.0 - u)); });
    EXPECT_NEAR(c.averaged_transition(t, 8.0, 1.0)(0, 1), good_bad, kQuadTol);
  }
}

// ---------------------------------------------------------------- (d)
using relsim::test::input_error;

void expect_names(const std::string& message, const std::string& value) {
  EXPECT_NE(message.find(value), std::string::npos) << "'" << message << "' does not name " << value;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(TimeBadInput, SojournsMustBePositive) {
  expect_names(input_error([] { two_state_time_chain(0, 120); }), "0");
  expect_names(input_error([] { two_state_time_chain(-3600, 120); }), "-3600");
  expect_names(input_error([] { two_state_time_chain(3600, 0); }), "0");
  expect_names(input_error([] { two_state_time_chain(3600, -7.5); }), "-7.5");
  expect_names(input_error([] { two_state_time_chain(std::numeric_limits<double>::quiet_NaN(), 1); }), "nan");
}

TEST(TimeBadInput, BackoffSpecsNameTheBadEntry) {
  expect_names(input_error([] { parse_backoff("list:1,-2,30"); }), "-2");
  expect_names(input_error([] { parse_backoff("list:1,abc,30"); }), "abc");
  expect_names(input_error([] { parse_backoff("exp:0.5,8,1.5"); }), "1.5");
  expect_names(input_error([] { parse_backoff("exp:-0.5,8,0.25"); }), "-0.5");
  expect_names(input_error([] { parse_backoff("fibonacci"); }), "fibonacci");
  input_error([] { parse_backoff("list:"); });
  input_error([] { parse_backoff("exp:0.5,8"); });
  // The valid ones parse back to themselves.
  for (const char* ok : {"sdk", "none", "exp:0.1,20,1", "list:1,5,30"})
    EXPECT_EQ(to_string(parse_backoff(to_string(parse_backoff(ok)))), to_string(parse_backoff(ok))) << ok;
}

TEST(TimeBadInput, FaultSecondsNameTheBadEntry) {
  expect_names(input_error([] { parse_fault_seconds("stall=abc", 10, 30); }), "abc");
  expect_names(input_error([] { parse_fault_seconds("stall=-3", 10, 30); }), "-3");
  expect_names(input_error([] { parse_fault_seconds("nokind=3", 10, 30); }), "nokind");
  expect_names(input_error([] { parse_fault_seconds("stall", 10, 30); }), "stall");
  const auto t = parse_fault_seconds("timeouts", 10, 30);
  EXPECT_EQ(t[static_cast<int>(FaultKind::slow_headers)], 10.0);
  EXPECT_EQ(t[static_cast<int>(FaultKind::stall)], 30.0);
  EXPECT_TRUE(std::isnan(t[static_cast<int>(FaultKind::cut)]));
}

TEST(TimeBadInput, TimeModelFieldsOutOfRangeAreRefusedByExactTime) {
  const auto bad = [](auto edit) {
    TimeModel t;
    t.chain = two_state_time_chain(3600, 120);
    edit(t);
    return input_error([&] { exact_time(t, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}); });
  };
  expect_names(bad([](TimeModel& t) { t.request_seconds = -1.25; }), "-1.25");
  expect_names(bad([](TimeModel& t) { t.think_seconds = -4; }), "-4");
  expect_names(bad([](TimeModel& t) { t.retry_after = -2; }), "-2");
  expect_names(bad([](TimeModel& t) { t.backoff = list_backoff({1, -6, 3}); }), "-6");
  expect_names(bad([](TimeModel& t) { t.backoff = exp_backoff(0.5, 8, 2.5); }), "2.5");
  expect_names(bad([](TimeModel& t) { t.fault_seconds[0] = -9; }), "-9");
}

}  // namespace
}  // namespace relsim
