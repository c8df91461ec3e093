#pragma once
// For tests: a Model from its fields, in the order docs/model.md gives them,
// and a TimeModel over Gilbert's two states in continuous time (docs/time.md).
#include <cstdint>

#include "relsim/core/model.hpp"
#include "relsim/core/time_model.hpp"

namespace relsim::test {

inline Model model_of(double p, double q, std::int64_t b = 0, std::int64_t g = 0,
                      ChainScope chain = ChainScope::fresh) {
  Model m;
  m.p = p;
  m.q = q;
  m.b = b;
  m.g = g;
  m.chain = chain;
  return m;
}

// Mean sojourns t_good and t_bad seconds, the backoff of this spec (e.g.
// "sdk", "list:1,2"), `request` seconds per request and `think` between calls.
inline TimeModel time_model_of(double t_good, double t_bad, const char* backoff, double request, double think = 0.0) {
  TimeModel t;
  t.chain = two_state_time_chain(t_good, t_bad);
  t.backoff = parse_backoff(backoff);
  t.request_seconds = request;
  t.think_seconds = think;
  return t;
}

}  // namespace relsim::test
