// A testing agent's verdicts, exactly (triage.hpp): the chain's two states,
// its step matrix raised to the gaps between loads, and for a continuous
// chain the run-to-run chain of the state a run starts in.
#include "relsim/exact/triage.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {
namespace {

using Vec = Eigen::RowVector2d;  // (good, bad)
using Mat = Eigen::Matrix2d;

void check_reloads(int reloads) {
  if (reloads < 0 || reloads > kMaxReloads)
    throw InputError(fmt::format("reloads = {} is out of range: it must be in [0, {}]", reloads, kMaxReloads));
}

// The chain moved `steps` steps.
Mat steps_of(const Model& m, std::int64_t steps) {
  Mat one;
  one << 1.0 - m.p0(), m.p0(), 1.0 - m.q, m.q;
  Mat out = Mat::Identity();
  Mat power = one;
  for (std::int64_t k = steps; k > 0; k >>= 1) {
    if (k & 1) out = out * power;
    power = power * power;
  }
  return out;
}

// One run from `start` (the law of the state at its first load).
struct Run {
  double all_failed = 0.0;   // every load failed: naive's one, careful's reloads + 1
  double mean_loads = 0.0;
  Vec last = Vec::Zero();    // the law of the state at its last load
};

Run run_from(const Model& m, Tester tester, int reloads, const Vec& start) {
  const int most = tester == Tester::naive ? 1 : reloads + 1;
  const Mat gap = steps_of(m, m.b + 1);
  Run r;
  Vec bad(0.0, start(1));  // the mass of runs whose loads have all failed so far, at the current load
  r.mean_loads = 1.0;
  r.last(0) = start(0);  // a run whose first load works ends there
  for (int load = 2; load <= most; ++load) {
    r.mean_loads += bad.sum();
    const Vec next = bad * gap;
    r.last(0) += next(0);  // this reload works: the run ends on a good load
    bad = Vec(0.0, next(1));
  }
  r.all_failed = bad(1);
  r.last(1) = bad(1);
  return r;
}

// The law of the state at a run's first load.
Vec start_law(const Model& m, Tester tester, int reloads) {
  const Vec stationary(1.0 - m.p, m.p);
  if (m.chain == ChainScope::fresh) return stationary;
  // Continuous: the next run starts g + 1 steps after this one's last load.
  const Mat between = steps_of(m, m.g + 1);
  Mat next;
  for (int s = 0; s < 2; ++s) {
    const Vec from = s == 0 ? Vec(1.0, 0.0) : Vec(0.0, 1.0);
    next.row(s) = run_from(m, tester, reloads, from).last * between;
  }
  // The stationary law of the 2-state run-to-run chain.
  const double to_bad = next(0, 1), to_good = next(1, 0);
  if (to_bad + to_good <= 0.0) return stationary;  // it never moves: start where the chain does
  return Vec(to_good / (to_bad + to_good), to_bad / (to_bad + to_good));
}

}  // namespace

Tester parse_tester(std::string_view word) {
  if (word == "naive") return Tester::naive;
  if (word == "careful") return Tester::careful;
  throw InputError(fmt::format("triage = '{}' is not a tester: use naive or careful", word));
}

AppVersion parse_app_version(std::string_view word) {
  if (word == "healthy") return AppVersion::healthy;
  if (word == "buggy") return AppVersion::buggy;
  throw InputError(fmt::format("version = '{}' is not a version: use healthy or buggy", word));
}

std::string_view to_string(Tester t) { return t == Tester::naive ? "naive" : "careful"; }
std::string_view to_string(AppVersion v) { return v == AppVersion::healthy ? "healthy" : "buggy"; }
std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "PASS";
    case Verdict::bug:
      return "BUG";
    case Verdict::env_error:
      return "ENV_ERROR";
  }
  return "?";
}

RunVerdict judge(Tester tester, int reloads, AppVersion version, const std::vector<bool>& failed) {
  check_reloads(reloads);
  const int most = tester == Tester::naive ? 1 : reloads + 1;
  for (int load = 1; load <= most; ++load) {
    if (static_cast<std::size_t>(load) > failed.size())
      throw InputError(fmt::format("the run needs load {} and only {} are given", load, failed.size()));
    if (!failed[static_cast<std::size_t>(load - 1)])
      return {version == AppVersion::buggy ? Verdict::bug : Verdict::pass, load};
    if (tester == Tester::naive) return {Verdict::bug, load};  // the page failed to load: reported as a bug
  }
  return {Verdict::env_error, most};
}

TriageRates triage_exact(const Model& model, Tester tester, int reloads) {
  validate(model);
  check_reloads(reloads);
  const Run run = run_from(model, tester, reloads, start_law(model, tester, reloads));
  TriageRates r;
  for (VerdictRates* v : {&r.healthy, &r.buggy}) v->mean_loads = run.mean_loads;
  if (tester == Tester::naive) {
    // A failed load is BUG for either version; a working one shows the total.
    r.healthy.bug = run.all_failed;
    r.healthy.pass = 1.0 - run.all_failed;
    r.buggy.bug = 1.0;
    return r;
  }
  r.healthy.env_error = r.buggy.env_error = run.all_failed;
  r.healthy.pass = 1.0 - run.all_failed;
  r.buggy.bug = 1.0 - run.all_failed;
  return r;
}

}  // namespace relsim
