#pragma once
// For tests: how to build the model's parameter structs. relsim::Policy,
// Model and TimeModel are aggregates; build them with C++20 designated
// initializers at the call site, fields in declaration order:
//   Policy{.n = 2, .r = 2, .s = 2, .B = 4, .kind = PolicyKind::budgeted}
//     (defaults: n 1, r 0, s 2, B 0, kind simple; .kind comes last)
//   Model{.p = 0.3, .q = 0.8, .b = 1, .g = 0, .chain = ChainScope::continuous}
//     (defaults: p 0, q 0, b 0, g 0, chain fresh)
//   TimeModel{.chain = two_state_time_chain(30, 10), .request_seconds = 1.0,
//             .think_seconds = 0.5, .backoff = parse_backoff("sdk")}
//     (always name .chain and .backoff: they have no default member
//      initializer, and GCC's -Wextra warns when they are left out)
// House style: a Policy names .n, .r and .kind, and .s and .B when they are
// not 2 and 0; a Model names .p and .q, and .b, .g and .chain when they are
// not the defaults. Designators must follow declaration order, cannot be
// mixed with positional values, and narrowing is an error (the int64 fields
// are n, b and g; r, s and B are int). No test defines its own builder for
// Policy or Model; time_model_of below is the one shorthand for the common
// two-state TimeModel.
#include <type_traits>

#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"

static_assert(std::is_aggregate_v<relsim::Policy>, "tests build Policy with designated initializers");
static_assert(std::is_aggregate_v<relsim::Model>, "tests build Model with designated initializers");
static_assert(std::is_aggregate_v<relsim::TimeModel>, "tests build TimeModel with designated initializers");

namespace relsim::test {

// Mean sojourns t_good and t_bad seconds, the backoff of this spec (e.g.
// "sdk", "list:1,2"), `request` seconds per request and `think` between calls.
inline TimeModel time_model_of(double t_good, double t_bad, const char* backoff, double request, double think = 0.0) {
  return TimeModel{.chain = two_state_time_chain(t_good, t_bad),
                   .request_seconds = request,
                   .think_seconds = think,
                   .backoff = parse_backoff(backoff)};
}

// A hidden chain of three states (good, half bad, bad) stepping every 5 s,
// uniformised into continuous time: a first provider that is no two-state chain.
inline TimeChain three_state_time_chain() {
  Eigen::MatrixXd step(3, 3);
  step << 0.9, 0.1, 0.0, 0.2, 0.6, 0.2, 0.0, 0.3, 0.7;
  return uniformised_time_chain(step, Eigen::Vector3d(0.0, 0.5, 1.0), 5.0);
}

}  // namespace relsim::test
