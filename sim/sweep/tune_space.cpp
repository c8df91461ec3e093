// The search space of relsim tune: its schedules in a fixed order, each
// class of equivalent schedules once (include/relsim/sweep/tune.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/sweep/tune.hpp"

namespace relsim {
namespace {

Backoff list_of(std::vector<double> waits) {
  Backoff b;
  b.kind = Backoff::Kind::list;
  b.list = std::move(waits);
  return b;
}

void check_wait(double value, std::string_view what) {
  if (!(value >= 0.0 && value <= kMaxSeconds))
    throw InputError(fmt::format("{} = {} is out of range: it must be in [0, {:g}] seconds", what, value, kMaxSeconds));
}

void check_jitter(double value) {
  if (!(value >= 0.0 && value <= 1.0))
    throw InputError(fmt::format("jitter = {} is out of range: it must be in [0, 1]", value));
}

void check_backoff(const Backoff& b) {
  if (b.kind == Backoff::Kind::exp) {
    check_wait(b.base, "backoff base");
    check_wait(b.cap, "backoff cap");
    check_jitter(b.jitter);
  }
  if (b.kind == Backoff::Kind::list) {
    if (b.list.empty()) throw InputError("backoff list is empty: give at least one wait, e.g. list:1,2,4");
    for (const double w : b.list) check_wait(w, "backoff list entry");
  }
}

// The index from which a backoff's waits stay the same.
int settles_at(const Backoff& b) {
  if (b.kind == Backoff::Kind::list) return static_cast<int>(b.list.size()) - 1;
  if (b.kind == Backoff::Kind::none) return 0;
  int k = 0;
  while (k < 1100 && b.max_wait(k) < b.cap && b.base > 0.0) ++k;
  return k;
}

// For each number K of retry indices a schedule can reach, the backoffs
// that stand for their class (the first of each, in search order). The
// classes for K + 1 refine those for K by the wait at index K, so each K
// costs one sort of the backoffs.
class BackoffClasses {
 public:
  explicit BackoffClasses(std::vector<Backoff> all) : all_(std::move(all)) {
    int settled = 0;  // past this every backoff repeats its last wait
    for (const Backoff& b : all_) settled = std::max(settled, settles_at(b) + 1);
    std::vector<std::size_t> id(all_.size(), 0);  // class at reach K: the index of its first member
    by_reach_.push_back(all_.empty() ? std::vector<std::size_t>{} : std::vector<std::size_t>{0});
    for (int k = 0; k < settled; ++k) {
      // (class so far, wait at k, its jitter) -> the first backoff with them.
      std::map<std::tuple<std::size_t, double, double>, std::size_t> first;
      std::vector<std::size_t> kept;
      for (std::size_t i = 0; i < all_.size(); ++i) {
        const double wait = all_[i].max_wait(k);
        const double jitter = wait == 0.0 ? 0.0 : all_[i].jitter_fraction();
        const auto [it, fresh] = first.try_emplace({id[i], wait, jitter}, i);
        if (fresh) kept.push_back(i);
        id[i] = it->second;
      }
      by_reach_.push_back(std::move(kept));
    }
  }
  const std::vector<Backoff>& all() const { return all_; }
  const std::vector<std::size_t>& representatives(int reach) const {
    const std::size_t k = std::min(static_cast<std::size_t>(reach), by_reach_.size() - 1);
    return by_reach_[k];
  }

 private:
  std::vector<Backoff> all_;
  std::vector<std::vector<std::size_t>> by_reach_;  // [K]: representatives in search order
};

// Calls visit(policy with n unset, retry indices it reaches) for every
// distinct (policy, s, r, B) of the space, in search order.
template <class Visit>
void for_each_policy(const TuneSpace& space, const FaultWeights& kinds, Visit&& visit) {
  const TuneLayers layers = tune_layers(kinds);
  const int s_top = layers.http ? space.s_max : 0;
  const int r_top = layers.stream ? space.r_max : 0;
  std::vector<int> budgets = space.budgets;
  std::sort(budgets.begin(), budgets.end());
  budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
  std::vector<PolicyKind> seen;
  for (const PolicyKind kind : space.policies) {
    if (std::find(seen.begin(), seen.end(), kind) != seen.end()) continue;
    seen.push_back(kind);
    for (int s = 0; s <= s_top; ++s)
      for (int r = 0; r <= r_top; ++r) {
        Policy p;
        p.kind = kind;
        p.s = s;
        p.r = r;
        if (kind == PolicyKind::layered) {
          visit(p, std::max(s, r));
          continue;
        }
        // Budgeted: B binds before either layer runs out only when
        // s, r <= B - 1; and it binds at all only when B < (s+1)(r+1).
        for (const int b : budgets) {
          if (s > b - 1 || r > b - 1 || b >= (s + 1) * (r + 1)) continue;
          p.B = b;
          visit(p, std::max(s, r));
        }
      }
  }
}

}  // namespace

TuneLayers tune_layers(const FaultWeights& kinds) {
  TuneLayers l;
  for (int k = 0; k < kFaultKinds; ++k) {
    if (!(kinds.weight[static_cast<std::size_t>(k)] > 0.0)) continue;
    const Stage stage = stage_of(static_cast<FaultKind>(k));
    if (stage == Stage::pre_response) l.http = true;
    if (stage == Stage::in_stream || stage == Stage::content) l.stream = true;
  }
  return l;
}

std::vector<Backoff> TuneSpace::default_fixed_backoffs() {
  Backoff none;
  none.kind = Backoff::Kind::none;
  return {none,
          list_of({1, 2, 4, 8, 16, 32}),
          list_of({0.5, 1, 2, 4, 8, 16}),
          list_of({1, 5, 15, 30, 60}),
          list_of({5}),
          list_of({10}),
          list_of({30})};
}

std::vector<Backoff> TuneSpace::backoffs() const {
  std::vector<Backoff> out = fixed;
  for (const double base : bases)
    for (const double cap : caps)
      for (const double jitter : jitters) {
        Backoff b;
        b.kind = Backoff::Kind::exp;
        b.base = base;
        b.cap = cap;
        b.jitter = jitter;
        out.push_back(b);
      }
  return out;
}

void validate(const TuneSpace& space) {
  if (space.policies.empty()) throw InputError("policies is empty: give layered, budgeted or layered,budgeted");
  for (const PolicyKind kind : space.policies)
    if (kind != PolicyKind::layered && kind != PolicyKind::budgeted)
      throw InputError(fmt::format("policy = {} cannot be tuned: use layered, budgeted or layered,budgeted",
                                   to_string(kind)));
  if (space.s_max < 0 || space.s_max > kMaxHttpRetries)
    throw InputError(fmt::format("s-max = {} is out of range: it must be in [0, {}]", space.s_max, kMaxHttpRetries));
  if (space.r_max < 0 || space.r_max > kMaxRetries)
    throw InputError(fmt::format("r-max = {} is out of range: it must be in [0, {}]", space.r_max, kMaxRetries));
  if ((space.s_max + 1) * (space.r_max + 1) > kMaxRequestsPerCall)
    throw InputError(fmt::format("(s-max + 1)(r-max + 1) = {} requests per call: at most {}",
                                 (space.s_max + 1) * (space.r_max + 1), kMaxRequestsPerCall));
  const bool budgeted =
      std::find(space.policies.begin(), space.policies.end(), PolicyKind::budgeted) != space.policies.end();
  if (budgeted && space.budgets.empty()) throw InputError("budgets is empty: the budgeted policy needs B values");
  for (const int b : space.budgets)
    if (b < 1 || b > kMaxRequestsPerCall)
      throw InputError(fmt::format("B = {} is out of range: it must be in [1, {}]", b, kMaxRequestsPerCall));
  for (const double b : space.bases) check_wait(b, "backoff base");
  for (const double c : space.caps) check_wait(c, "backoff cap");
  for (const double j : space.jitters) check_jitter(j);
  for (const Backoff& b : space.fixed) check_backoff(b);
  const bool grid = !space.bases.empty() && !space.caps.empty() && !space.jitters.empty();
  if (!grid && space.fixed.empty())
    throw InputError("no backoff to search: give --lists, or --bases, --caps and --jitters");
}

std::vector<TuneSchedule> tune_schedules(const TuneSpace& space, std::int64_t n, const FaultWeights& kinds) {
  validate(space);
  BackoffClasses classes(space.backoffs());
  std::vector<TuneSchedule> out;
  for_each_policy(space, kinds, [&](Policy policy, int reach) {
    policy.n = n;
    for (const std::size_t i : classes.representatives(reach)) out.push_back({policy, classes.all()[i]});
  });
  return out;
}

std::int64_t count_tune_schedules(const TuneSpace& space, const FaultWeights& kinds) {
  validate(space);
  BackoffClasses classes(space.backoffs());
  std::int64_t count = 0;
  for_each_policy(space, kinds, [&](const Policy&, int reach) {
    count += static_cast<std::int64_t>(classes.representatives(reach).size());
  });
  return count;
}

}  // namespace relsim
