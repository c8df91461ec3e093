// --infer: every policy and parameter set consistent with what the client did
// (audit.hpp, infer_policy; docs/audit.md).
//
// Tasks that look the same to every candidate (the same plan entries, and the
// same requests sent, outcome, exhaustion and retry counts) are checked once,
// weighted by how many there are: a 100,000-task log has a few thousand such
// classes. Classes go most common first, so a candidate that is wrong is
// usually found wrong at once; with no consistent candidate, a candidate is
// abandoned once its count of inconsistent tasks exceeds the best complete
// count so far (a branch and bound whose answer does not depend on the order
// in which threads finish: every candidate at the minimum is counted exactly).
#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/audit/audit.hpp"
#include "relsim/audit/wait_fit.hpp"
#include "audit/accepting_runner.hpp"

namespace relsim {

bool consistent_with(const Policy& policy, const TaskPlan& plan, const TaskObservation& obs, const Acceptance& accept) {
  audit_detail::AcceptingRunner runner(policy, accept);
  const auto length = static_cast<std::int64_t>(plan.requests.size());
  for (std::int64_t i = 0; i < length; ++i) {
    if (i < obs.sent) {
      const int rc = obs.retry_count[static_cast<std::size_t>(i)];
      if (rc != kRetryCountAbsent && rc != expected_retry_header(runner.state().http, obs.inner_retries)) return false;
    }
    runner.feed(plan.requests[static_cast<std::size_t>(i)]);
    if (runner.ended()) break;
    // The policy goes on past what the client sent (or, off the plan's end,
    // would need more than it sent): inconsistent either way.
    if (runner.requests() >= obs.sent) return false;
  }
  if (!runner.ended()) return obs.exhausted > 0 && obs.sent - obs.exhausted == length;
  if (obs.sent != runner.requests()) return false;
  const std::optional<Outcome> seen = audit_detail::observed_with(obs, plan, accept, policy.n);
  return !seen || *seen == runner.outcome().outcome;
}

std::vector<Policy> infer_candidates(std::int64_t n) {
  std::vector<Policy> out;
  auto add = [&](PolicyKind kind, int s, int r, int B) {
    Policy p;
    p.kind = kind;
    p.n = n;
    p.s = s;
    p.r = r;
    p.B = B;
    out.push_back(p);
  };
  for (int r = 0; r <= kInferMax; ++r) add(PolicyKind::simple, 0, r, 0);
  for (auto kind : {PolicyKind::naive, PolicyKind::layered})
    for (int s = 0; s <= kInferMax; ++s)
      for (int r = 0; r <= kInferMax; ++r) add(kind, s, r, 0);
  for (int s = 0; s <= kInferMax; ++s)
    for (int r = 0; r <= kInferMax; ++r)
      for (int B = 1; B < (s + 1) * (r + 1); ++B) add(PolicyKind::budgeted, s, r, B);
  return out;
}

int free_parameters(const Policy& p) {
  return p.kind == PolicyKind::simple ? 1 : p.kind == PolicyKind::budgeted ? 3 : 2;
}

void choose_headline(const Plan& plan, const Observations& obs, const AuditOptions& options, InferResult& result,
                     bool fit_backoff) {
  result.wait_mismatches.assign(result.consistent.size(), 0);
  result.headline = 0;
  if (result.consistent.size() < 2 || !options.check_waits) return;
  AuditOptions each = options;
  for (std::size_t i = 0; i < result.consistent.size(); ++i) {
    each.policy = result.consistent[i];
    const AuditOptions timed = with_waits(each, fit_waits(plan, obs, each, fit_backoff));
    result.wait_mismatches[i] = run_audit(plan, obs, timed).by_check[static_cast<std::size_t>(Check::wait)];
  }
  const auto key = [&](std::size_t i) {
    return std::tuple{result.wait_mismatches[i], free_parameters(result.consistent[i]), i};
  };
  for (std::size_t i = 1; i < result.consistent.size(); ++i)
    if (key(i) < key(result.headline)) result.headline = i;
}

std::string describe_candidate(const Policy& p) {
  if (p.kind == PolicyKind::simple) return fmt::format("simple with r = {}", p.r);
  if (p.kind == PolicyKind::budgeted) return fmt::format("budgeted with s = {}, r = {}, B = {}", p.s, p.r, p.B);
  return fmt::format("{} with s = {}, r = {}", to_string(p.kind), p.s, p.r);
}

namespace {

struct TaskClass {
  const TaskPlan* plan = nullptr;
  const TaskObservation* obs = nullptr;
  std::int64_t weight = 0;
  std::int64_t first = 0;  // its first task, for a fixed order among equal weights
};

// What every candidate's verdict on the task depends on, as bytes.
std::string class_key(const TaskPlan& plan, const TaskObservation& o) {
  std::string key;
  key.reserve(plan.requests.size() + 16 + 4 * o.retry_count.size());
  for (const PlannedRequest& r : plan.requests) key += static_cast<char>(r ? static_cast<int>(*r) : 127);
  auto add_int = [&](std::int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  add_int(-1);  // ends the plan part (no entry byte is 0xff)
  add_int(o.sent);
  add_int(o.exhausted);
  add_int(o.outcome ? static_cast<std::int64_t>(*o.outcome) : -1);
  for (const int rc : o.retry_count) key.append(reinterpret_cast<const char*>(&rc), sizeof rc);
  return key;
}

std::vector<TaskClass> task_classes(const Plan& plan, const Observations& obs) {
  std::vector<TaskClass> classes;
  std::unordered_map<std::string, std::size_t> index;
  index.reserve(obs.tasks.size());
  for (const TaskObservation& o : obs.tasks) {
    const TaskPlan& tp = plan.tasks[static_cast<std::size_t>(o.task)];
    const auto [it, fresh] = index.try_emplace(class_key(tp, o), classes.size());
    if (fresh) classes.push_back({&tp, &o, 0, o.task});
    ++classes[it->second].weight;
  }
  std::sort(classes.begin(), classes.end(), [](const TaskClass& a, const TaskClass& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.first < b.first;
  });
  return classes;
}

constexpr std::int64_t kAbandoned = std::numeric_limits<std::int64_t>::max();

// Inconsistent tasks under `p`, or kAbandoned once that exceeds `bound`.
std::int64_t count_inconsistent(const Policy& p, const std::vector<TaskClass>& classes, const Acceptance& accept,
                                const std::atomic<std::int64_t>& bound, std::int64_t* reached = nullptr) {
  std::int64_t count = 0, passed = 0;
  for (const TaskClass& c : classes) {
    if (!consistent_with(p, *c.plan, *c.obs, accept)) {
      count += c.weight;
      if (count > bound.load(std::memory_order_relaxed)) {
        if (reached) *reached = passed;
        return kAbandoned;
      }
    }
    passed += c.weight;
  }
  if (reached) *reached = passed;
  return count;
}

// Every candidate with a bound of 0: the consistent ones, and how many tasks
// each of the others got through before its first inconsistent one.
std::vector<std::int64_t> first_pass(const std::vector<Policy>& candidates, const std::vector<TaskClass>& classes,
                                     const Acceptance& accept, std::vector<std::int64_t>& reached) {
  std::vector<std::int64_t> counts(candidates.size(), kAbandoned);
  reached.assign(candidates.size(), 0);
  const std::atomic<std::int64_t> zero{0};
  FirstError error;
  const auto total = static_cast<std::int64_t>(candidates.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t i = 0; i < total; ++i)
    error.run([&] {
      const auto u = static_cast<std::size_t>(i);
      counts[u] = count_inconsistent(candidates[u], classes, accept, zero, &reached[u]);
    });
  error.rethrow();
  return counts;
}

// No candidate is consistent: the fewest inconsistent tasks, by branch and bound.
std::vector<std::int64_t> closest_pass(const std::vector<Policy>& candidates, const std::vector<TaskClass>& classes,
                                       const Acceptance& accept, const std::vector<std::int64_t>& reached,
                                       std::int64_t tasks) {
  // The candidates that got furthest first, so the bound tightens early.
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return reached[a] > reached[b]; });
  std::vector<std::int64_t> counts(candidates.size(), kAbandoned);
  std::atomic<std::int64_t> bound{tasks};
  counts[order[0]] = count_inconsistent(candidates[order[0]], classes, accept, bound);
  bound.store(counts[order[0]]);
  FirstError error;
  const auto total = static_cast<std::int64_t>(order.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t i = 1; i < total; ++i)
    error.run([&] {
      const std::size_t c = order[static_cast<std::size_t>(i)];
      const std::int64_t k = count_inconsistent(candidates[c], classes, accept, bound);
      counts[c] = k;
      std::int64_t best = bound.load();
      while (k < best && !bound.compare_exchange_weak(best, k)) {
      }
    });
  error.rethrow();
  return counts;
}

}  // namespace

InferResult infer_policy(const Plan& plan, const Observations& obs, std::int64_t n, const Acceptance& accept) {
  InferResult res;
  const std::vector<Policy> candidates = infer_candidates(n);
  res.candidates = static_cast<std::int64_t>(candidates.size());
  const std::vector<TaskClass> classes = task_classes(plan, obs);
  std::vector<std::int64_t> reached;
  const std::vector<std::int64_t> first = first_pass(candidates, classes, accept, reached);
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (first[i] == 0) res.consistent.push_back(candidates[i]);
  if (!res.consistent.empty()) return res;
  const std::vector<std::int64_t> counts =
      closest_pass(candidates, classes, accept, reached, static_cast<std::int64_t>(obs.tasks.size()));
  res.closest_mismatches = *std::min_element(counts.begin(), counts.end());
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (counts[i] == res.closest_mismatches) res.closest.push_back(candidates[i]);
  return res;
}

}  // namespace relsim
