// The fluid model (fleet/fluid.hpp) against steady states worked out by hand
// from its flows (below, in the comments), not from its code. In the steady
// state attempt j is offered a_j calls per second, a share phi of them is
// admitted (the same share for every attempt: admission does not look at the
// attempt number) and an admitted one is good with probability 1 - p. So an
// attempt fails with probability q = 1 - phi (1 - p), a_j = arrival q^j, and
//   offered      = sum_{j<=r} a_j = arrival (1 - q^{r+1}) / (1 - q)
//   goodput      = (1 - p) phi offered = arrival (1 - q^{r+1})
//   call_success = 1 - q^{r+1}      (a call fails when all r + 1 attempts do)
//   in_service   = phi offered d    (Little: admitted flow times d)
// Without a binding capacity phi = 1 and q = p.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "relsim/fleet/fluid.hpp"
#include "support/input_error.hpp"

namespace relsim::fleet {
namespace {

using relsim::test::input_error;

FluidInput input(double arrival, int r, double wait, double p, double d, double capacity, double horizon = 600.0) {
  FluidInput in;
  in.arrival_rate = arrival;
  in.r = r;
  in.wait = wait;
  in.p = p;
  in.request_seconds = d;
  in.capacity = capacity;
  in.horizon = horizon;
  return in;
}

std::string describe(const FluidInput& in) {
  return testing::PrintToString(in.arrival_rate) + "/s, r " + testing::PrintToString(in.r) + ", wait " +
         testing::PrintToString(in.wait) + ", p " + testing::PrintToString(in.p) + ", d " +
         testing::PrintToString(in.request_seconds) + ", capacity " + testing::PrintToString(in.capacity);
}

void expect_relative(double actual, double expected, double tolerance, const char* what) {
  EXPECT_NEAR(actual / expected, 1.0, tolerance) << what << ": " << actual << ", expected " << expected;
}

// No limit: phi = 1, q = p, so goodput = arrival (1 - p^{r+1}), offered =
// arrival (1 - p^{r+1}) / (1 - p), amplification = 1 / (1 - p), nothing
// rejected, in_service = offered d. The horizons are over 40 times the mean
// time to the last attempt, (r + 1) d + r wait, so the transient is gone.
TEST(FleetFluid, WithoutALimitMatchesTheClosedForm) {
  const std::vector<FluidInput> cases = {
      input(10.0, 2, 1.0, 0.1, 1.0, 0.0),    input(100.0, 5, 2.0, 0.3, 0.5, 0.0),
      input(3.0, 0, 1.0, 0.5, 3.0, 0.0),     input(50.0, 10, 0.2, 0.05, 1.0, 0.0),
      input(20.0, 3, 1.0, 0.9, 1.0, 0.0),    input(1e6, 4, 0.5, 0.0, 2.0, 0.0),
  };
  for (const FluidInput& in : cases) {
    SCOPED_TRACE(describe(in));
    const double fail_all = std::pow(in.p, in.r + 1);
    const double offered = in.arrival_rate * (1.0 - fail_all) / (1.0 - in.p);
    const FluidResult out = solve_fluid(in);
    expect_relative(out.goodput, in.arrival_rate * (1.0 - fail_all), 1e-6, "goodput");
    expect_relative(out.offered, offered, 1e-6, "offered");
    expect_relative(out.amplification, 1.0 / (1.0 - in.p), 1e-6, "amplification");
    expect_relative(out.call_success, 1.0 - fail_all, 1e-6, "call_success");
    expect_relative(out.in_service, offered * in.request_seconds, 1e-6, "in_service");
    EXPECT_EQ(out.rejected, 0.0);
  }
}

// With p = 0 and no retries every call is one good request: goodput is the arrival rate.
TEST(FleetFluid, PerfectRequestsWithoutRetriesDeliverEveryArrival) {
  const FluidResult out = solve_fluid(input(25.0, 0, 1.0, 0.0, 1.0, 0.0));
  EXPECT_NEAR(out.goodput, 25.0, 25.0 * 1e-12);
  EXPECT_NEAR(out.amplification, 1.0, 1e-12);
  EXPECT_NEAR(out.call_success, 1.0, 1e-12);
  EXPECT_NEAR(out.in_service, 25.0, 25.0 * 1e-12);
  EXPECT_EQ(out.rejected, 0.0);
}

// The transient, for r = 0: dS/dt = arrival - S/d from S = 0 gives
// S(t) = arrival d (1 - e^{-t/d}), and goodput (1 - p) S / d. This pins the
// integration's clock, which no steady state does.
TEST(FleetFluid, FillsAnEmptySystemExponentially) {
  for (const double t : {0.05, 0.7, 2.0, 5.0}) {
    SCOPED_TRACE(testing::Message() << "t = " << t);
    const FluidResult out = solve_fluid(input(40.0, 0, 1.0, 0.2, 2.0, 0.0, t));
    const double busy = 40.0 * 2.0 * (1.0 - std::exp(-t / 2.0));
    expect_relative(out.in_service, busy, 1e-9, "in_service");
    expect_relative(out.goodput, 0.8 * busy / 2.0, 1e-9, "goodput");
  }
}

// The admission only ever throttles when the busy streams near the
// capacity; one ten times the load leaves the same flows, bit for bit.
TEST(FleetFluid, CapacityFarAboveTheLoadIsNoLimit) {
  for (const FluidInput& free : {input(10.0, 2, 1.0, 0.1, 1.0, 0.0), input(100.0, 5, 2.0, 0.3, 0.5, 0.0)}) {
    FluidInput limited = free;
    limited.capacity = 10.0 * free.arrival_rate * free.request_seconds / (1.0 - free.p);
    SCOPED_TRACE(describe(limited));
    const FluidResult a = solve_fluid(free), b = solve_fluid(limited);
    EXPECT_EQ(a.goodput, b.goodput);
    EXPECT_EQ(a.offered, b.offered);
    EXPECT_EQ(a.in_service, b.in_service);
    EXPECT_EQ(b.rejected, 0.0);
  }
}

// Binding capacity C (the free load offered d would exceed it): in the
// steady state the streams are full, in_service = C, and the admitted flow
// is what departs, phi offered = C / d, so goodput = (1 - p) C / d and
// call_success = (1 - p) C / (d arrival) = 1 - q^{r+1}. That fixes
// q = (1 - call_success)^{1/(r+1)}, phi = (1 - q) / (1 - p), offered = C / (d phi),
// rejected = offered - C / d.
std::vector<FluidInput> binding_cases() {
  return {
      input(100.0, 2, 1.0, 0.0, 1.0, 50.0),  input(200.0, 2, 1.0, 0.1, 1.0, 150.0),
      input(120.0, 3, 1.0, 0.05, 1.0, 100.0), input(50.0, 4, 0.5, 0.2, 2.0, 40.0),
      input(10.0, 1, 3.0, 0.3, 0.5, 1.0),
  };
}

TEST(FleetFluid, BindingCapacityMatchesTheHandDerivedSteadyState) {
  for (const FluidInput& in : binding_cases()) {
    SCOPED_TRACE(describe(in));
    const double c = in.capacity, d = in.request_seconds;
    const double success = (1.0 - in.p) * c / (d * in.arrival_rate);
    const double q = std::pow(1.0 - success, 1.0 / (in.r + 1));
    const double phi = (1.0 - q) / (1.0 - in.p);
    const FluidResult out = solve_fluid(in);
    expect_relative(out.in_service, c, 1e-6, "in_service");
    expect_relative(out.goodput, (1.0 - in.p) * c / d, 1e-6, "goodput");
    expect_relative(out.call_success, success, 1e-6, "call_success");
    expect_relative(out.offered, c / (d * phi), 1e-6, "offered");
    expect_relative(out.rejected, c / (d * phi) - c / d, 1e-6, "rejected");
    expect_relative(out.amplification, 1.0 / ((1.0 - in.p) * phi), 1e-6, "amplification");
  }
}

// Conservation, from the outputs alone. Requests: what is admitted,
// offered - rejected, departs, in_service / d. Calls: each arrival ends
// either with one good answer (goodput) or after r + 1 failed attempts, each
// failing with q = 1 - (1 - rejected / offered)(1 - p):
//   arrival = goodput + arrival q^{r+1}.
TEST(FleetFluid, BindingCapacityConservesRequestsAndCalls) {
  for (const FluidInput& in : binding_cases()) {
    SCOPED_TRACE(describe(in));
    const FluidResult out = solve_fluid(in);
    expect_relative(out.offered - out.rejected, out.in_service / in.request_seconds, 1e-6, "admitted vs departed");
    const double q = 1.0 - (1.0 - out.rejected / out.offered) * (1.0 - in.p);
    expect_relative(out.goodput + in.arrival_rate * std::pow(q, in.r + 1), in.arrival_rate, 1e-6, "calls");
    EXPECT_GT(out.rejected, 0.0);
  }
}

// On the way in from an empty system the busy streams rise to the capacity
// and never pass it (within rounding), whatever the horizon.
TEST(FleetFluid, NeverExceedsTheCapacityOnTheWayIn) {
  for (int i = 1; i <= 100; ++i) {
    const double t = 0.1 * i;
    const FluidResult out = solve_fluid(input(100.0, 2, 1.0, 0.0, 1.0, 50.0, t));
    EXPECT_LE(out.in_service, 50.0 * (1.0 + 1e-12)) << "t = " << t;
  }
}

// Past the steady state more horizon changes nothing (the integration stops
// at the fixed point of its step, which must not move the answer).
TEST(FleetFluid, LongerHorizonsKeepTheSteadyState) {
  for (const double capacity : {0.0, 150.0}) {
    const FluidResult a = solve_fluid(input(200.0, 2, 1.0, 0.1, 1.0, capacity, 1e3));
    const FluidResult b = solve_fluid(input(200.0, 2, 1.0, 0.1, 1.0, capacity, 1e5));
    EXPECT_NEAR(b.goodput / a.goodput, 1.0, 1e-12) << "capacity " << capacity;
    EXPECT_NEAR(b.offered / a.offered, 1.0, 1e-12) << "capacity " << capacity;
  }
}

struct Bad {
  FluidInput in;
  std::string value;  // "field = value" as the message must say it
  std::string range;
};

std::vector<Bad> bad_inputs() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const FluidInput ok;
  std::vector<Bad> bad;
  auto with = [&](auto field, auto value, const std::string& said, const std::string& range) {
    FluidInput in = ok;
    in.*field = value;
    bad.push_back({in, said, range});
  };
  with(&FluidInput::arrival_rate, 0.0, "arrival_rate = 0", "(0, 1e9]");
  with(&FluidInput::arrival_rate, 2e9, "arrival_rate = 2000000000", "(0, 1e9]");
  with(&FluidInput::arrival_rate, inf, "arrival_rate = inf", "(0, 1e9]");
  with(&FluidInput::arrival_rate, nan, "arrival_rate = nan", "(0, 1e9]");
  with(&FluidInput::r, -1, "r = -1", "[0, 1000]");
  with(&FluidInput::r, 1001, "r = 1001", "[0, 1000]");
  with(&FluidInput::wait, 0.0, "wait = 0", "(0, 1e9]");
  with(&FluidInput::wait, nan, "wait = nan", "(0, 1e9]");
  with(&FluidInput::p, -0.1, "p = -0.1", "[0, 1)");
  with(&FluidInput::p, 1.0, "p = 1", "[0, 1)");
  with(&FluidInput::p, nan, "p = nan", "[0, 1)");
  with(&FluidInput::request_seconds, -1.0, "request_seconds = -1", "(0, 1e9]");
  with(&FluidInput::request_seconds, inf, "request_seconds = inf", "(0, 1e9]");
  with(&FluidInput::wait, 1e-300, "wait = 1e-300", "at least 1e-200 s");
  with(&FluidInput::capacity, -1.0, "capacity = -1", "[0, 1e12]");
  with(&FluidInput::capacity, 2e12, "capacity = 2000000000000", "[0, 1e12]");
  with(&FluidInput::capacity, nan, "capacity = nan", "[0, 1e12]");
  with(&FluidInput::horizon, 0.0, "horizon = 0", "(0, 1e9]");
  with(&FluidInput::horizon, 2e9, "horizon = 2000000000", "(0, 1e9]");
  with(&FluidInput::horizon, nan, "horizon = nan", "(0, 1e9]");
  // The step is min(d, wait) / 100 = 0.01 s, and r = 2 allows 1e8 of them: 1e6 s.
  with(&FluidInput::horizon, 2e6, "horizon = 2000000", "(0, 1e+06]");
  // r = 1000 allows 5e8 / 2001 steps of 0.01 s: 2498.75 s.
  FluidInput many = ok;
  many.r = 1000;
  many.horizon = 3000.0;
  bad.push_back({many, "horizon = 3000", "r = 1000: it must be in (0, 2498.75]"});
  return bad;
}

TEST(FleetFluid, EachBadFieldIsRefusedByName) {
  for (const Bad& b : bad_inputs()) {
    const std::string message = input_error([&b] { solve_fluid(b.in); });
    EXPECT_NE(message.find(b.value), std::string::npos) << "'" << b.value << "' missing in: " << message;
    EXPECT_NE(message.find(b.range), std::string::npos) << "'" << b.range << "' missing in: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  }
}

}  // namespace
}  // namespace relsim::fleet
