// The fluid model of a fleet under load (fluid.hpp): the mean number of
// requests in service and of calls backing off, per attempt, as ordinary
// differential equations, integrated from an empty system with Boost.Odeint's
// classic fourth-order Runge-Kutta at a fixed step.
//
// State, for a call with r retries: S_j (j = 0..r) requests of attempt j in
// service, W_j (j = 1..r) calls waiting before attempt j. Attempt j is offered
// a_0 = arrival_rate and a_j = W_j / wait: the wait is taken as exponential
// with the given mean, which changes the transient but not the steady state
// (by Little's law the number waiting is the flow times the mean wait).
// d is the mean time in service (a bad request breaks after bad_share of a
// good one's request_seconds). A share phi of the offered flow A = sum a_j
// is admitted; the rest is answered 529 at once and, like a bad answer,
// costs an attempt:
//   dS_j/dt     = phi a_j - S_j / d
//   dW_{j+1}/dt = p S_j / d + (1 - phi) a_j - W_{j+1} / wait    (j < r)
// and attempt r's bad answers and 529s fail the call.
#include "relsim/fleet/fluid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <boost/numeric/odeint.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim::fleet {
namespace {

using State = std::vector<double>;

constexpr double kMaxArrivalRate = 1e9;
constexpr int kMaxRetries = 1000;
constexpr double kMaxFluidSeconds = 1e9;
// The header allows any time above 0, but the flows divide by the shorter
// of request_seconds and wait over ten (tau) and multiply the capacity by
// that: below this they overflow to inf and the result to NaN.
constexpr double kMinSeconds = 1e-200;
constexpr double kMaxFluidCapacity = 1e12;
// The step is the fastest time constant over kStepsPerTime: RK4's local error
// on a decay e^{-t/T} at step h is about (h/T)^5 / 120, so 1e-12 relative per
// step for the service and wait stages and 1e-7 for the admission's faster
// one (kTauPerTime below). Only the transient carries that error: a fixed
// step RK4 map has exactly the ODE's equilibria as its fixed points.
constexpr double kStepsPerTime = 100.0;
// The admission pulls the streams busy to the capacity with time constant
// min(request_seconds, wait) / kTauPerTime (see Fluid::flows), ten steps.
constexpr double kTauPerTime = 10.0;
// The horizon is refused, not the step lengthened, beyond kMaxSteps steps or
// kMaxStageSteps steps times stages (2r + 1 of them): a longer step would
// leave RK4's accurate range (and past 2.8 time constants its stable one)
// for the fast stages. Measured at -O2, 1e8 steps with r = 2 take about 7 s
// and 2.5e5 with r = 1000 about 4.5 s; that is the worst case, reached only when
// wait and request_seconds differ by orders of magnitude, since the
// integration stops once a step leaves the state unchanged (solve_fluid).
constexpr double kMaxSteps = 1e8;
constexpr double kMaxStageSteps = 5e8;

struct Flows {
  double offered = 0.0;   // A: first attempts and retries sent per second
  double busy = 0.0;      // S: requests in service
  double admitted = 0.0;  // phi A: requests admitted per second
};

// A served request's mean time in service: a good one's request_seconds, a
// bad one's bad_share of it. The service leaves at rate S / d whatever the
// answer (a mean field), so the steady state, by Little's law, depends on
// the mean alone.
double mean_service(const FluidInput& in) { return in.request_seconds * (1.0 - in.p + in.p * in.bad_share); }

// The right-hand side, cheap to copy (odeint takes the system by value).
class Fluid {
 public:
  explicit Fluid(const FluidInput& in)
      : arrival_(in.arrival_rate),
        r_(static_cast<std::size_t>(in.r)),
        per_wait_(1.0 / in.wait),
        p_(in.p),
        d_(mean_service(in)),
        per_d_(1.0 / mean_service(in)),
        capacity_(in.capacity),
        tau_(std::min(in.request_seconds, in.wait) / kTauPerTime) {}

  std::size_t size() const { return 2 * r_ + 1; }  // S_0..S_r, then W_1..W_r
  double request_seconds() const { return d_; }
  double p() const { return p_; }

  // The admission. Without a limit, everything offered. With capacity C, the
  // hard rule (all of A while S < C, then only what departs, S/d) is a
  // discontinuous right-hand side: fixed-step RK4 overshoots C by up to
  // (A - C/d) h at the switch and, as dS/dt = 0 above C, keeps the excess
  // for good (0.02% to 0.8% of C in the unit tests' steady states, 1.5% on
  // the way in). Instead the admitted flow is min(A, S/d + (C - S)/tau),
  // kept >= 0: Lipschitz, so RK4 keeps its order, and in the throttled regime
  // dS/dt = (C - S)/tau, so S rises to C without crossing it. Its equilibria
  // are the hard rule's exactly: throttled at S = C admitting C/d, free at
  // S = A d when A d <= C. So the steady state has no bias (measured: 1e-14,
  // rounding); only the transient differs, S reaching C with lag tau (a
  // tenth of the fastest time constant) instead of at once.
  Flows flows(const State& x) const {
    Flows f;
    f.offered = arrival_;
    for (std::size_t j = 1; j <= r_; ++j) f.offered += x[r_ + j] * per_wait_;
    for (std::size_t j = 0; j <= r_; ++j) f.busy += x[j];
    f.admitted = f.offered;
    if (capacity_ > 0.0)
      f.admitted = std::clamp(f.busy * per_d_ + (capacity_ - f.busy) / tau_, 0.0, f.offered);
    return f;
  }

  void operator()(const State& x, State& dxdt, double /*t*/) const {
    const Flows f = flows(x);
    const double phi = f.admitted / f.offered;  // offered >= arrival_rate > 0
    for (std::size_t j = 0; j <= r_; ++j) {
      const double offered_j = j == 0 ? arrival_ : x[r_ + j] * per_wait_;
      const double departing = x[j] * per_d_;
      dxdt[j] = phi * offered_j - departing;
      // Attempt j's bad answers and 529s become attempt j + 1's waiting calls;
      // attempt r's leave the system as failed calls.
      if (j < r_) dxdt[r_ + j + 1] = p_ * departing + (1.0 - phi) * offered_j - x[r_ + j + 1] * per_wait_;
    }
  }

 private:
  double arrival_;
  std::size_t r_;
  double per_wait_, p_, d_, per_d_, capacity_, tau_;  // per_x_: 1 / x, to multiply
};

void require(bool ok, const char* field, double value, const char* range) {
  if (!ok) throw InputError(fmt::format("{} = {} is out of range: it must be in {}", field, value, range));
}

// Every field against the header's ranges (negated tests so NaN fails too);
// returns the integration step.
double validate(const FluidInput& in) {
  require(in.arrival_rate > 0.0 && in.arrival_rate <= kMaxArrivalRate, "arrival_rate", in.arrival_rate, "(0, 1e9]");
  if (in.r < 0 || in.r > kMaxRetries)
    throw InputError(fmt::format("r = {} is out of range: it must be in [0, {}]", in.r, kMaxRetries));
  require(in.wait > 0.0 && in.wait <= kMaxFluidSeconds, "wait", in.wait, "(0, 1e9]");
  require(in.p >= 0.0 && in.p < 1.0, "p", in.p, "[0, 1)");
  require(in.request_seconds > 0.0 && in.request_seconds <= kMaxFluidSeconds, "request_seconds", in.request_seconds,
          "(0, 1e9]");
  require(in.bad_share > 0.0 && in.bad_share <= 1.0, "bad_share", in.bad_share, "(0, 1]");
  require(in.capacity >= 0.0 && in.capacity <= kMaxFluidCapacity, "capacity", in.capacity, "[0, 1e12] (0: no limit)");
  require(in.horizon > 0.0 && in.horizon <= kMaxFluidSeconds, "horizon", in.horizon, "(0, 1e9]");
  const double shorter = std::min(in.request_seconds, in.wait);
  if (shorter < kMinSeconds)
    throw InputError(fmt::format("request_seconds = {} and wait = {} are too short to integrate: the shorter must be "
                                 "at least {:g} s",
                                 in.request_seconds, in.wait, kMinSeconds));
  const double step = shorter / kStepsPerTime;
  const double max_steps = std::min(kMaxSteps, kMaxStageSteps / (2.0 * in.r + 1.0));
  if (in.horizon / step > max_steps)
    throw InputError(fmt::format(
        "horizon = {} is out of range for request_seconds = {}, wait = {} and r = {}: it must be in (0, {:g}] "
        "(at most {:g} steps of min(request_seconds, wait) / {:g})",
        in.horizon, in.request_seconds, in.wait, in.r, max_steps * step, std::floor(max_steps), kStepsPerTime));
  return step;
}

}  // namespace

FluidResult solve_fluid(const FluidInput& input) {
  const double max_step = validate(input);
  const Fluid fluid(input);
  // Whole steps that end on the horizon exactly, none longer than max_step.
  const auto steps = static_cast<std::int64_t>(std::ceil(input.horizon / max_step));
  const double step = input.horizon / static_cast<double>(steps);

  boost::numeric::odeint::runge_kutta4<State> stepper;
  State x(fluid.size(), 0.0), next(fluid.size(), 0.0);
  for (std::int64_t i = 0; i < steps; ++i) {
    stepper.do_step(fluid, x, static_cast<double>(i) * step, next, step);
    // The system is autonomous, so a step that leaves the state unchanged
    // bit for bit leaves every later step unchanged too: the state at the
    // horizon is this one, exactly. Long horizons end here in practice.
    if (next == x) break;
    std::swap(x, next);
  }

  const Flows f = fluid.flows(x);
  FluidResult out;
  out.goodput = (1.0 - fluid.p()) * f.busy / fluid.request_seconds();
  out.offered = f.offered;
  // goodput is 0 only if an arrival rate near the smallest double underflows.
  out.amplification = out.goodput > 0.0 ? out.offered / out.goodput : std::numeric_limits<double>::infinity();
  out.rejected = f.offered - f.admitted;  // (1 - phi) A, exactly 0 when all is admitted
  out.in_service = f.busy;
  out.call_success = out.goodput / input.arrival_rate;
  return out;
}

}  // namespace relsim::fleet
