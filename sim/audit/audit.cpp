// The per-task checks of an audit and their totals (audit.hpp, docs/audit.md).
#include "relsim/audit/audit.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/client/retry_wait.hpp"
#include "audit/accepting_runner.hpp"

namespace relsim {

std::string_view to_string(Check check) {
  switch (check) {
    case Check::requests: return "requests";
    case Check::outcome: return "outcome";
    case Check::wait: return "wait";
    case Check::retry_count: return "retry_count";
    case Check::exhausted: return "exhausted";
    case Check::provider: return "provider";
  }
  return "?";
}

void validate(const AuditOptions& options) {
  validate(options.policy);
  validate(options.timing);
  if (!std::isfinite(options.wait_tolerance) || options.wait_tolerance < 0.0)
    throw InputError(fmt::format("wait-tolerance = {} is out of range: it must be a finite number of seconds >= 0",
                                 options.wait_tolerance));
}

std::optional<double> AuditResult::amplification() const {
  if (layered == 0) return std::nullopt;
  return static_cast<double>(sent) / static_cast<double>(layered);
}

namespace {

// The policy run over the task's plan: the call state before each request it sends.
struct Expected {
  std::vector<CallState> before;
  std::int64_t count = 0;
  bool ran_off = false;
  OutcomeClass outcome;
};

Expected expect(const Policy& policy, const Acceptance& accept, const TaskPlan& plan) {
  Expected e;
  audit_detail::AcceptingRunner runner(policy, accept);
  for (const PlannedRequest& r : plan.requests) {
    e.before.push_back(runner.state());
    runner.feed(r);
    if (runner.ended()) break;
  }
  e.ran_off = !runner.ended();
  e.count = e.ran_off ? static_cast<std::int64_t>(plan.requests.size()) : runner.requests();
  e.outcome = runner.outcome();
  return e;
}

// The retries within calls among the requests both sent and expected.
std::vector<ObservedRetry> retries_of(const Expected& e, const TaskPlan& plan, const TaskObservation& o) {
  std::vector<ObservedRetry> out;
  const std::int64_t m = std::min(e.count, o.sent);
  for (std::int64_t i = 1; i < m; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const PlannedRequest& failed = plan.requests[u - 1];
    if (e.before[u].used == 0 || !failed) continue;  // a call's first request
    out.push_back({o.task, i, e.before[u - 1], e.before[u], *failed, (o.received_ms[u] - o.finished_ms[u - 1]) / 1000.0});
  }
  return out;
}

struct Finding {
  Check check;
  std::int64_t at;  // the request whose entry the client reacted to
  std::string text;
};

void check_counts(const Expected& e, const TaskPlan& plan, const TaskObservation& o, std::optional<Outcome> seen,
                  std::vector<Finding>& out) {
  const auto length = static_cast<std::int64_t>(plan.requests.size());
  const std::int64_t last = std::max<std::int64_t>(std::min(e.count, o.sent) - 1, 0);
  if (e.ran_off ? !(o.exhausted > 0 && o.sent - o.exhausted == length) : o.sent != e.count)
    out.push_back({Check::requests, last,
                   e.ran_off ? fmt::format("sent {} request{}; the plan's {} end before the policy ends the task",
                                           o.sent, o.sent == 1 ? "" : "s", length)
                             : fmt::format("sent {} request{}, the policy sends {}", o.sent, o.sent == 1 ? "" : "s", e.count)});
  if (o.exhausted > 0 && !e.ran_off)
    out.push_back({Check::exhausted, last,
                   fmt::format("{} request{} past the end of the script ({} entries)", o.exhausted,
                               o.exhausted == 1 ? "" : "s", length)});
  if (!e.ran_off && seen && *seen != e.outcome.outcome) {
    std::string said = o.reported ? fmt::format("reported {}", to_string(*o.reported)) : "no outcome reported";
    if (o.reported && *o.reported != *seen)
      said += fmt::format(" with {} good request{} of n: partial_done", o.good, o.good == 1 ? "" : "s");
    if (!o.reported) said += ", the last request left open (or a stall never retried): hang";
    out.push_back({Check::outcome, last, fmt::format("{}, expected {}", said, e.outcome.name())});
  }
}

void check_requests(const AuditOptions& opt, const Expected& e, const TaskPlan& plan, const TaskObservation& o,
                    std::vector<Finding>& out) {
  const std::int64_t m = std::min(e.count, o.sent);
  for (std::int64_t i = 0; i < m; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const int rc = o.retry_count[u];
    const int want = expected_retry_header(e.before[u].http, o.inner_retries);
    if (rc != kRetryCountAbsent && rc != want) {
      out.push_back({Check::retry_count, std::max<std::int64_t>(i - 1, 0),
                     fmt::format("request {}: x-stainless-retry-count {}, expected {}", i,
                                 rc == kRetryCountInvalid ? std::string("not a count") : std::to_string(rc), want)});
      break;
    }
  }
  if (!opt.check_waits) return;
  for (const ObservedRetry& r : retries_of(e, plan, o)) {
    const WaitWindow w = wait_window(opt.timing, opt.retry_after_wait, opt.wait_tolerance, r);
    if (w.holds(r.waited)) continue;
    out.push_back({Check::wait, r.request - 1,
                   fmt::format("request {}: waited {:.3f} s after request {}, expected {:.3f} to {:.3f} s ({} retry {})",
                               r.request, r.waited, r.request - 1, std::max(w.low(), 0.0), w.high(),
                               w.http ? "HTTP" : "stream", w.retry)});
    break;
  }
}

// A fallback's audit: the first request sent to another provider than the
// policy's, which sends a call's requests from the fallback_after-th on to
// the second (a log without a fallback sent every request to the first).
void check_provider(const AuditOptions& opt, const Expected& e, const TaskObservation& o, std::vector<Finding>& out) {
  const std::int64_t m = std::min(e.count, o.sent);
  const auto name = [](bool second) { return second ? "second" : "first"; };
  for (std::int64_t i = 0; i < m; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const bool want = to_second_provider(e.before[u].used, opt.fallback_after);
    const bool sent = u < o.fallback.size() && o.fallback[u];
    if (want == sent) continue;
    out.push_back({Check::provider, std::max<std::int64_t>(i - 1, 0),
                   fmt::format("request {} (the call's request {}) went to the {} provider, the policy {} sends it to "
                               "the {}",
                               i, e.before[u].used + 1, name(sent),
                               opt.fallback_after > 0 ? fmt::format("with a fallback after {}", opt.fallback_after)
                                                      : std::string("without a fallback"),
                               name(want))});
    return;
  }
}

std::vector<std::int64_t> requests_per_call(const TaskPlan& plan, const TaskObservation& o) {
  std::vector<std::int64_t> calls;
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < o.sent; ++i) {
    ++count;
    if (i < static_cast<std::int64_t>(plan.requests.size()) && !plan.requests[static_cast<std::size_t>(i)]) {
      calls.push_back(count);
      count = 0;
    }
  }
  if (count > 0) calls.push_back(count);
  return calls;
}

}  // namespace

std::vector<ObservedRetry> observed_retries(const Policy& policy, const Acceptance& accept, const TaskPlan& plan,
                                            const TaskObservation& obs) {
  return retries_of(expect(policy, accept, plan), plan, obs);
}

WaitWindow wait_window(const ClientTiming& timing, std::optional<double> retry_after_wait, double tolerance,
                       const ObservedRetry& retry) {
  const RetryWait w = retry_wait(timing, 0.0, retry.from, retry.to, retry.after);
  WaitWindow out{w.shortest(), w.max, tolerance, w.http, w.retry};
  if (w.http && retry.after == FaultKind::http_429 && retry_after_wait)
    out.shortest = out.longest = *retry_after_wait;
  return out;
}

namespace {

TaskAudit check_task(const AuditOptions& options, const TaskPlan& plan, const TaskObservation& obs) {
  const Expected e = expect(options.policy, options.accept, plan);
  TaskAudit a;
  a.task = obs.task;
  a.expected = e.count;
  a.ran_off = e.ran_off;
  a.expected_outcome = e.outcome;
  a.per_call = requests_per_call(plan, obs);
  std::vector<Finding> found;
  check_counts(e, plan, obs, audit_detail::observed_with(obs, plan, options.accept, options.policy.n), found);
  check_requests(options, e, plan, obs, found);
  check_provider(options, e, obs, found);
  std::int64_t blame = -1;
  for (const Finding& f : found) {
    a.checks |= 1U << static_cast<unsigned>(f.check);
    a.detail += (a.detail.empty() ? "" : "; ") + f.text;
    blame = blame < 0 ? f.at : std::min(blame, f.at);
  }
  const auto length = static_cast<std::int64_t>(plan.requests.size());
  if (blame >= 0) a.blame = plan_name(plan.requests[static_cast<std::size_t>(std::min(blame, length - 1))]);
  return a;
}

// The one acceptance (KIND=WORD, a kind among the entries the client was
// served, not accepted already) under which the task is consistent, if any:
// what the client does with that kind, said as a finding.
std::optional<std::pair<FaultKind, Outcome>> explaining(const AuditOptions& options, const TaskPlan& plan,
                                                        const TaskObservation& obs) {
  std::array<bool, kFaultKinds> served{};
  const auto length = std::min<std::int64_t>(obs.sent, static_cast<std::int64_t>(plan.requests.size()));
  for (std::int64_t i = 0; i < length; ++i)
    if (const PlannedRequest& r = plan.requests[static_cast<std::size_t>(i)]) served[static_cast<std::size_t>(*r)] = true;
  AuditOptions trial = options;
  trial.check_waits = false;
  for (int k = 0; k < kFaultKinds; ++k) {
    if (!served[static_cast<std::size_t>(k)] || options.accept[static_cast<std::size_t>(k)]) continue;
    for (const Outcome word : {Outcome::done, Outcome::hang, Outcome::crash, Outcome::env_error}) {
      trial.accept = options.accept;
      trial.accept[static_cast<std::size_t>(k)] = word;
      if (check_task(trial, plan, obs).consistent()) return std::pair{static_cast<FaultKind>(k), word};
    }
  }
  return std::nullopt;
}

}  // namespace

TaskAudit audit_task(const AuditOptions& options, const TaskPlan& plan, const TaskObservation& obs) {
  TaskAudit a = check_task(options, plan, obs);
  // A real upstream's own failure explains a mismatch before anything the client did.
  const auto why = a.consistent() || !obs.upstream_failed.empty() ? std::nullopt : explaining(options, plan, obs);
  a.finding = why ? finding_of_acceptance(why->first, why->second, obs.dialect) : finding_of(a, obs);
  if (!a.consistent() && !obs.upstream_failed.empty())
    a.detail += (a.detail.empty() ? "" : "; ") + std::string("upstream ") + obs.upstream_failed;
  return a;
}

namespace {

std::int64_t layered_requests(const Policy& audited, const TaskPlan& plan) {
  Policy layered = audited;
  layered.kind = PolicyKind::layered;
  if (audited.kind == PolicyKind::simple) layered.s = 0;
  TaskRunner runner(layered);
  for (const PlannedRequest& r : plan.requests)
    if (!runner.feed(r)) break;
  return runner.requests();
}

void tally(AuditResult& res, const TaskAudit& a, const TaskObservation& o) {
  if (a.checks != 0) {
    ++res.mismatches;
    ++res.by_kind[a.blame];
    ++res.by_finding[a.finding];
  }
  if (!a.consistent()) ++res.inconsistent;
  for (int c = 0; c < kChecks; ++c)
    if (a.failed(static_cast<Check>(c))) ++res.by_check[static_cast<std::size_t>(c)];
  res.sent += o.sent;
  res.second_requests += std::count(o.fallback.begin(), o.fallback.end(), true);
  res.expected += a.expected;
  for (const std::int64_t k : a.per_call) ++res.per_call[k];
  ++res.expected_outcomes[static_cast<std::size_t>(a.expected_outcome.outcome)];
  if (!o.outcome) ++res.no_outcome;
  else ++res.observed_outcomes[static_cast<std::size_t>(*o.outcome)];
  if (o.outcome == Outcome::hang) ++res.hangs;
  if (o.outcome == Outcome::crash) ++res.crashes;
}

}  // namespace

AuditResult run_audit(const Plan& plan, const Observations& obs, const AuditOptions& options) {
  validate(options);
  for (const TaskPlan& t : plan.tasks)
    RELSIM_ASSERT(t.fallback.empty());  // routed_plan first: each request's entry from the path it went to
  AuditResult res;
  res.policy = options.policy;
  res.accept = options.accept;
  res.fallback_after = options.fallback_after;
  res.tasks.reserve(obs.tasks.size());
  for (const TaskObservation& o : obs.tasks) {
    const TaskPlan& tp = plan.tasks[static_cast<std::size_t>(o.task)];
    res.tasks.push_back(audit_task(options, tp, o));
    tally(res, res.tasks.back(), o);
    res.layered += layered_requests(options.policy, tp);
  }
  return res;
}

}  // namespace relsim
