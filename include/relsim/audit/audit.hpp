#pragma once
// The audit of any client (docs/audit.md): a plan served by `relsim serve
// --plan --log`, the request log the client left, and the outcomes its
// harness reported, checked task by task against what a policy's rules
// (`react`, as the oracle runs them) say the client should have done; and the
// search for the policies a client behaves like (--infer).
//
// Checks, per task (a task is audited when it has a request or an outcome):
//   requests     requests sent == requests the policy sends over the plan
//   outcome      the reported outcome's word == the expected outcome's word
//                ("done" with fewer good requests than n is partial_done; no
//                report with the last request still open at shutdown, or a
//                stall the client never retried, is hang)
//   wait         each retry within a call came after the policy's backoff
//                (retry_wait.hpp): w = the schedule's max_wait(k) time_scale
//                (min(base 2^k, cap) time_scale by default), accepted in
//                [(1 - jitter) w - 0.05 s, w + tolerance] (jitter 0.25 by default)
//   retry_count  x-stainless-retry-count, where sent, equals the HTTP-layer
//                retries the policy has used in the round (0, 1, 2 ...)
//   exhausted    the client ran past its task's script (more requests than
//                the plan holds for any audited policy)
// A policy is *consistent* with a task when all checks but `wait` pass.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/policy.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/formats/request_log.hpp"
#include "relsim/client/timing.hpp"

namespace relsim {

enum class Check : std::uint8_t { requests, outcome, wait, retry_count, exhausted };
inline constexpr int kChecks = 5;
std::string_view to_string(Check check);

// A value of x-stainless-retry-count that was not sent, or was not a count.
inline constexpr int kRetryCountAbsent = -1;
inline constexpr int kRetryCountInvalid = -2;

// What the log says about one task, computed once for every policy tried.
struct TaskObservation {
  std::int64_t task = 0;
  std::int64_t sent = 0;       // requests that took an index (exhausted ones too)
  std::int64_t exhausted = 0;  // requests that found the script exhausted
  std::int64_t good = 0;       // good ("ok") entries served
  std::optional<Outcome> reported;  // the last reported word
  std::optional<Outcome> outcome;   // observed: reported, or partial_done / hang by the rules above
  bool stopped = false;             // the last request was open at shutdown, or a stall the client left only by going away
  std::string detail;               // the report's detail
  std::vector<int> retry_count;     // per request; kRetryCountAbsent / kRetryCountInvalid
  std::vector<double> received_ms, finished_ms;  // per request
};

struct Observations {
  std::int64_t plan_tasks = 0;
  std::int64_t not_run = 0;   // plan tasks with no request and no outcome
  std::int64_t refused = 0;   // requests refused before taking an index (405, 400)
  std::vector<TaskObservation> tasks;  // audited tasks, in task order
};

// Throws InputError unless the plan's header has b = g = 0 (absent counts as
// 0): a server cannot tell a retry after silent chain steps from the next call.
void check_auditable(const Plan& plan, const std::string& where);

// Joins plan, log and reports. `overrides` (from --outcomes) replace the
// log's reports task by task; the last report of a task counts. Throws
// InputError for a log from another plan (naming the first such line and
// task), a gap or repeat in a task's indices, a report for a task not in the
// plan, or a plan with b or g > 0.
Observations observe(const Plan& plan, const RequestLog& log, const std::vector<OutcomeReport>* overrides,
                     std::int64_t n, const std::string& outcomes_where = "");

struct AuditOptions {
  Policy policy;  // with n
  ClientTiming timing;
  double wait_tolerance = 0.5;  // seconds past the backoff still accepted
  bool check_waits = true;
};
// Throws InputError for an invalid policy or timing, or a tolerance that is not finite and >= 0.
void validate(const AuditOptions& options);

struct TaskAudit {
  std::int64_t task = 0;
  std::int64_t expected = 0;  // requests the policy sends (the plan's length when it runs off)
  bool ran_off = false;       // the plan ends before the policy ends the task
  OutcomeClass expected_outcome;
  unsigned checks = 0;  // bit (1 << Check) per failed check
  std::string blame;    // the plan entry after which the client first departs: a kind, "ok", or ""
  std::vector<std::int64_t> per_call;  // requests of each call, segmented by the good entries served
  std::string detail;
  bool failed(Check c) const { return (checks >> static_cast<unsigned>(c)) & 1U; }
  bool consistent() const { return (checks & ~(1U << static_cast<unsigned>(Check::wait))) == 0; }
};

struct AuditResult {
  Policy policy;
  std::vector<TaskAudit> tasks;  // parallel to Observations::tasks
  std::int64_t mismatches = 0;    // tasks with any failed check
  std::int64_t inconsistent = 0;  // tasks with a failed check other than wait
  std::array<std::int64_t, kChecks> by_check{};
  std::map<std::string, std::int64_t> by_kind;  // mismatching tasks by their blame
  std::int64_t sent = 0, expected = 0, layered = 0;  // requests
  std::map<std::int64_t, std::int64_t> per_call;     // calls by requests sent
  std::array<std::int64_t, kOutcomes> expected_outcomes{}, observed_outcomes{};
  std::int64_t no_outcome = 0, hangs = 0, crashes = 0;
  // requests sent / requests layered with the same s and r (s = 0 for simple) would send.
  std::optional<double> amplification() const;
};

TaskAudit audit_task(const AuditOptions& options, const TaskPlan& plan, const TaskObservation& obs);
AuditResult run_audit(const Plan& plan, const Observations& obs, const AuditOptions& options);

// The same verdict as audit_task(...).consistent(), without the details: the
// inner loop of the search.
bool consistent_with(const Policy& policy, const TaskPlan& plan, const TaskObservation& obs);

// --infer: simple (r), naive and layered (s, r), budgeted (s, r, B) for s, r
// in 0..kInferMax and B in 1..(s+1)(r+1)-1, in that order (policy, s, r, B).
inline constexpr int kInferMax = 10;
struct InferResult {
  std::int64_t candidates = 0;
  std::vector<Policy> consistent;  // every candidate consistent with every task
  std::vector<Policy> closest;     // when none is: those with the fewest inconsistent tasks
  std::int64_t closest_mismatches = 0;
};
// Deterministic: the same result for any thread count.
InferResult infer_policy(const Plan& plan, const Observations& obs, std::int64_t n);
std::vector<Policy> infer_candidates(std::int64_t n);

// "naive with s = 2, r = 2", "simple with r = 2", "budgeted with s = 2, r = 2, B = 4".
std::string describe_candidate(const Policy& policy);

}  // namespace relsim
