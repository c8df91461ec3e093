#include "sweep/sweep_points.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/fnv.hpp"
#include "relsim/core/rng.hpp"

namespace relsim::sweep_detail {
namespace {

// The grid's axes in grid order, the last varying fastest. In discrete mode
// the time axes have one (unused) value; in time mode FIRST and SECOND are
// t_good and t_bad, and b and g have one.
enum Axis : std::size_t { kFirst, kSecond, kR, kN, kB, kG, kChain, kPolicy, kS, kBudget, kRequest, kThink, kBackoff,
                          kRetryAfter, kAxes };
using Index = std::array<std::size_t, kAxes>;

Index axis_sizes(const SweepGrid& g) {
  const bool timed = g.timed();
  const auto time_axis = [timed](std::size_t size) { return timed ? size : std::size_t{1}; };
  return {timed ? g.t_good.size() : g.p.size(),
          timed ? g.t_bad.size() : std::max<std::size_t>(1, g.q.size()),
          g.r.size(), g.n.size(), timed ? 1 : g.b.size(), timed ? 1 : g.g.size(), g.chain.size(),
          g.policy.size(), g.s.size(), g.B.size(), time_axis(g.request_seconds.size()),
          time_axis(g.think_seconds.size()), time_axis(g.backoff.size()), time_axis(g.retry_after.size())};
}

bool uses_s(PolicyKind kind) { return kind != PolicyKind::simple; }
bool uses_budget(PolicyKind kind) { return kind == PolicyKind::budgeted; }

// Points of the grid: the product of the axes, each policy counted with the
// axes that apply to it only.
double grid_total(const SweepGrid& g, const Index& size) {
  double total = 1.0;
  for (std::size_t a = 0; a < kAxes; ++a)
    if (a != kPolicy && a != kS && a != kBudget) total *= static_cast<double>(size[a]);
  double policies = 0.0;
  for (const PolicyKind kind : g.policy)
    policies += (uses_s(kind) ? static_cast<double>(g.s.size()) : 1.0) *
                (uses_budget(kind) ? static_cast<double>(g.B.size()) : 1.0);
  return total * policies;
}

std::uint64_t bits_of(double x) {
  std::uint64_t u = 0;
  static_assert(sizeof u == sizeof x);
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// FNV-1a, to fold a schedule's text into the seed.
std::uint64_t text_hash(const std::string& text) { return fnv1a64(text); }

// A bijective mix of 64 bits: one SplitMix64 step from state x.
std::uint64_t mix(std::uint64_t x) { return rng::splitmix64(x); }

std::uint64_t mix_parts(std::uint64_t h, std::initializer_list<std::uint64_t> parts) {
  for (const std::uint64_t part : parts) h = mix(h ^ part);
  return h;
}

// A point's seed: today's point_seed for a simple discrete point (so adding
// the policy axes changes no simple row), with the policy mixed in for the
// others; in time mode a tag, then every coordinate.
std::uint64_t seed_of(const SweepPoint& pt, const SweepConfig& config) {
  const Policy& pol = pt.policy;
  const std::initializer_list<std::uint64_t> policy_parts = {
      static_cast<std::uint64_t>(pol.kind), static_cast<std::uint64_t>(pol.s), static_cast<std::uint64_t>(pol.B)};
  if (!pt.time) {
    const std::uint64_t base = point_seed(config.seed, pt.model, pt.r, pt.n);
    return pol.kind == PolicyKind::simple ? base : mix_parts(base, policy_parts);
  }
  const TimeModel& t = *pt.time;
  std::uint64_t h = mix_parts(mix(config.seed), {text_hash("time"), bits_of(pt.t_good), bits_of(pt.t_bad),
                                                             static_cast<std::uint64_t>(pt.r),
                                                             static_cast<std::uint64_t>(pt.n),
                                                             static_cast<std::uint64_t>(t.scope)});
  h = mix_parts(h, policy_parts);
  return mix_parts(h, {bits_of(t.request_seconds), bits_of(t.think_seconds), text_hash(to_string(t.backoff)),
                       bits_of(t.retry_after)});
}

// The point at `at`; throws InputError when it is invalid.
SweepPoint make_point(const SweepGrid& g, const Index& at) {
  SweepPoint pt;
  pt.r = g.r[at[kR]];
  pt.n = g.n[at[kN]];
  const PolicyKind kind = g.policy[at[kPolicy]];
  pt.policy.n = pt.n;
  pt.policy.r = static_cast<int>(std::clamp<long long>(pt.r, -1, kMaxRetries + 1));
  pt.policy.kind = kind;
  if (uses_s(kind)) pt.policy.s = static_cast<int>(std::clamp<long long>(g.s[at[kS]], -1, kMaxHttpRetries + 1));
  if (uses_budget(kind))
    pt.policy.B = static_cast<int>(std::clamp<long long>(g.B[at[kBudget]], 0, kMaxRequestsPerCall + 1));
  const ChainScope chain = g.chain[at[kChain]];
  if (g.timed()) {
    pt.t_good = g.t_good[at[kFirst]];
    pt.t_bad = g.t_bad[at[kSecond]];
    TimeModel time;
    time.chain = two_state_time_chain(pt.t_good, pt.t_bad);
    time.scope = chain;
    time.request_seconds = g.request_seconds[at[kRequest]];
    time.fault_seconds = g.fault_seconds;
    time.think_seconds = g.think_seconds[at[kThink]];
    time.backoff = g.backoff[at[kBackoff]];
    time.retry_after = g.retry_after[at[kRetryAfter]];
    validate(time);
    pt.time = std::move(time);
  } else {
    const double p = g.p[at[kFirst]];
    pt.model = Model{p, g.q.empty() ? p : g.q[at[kSecond]], g.b[at[kB]], g.g[at[kG]], chain};
    validate(pt.model);
  }
  if (pt.r < 0 || pt.r > kMaxRetries)
    throw InputError(fmt::format("r = {} is out of range: r must be in [0, {}]", pt.r, kMaxRetries));
  if (uses_s(kind) && (g.s[at[kS]] < 0 || g.s[at[kS]] > kMaxHttpRetries))
    throw InputError(fmt::format("s = {} is out of range: s must be in [0, {}]", g.s[at[kS]], kMaxHttpRetries));
  validate(pt.policy);
  return pt;
}

// Moves `at` to the next index tuple (the last axis fastest); false after the last.
bool advance(Index& at, const Index& size) {
  for (std::size_t a = kAxes; a-- > 0;) {
    if (++at[a] < size[a]) return true;
    at[a] = 0;
  }
  return false;
}

void check_axes(const SweepGrid& g) {
  const bool first_empty = g.timed() ? g.t_bad.empty() : g.p.empty();
  if (first_empty || g.r.empty() || g.n.empty() || g.b.empty() || g.g.empty() || g.chain.empty() ||
      g.policy.empty() || g.s.empty() || g.B.empty() || g.request_seconds.empty() || g.think_seconds.empty() ||
      g.backoff.empty() || g.retry_after.empty())
    throw InputError("sweep: every axis needs at least one value");
  if (g.timed() && (!g.p.empty() || !g.q.empty()))
    throw InputError("sweep: time mode (t_good, t_bad) takes no p or q axis: p = t_bad / (t_good + t_bad)");
}

}  // namespace

SweepPoints sweep_points(const SweepGrid& grid, const SweepConfig& config) {
  check_axes(grid);
  const Index size = axis_sizes(grid);
  const double total = grid_total(grid, size);
  if (total > kMaxSweepPoints)
    throw InputError(fmt::format("sweep: the grid has {:.4g} points, more than {:g}: sweep fewer values", total,
                                 kMaxSweepPoints));
  SweepPoints points;
  points.total = static_cast<std::int64_t>(total);
  Index at{};
  do {
    const PolicyKind kind = grid.policy[at[kPolicy]];
    if ((at[kS] > 0 && !uses_s(kind)) || (at[kBudget] > 0 && !uses_budget(kind))) continue;  // not its axis
    try {
      SweepPoint pt = make_point(grid, at);
      pt.seed = seed_of(pt, config);
      points.valid.push_back(std::move(pt));
    } catch (const InputError& e) {
      if (config.strict) throw InputError(fmt::format("sweep --strict: {}", e.what()));
      if (points.skipped++ == 0) points.first_skip = e.what();
    }
  } while (advance(at, size));
  return points;
}

}  // namespace relsim::sweep_detail
