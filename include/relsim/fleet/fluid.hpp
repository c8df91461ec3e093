#pragma once
// A fluid (mean-field) model of a fleet under load (docs/fleet.md, The fluid
// check): offered load, retries and the provider's capacity as ordinary
// differential equations for the mean number of requests in each stage,
// integrated with Boost.Odeint. It shares no code with the event simulation
// (fleet.hpp) and so checks it: for many agents the two agree on the steady
// goodput and amplification.
//
// The case it covers: calls arrive as a Poisson stream of `arrival_rate` per
// second (tasks of one call), the simple policy with r retries and a wait of
// mean `wait` seconds before each retry (leaving the wait at rate 1/wait, as
// a mean field does; jittered waits in the simulation, not a fixed one, are
// what it describes), independent faults with probability
// p per served request, every served request holding one of `capacity`
// streams for `request_seconds` (a bad one for `bad_share` of it: the event
// simulation breaks a bad stream where the mock does), and a request that finds every stream busy
// answered 529 at once (no queue), which costs an attempt like any fault.
#include <cstdint>
#include <vector>

namespace relsim::fleet {

struct FluidInput {
  double arrival_rate = 10.0;  // new calls per second, > 0
  int r = 2;                   // retries per call, [0, 1000]
  double wait = 1.0;           // seconds before each retry, > 0
  double p = 0.1;              // P(served request bad), [0, 1)
  double request_seconds = 1.0;  // > 0
  double bad_share = 1.0;        // a bad request's share of request_seconds in service, (0, 1]
  double capacity = 0.0;       // streams; 0: no limit
  double horizon = 600.0;      // seconds integrated from an empty system
};

struct FluidResult {
  double goodput = 0.0;        // good answers per second at the horizon
  double offered = 0.0;        // requests sent per second at the horizon (first attempts and retries)
  double amplification = 0.0;  // offered / goodput
  double rejected = 0.0;       // 529s per second at the horizon
  double in_service = 0.0;     // streams busy at the horizon
  double call_success = 0.0;   // goodput / arrival_rate: P(a call succeeds) in the steady state
};

// Throws InputError naming a bad field and its range.
FluidResult solve_fluid(const FluidInput& input);

}  // namespace relsim::fleet
