// The mean wall time of the tasks that end done (ExactResult::mean_seconds_done)
// against paths that do not share its code: for fixed waits, the exact
// wall-time distribution's done bins (the walk by microseconds); for jittered
// waits, the time-mode simulator's tasks (trace_time_tasks: the chain drawn
// event by event, never exp(Qt)); and the wait-weighted step
// (TimeChain::wait_weighted_transition) against Simpson's rule over
// w exp(Q (fixed + w)).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <unsupported/Eigen/MatrixFunctions>

#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/montecarlo/trace_time.hpp"

namespace relsim {
namespace {

TimeChain three_states() {
  Eigen::MatrixXd step(3, 3);
  step << 0.9, 0.08, 0.02, 0.2, 0.7, 0.1, 0.05, 0.25, 0.7;
  return uniformised_time_chain(step, Eigen::Vector3d(0.0, 0.3, 0.95), 20.0);
}

TimeModel model(const TimeChain& chain, const std::string& backoff, double think = 0.0) {
  TimeModel t;
  t.chain = chain;
  t.request_seconds = 8.0;
  t.fault_seconds[static_cast<std::size_t>(FaultKind::stall)] = 30.0;
  t.think_seconds = think;
  t.backoff = parse_backoff(backoff);
  return t;
}

Policy layered(int s, int r, int n) {
  Policy p;
  p.kind = PolicyKind::layered;
  p.s = s;
  p.r = r;
  p.n = n;
  return p;
}

ExactOptions mixed_kinds() {
  ExactOptions o;
  o.kinds = parse_fault_weights("http_529=2,cut=1,stall=1");
  return o;
}

double done_mean_of_bins(const ExactResult& r) {
  double mass = 0.0, sum = 0.0;
  for (const SecondsBin& b : r.seconds)
    if (b.outcome == Outcome::done) mass += b.probability, sum += b.probability * b.seconds;
  return sum / mass;
}

TEST(DoneSeconds, FixedWaitsMatchTheDoneBinsOfTheExactDistribution) {
  for (const TimeChain& chain : {two_state_time_chain(300, 60), three_states()})
    for (const double think : {0.0, 2.5}) {
      const ExactResult r = exact_time(model(chain, "list:1,5,30", think), layered(3, 1, 5), mixed_kinds());
      ASSERT_TRUE(r.seconds_complete);
      EXPECT_NEAR(r.mean_seconds_done, done_mean_of_bins(r), 1e-9 * r.mean_seconds_done);
    }
}

TEST(DoneSeconds, JitteredWaitsMatchTheSimulatorsDoneTasks) {
  for (const TimeChain& chain : {two_state_time_chain(120, 40), three_states()}) {
    const TimeModel time = model(chain, "exp:2,30,1", 1.0);
    const Policy policy = layered(4, 1, 4);
    const double exact = exact_time(time, policy, mixed_kinds()).mean_seconds_done;
    SimConfig config;
    config.tasks = 200000;
    config.seed = 7;
    config.kinds = mixed_kinds().kinds;
    double n = 0, sum = 0, squares = 0;
    for (const TimeTaskTrace& t : trace_time_tasks(time, policy, config))
      if (t.outcome.outcome == Outcome::done) n += 1, sum += t.seconds, squares += t.seconds * t.seconds;
    const double mean = sum / n, sd = std::sqrt((squares - n * mean * mean) / (n - 1));
    EXPECT_NEAR(exact, mean, 4.0 * sd / std::sqrt(n)) << "simulated " << mean;
  }
}

// Simpson's rule on 20,000 intervals of w exp(Q (fixed + w)) over the
// uniform wait, against the closed forms and Van Loan's block.
TEST(DoneSeconds, WaitWeightedStepMatchesQuadrature) {
  struct Case {
    TimeChain chain;
    double fixed, wait, jitter;
  };
  const Case cases[] = {{two_state_time_chain(300, 60), 8, 4, 0.25},   // lambda width < 1
                        {two_state_time_chain(5, 2), 8, 30, 1.0},      // lambda width >= 1
                        {three_states(), 8, 16, 0.5},
                        {two_state_time_chain(300, 60), 8, 4, 0.0}};
  for (const Case& c : cases) {
    const Eigen::MatrixXd got = c.chain.wait_weighted_transition(c.fixed, c.wait, c.jitter);
    Eigen::MatrixXd want;
    if (c.jitter == 0.0) {
      want = c.wait * Eigen::MatrixXd(c.chain.generator * (c.fixed + c.wait)).exp();  // Eigen's, not the closed form
    } else {
      const int m = 20000;
      const double low = c.wait * (1 - c.jitter), h = (c.wait - low) / m;
      want = Eigen::MatrixXd::Zero(c.chain.states(), c.chain.states());
      for (int i = 0; i <= m; ++i) {
        const double w = low + h * i, weight = (i == 0 || i == m) ? 1 : (i % 2 ? 4 : 2);
        want += weight * w * c.chain.transition(c.fixed + w);
      }
      want *= h / 3.0 / (c.wait - low);
    }
    EXPECT_LT((got - want).cwiseAbs().maxCoeff(), 1e-9) << got << "\n" << want;
  }
}

TEST(DoneSeconds, NoneWhenNoTaskEndsDone) {
  TimeModel time = model(two_state_time_chain(1, 1e6), "sdk");  // bad all but always
  time.chain.bad = Eigen::Vector2d(1.0, 1.0);
  ExactOptions o;
  o.kinds = parse_fault_weights("cut=1");
  const ExactResult r = exact_time(time, layered(2, 0, 3), o);
  EXPECT_EQ(r.success, 0.0);
  EXPECT_TRUE(std::isnan(r.mean_seconds_done));
}

}  // namespace
}  // namespace relsim
