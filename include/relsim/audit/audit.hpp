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
//   wait         each retry within a call came after the client's backoff
//                (retry_wait.hpp): w = the schedule's max_wait(k) time_scale,
//                accepted in [(1 - jitter) w - 0.05 s, w + tolerance]; after
//                an http_429, the retry-after the client honours instead (a
//                window [h - 0.05 s, h + tolerance]). The schedule and the
//                retry-after are given or fitted from the log (wait_fit.hpp)
//   retry_count  x-stainless-retry-count, where sent, equals the HTTP-layer
//                retries the policy has used in the round (0, 1, 2 ...), modulo
//                the SDK's own layer (RetryHeaderReading below): the header
//                counts the SDK's retries only, and a framework that retries
//                around the SDK starts a fresh SDK call (header 0) each time
//   exhausted    the client ran past its task's script (more requests than
//                the plan holds for any audited policy)
//   provider     with a fallback plan (two providers, docs/model.md,
//                Fallback): each request went to the provider the policy with
//                its fallback after K sends it to (the first for a call's
//                first K requests, the second after)
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

enum class Check : std::uint8_t { requests, outcome, wait, retry_count, exhausted, provider };
inline constexpr int kChecks = 6;
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
  int inner_retries = -1;           // RetryHeaderReading::inner, the same for every task
  std::vector<double> received_ms, finished_ms;  // per request
  // relsim proxy: the first request whose hop to the real upstream failed,
  // "request K: WHAT"; "" when none did.
  std::string upstream_failed;
  Dialect dialect = Dialect::anthropic;  // openai when any of its requests was a chat completion: the findings' words
  // Per request: it went to the second provider's path (a fallback plan's,
  // docs/wire.md); all false for a log without a fallback.
  std::vector<bool> fallback;
};

// How x-stainless-retry-count is read. It counts the retries of the official
// SDK's own layer inside one SDK call. When that layer is the HTTP layer
// audited (the SDK alone), the header is the layer's retry count; when a
// framework or agent retries around an SDK whose own layer retries up to S
// times (LangChain builds it with maxRetries 0), each outer retry is a fresh
// SDK call and the header runs 0..S again: the expected header is the audited
// layer's count mod (S + 1). S is read from the log (the largest header seen:
// an outer retry only follows an SDK call that used all S), or given; or the
// header is not checked at all.
enum class RetryHeaderMode { from_log, given, off };
struct RetryHeaderReading {
  RetryHeaderMode mode = RetryHeaderMode::from_log;
  int inner = -1;          // S; -1: no header in the log (or off)
  std::int64_t sent = 0;   // requests that carried a valid count
  int largest = -1;        // the largest count seen
};
// The header a request should carry when the audited layer has used `http`
// retries in the round: http mod (inner + 1); http itself when inner < 0.
int expected_retry_header(int http, int inner);

// The retry-after headers the server sent with every http_429 (the log's
// header: relsim serve --retry-after, --retry-after-ms), in seconds; nullopt
// when not sent or not recorded (a log from before they were).
struct RetryAfterSent {
  std::optional<double> retry_after;
  std::optional<double> retry_after_ms;
};

struct Observations {
  std::int64_t plan_tasks = 0;
  RetryAfterSent retry_after;
  std::int64_t not_run = 0;   // plan tasks with no request and no outcome
  std::int64_t refused = 0;   // requests refused before taking an index (405, 400)
  std::vector<TaskObservation> tasks;  // audited tasks, in task order
  RetryHeaderReading header;
};

// Reads the header as `mode` says (`inner` for RetryHeaderMode::given; off
// drops every task's counts), sets each task's inner_retries and obs.header.
void read_retry_header(Observations& obs, RetryHeaderMode mode, int inner = -1);

// Throws InputError unless the plan's header has b = g = 0 (absent counts as
// 0): a server cannot tell a retry after silent chain steps from the next
// call. For the audit, and for relsim proxy's --plan.
void check_auditable(const Plan& plan, const std::string& where);

// A log of relsim proxy's chain mode (its header names the chain,
// core/request_chain.hpp) needs no plan file: the plan is drawn again from
// the chain, for the tasks the log names (requests or reports), each its
// first max(requests, the most the log shows) requests; the other tasks'
// lists are empty. nullopt for a log whose header has no "chain". Throws
// InputError for a chain that does not parse.
// Bounds: tasks below kMaxPlanTasks, each list at most kMaxChainPlanRequests
// long, kMaxChainPlanEntries in all; past them an InputError.
inline constexpr std::int64_t kMaxChainPlanRequests = 1'000'000;  // per task
inline constexpr std::int64_t kMaxChainPlanEntries = 100'000'000;  // in all
std::optional<Plan> plan_of_chain_log(const RequestLog& log, std::int64_t requests);

// Joins plan, log and reports, the retry header read from the log
// (read_retry_header, RetryHeaderMode::from_log). `overrides` (from --outcomes) replace the
// log's reports task by task; the last report of a task counts. Throws
// InputError for a log from another plan (naming the first such line and
// task), a gap or repeat in a task's indices, a report for a task not in the
// plan, or a plan with b or g > 0.
Observations observe(const Plan& plan, const RequestLog& log, const std::vector<OutcomeReport>* overrides,
                     std::int64_t n, const std::string& outcomes_where = "");

// Findings a user has accepted (--accept 'no_stop=done,stall=hang'): per
// fault kind, what the client does with it instead of what the policy does:
// done (it takes the answer as good and goes on), or the task ends there with
// that word (crash, hang, env_error, harness_error, partial_done).
using Acceptance = std::array<std::optional<Outcome>, kFaultKinds>;
// "KIND=WORD,..."; throws InputError naming the part, the kinds and the words.
Acceptance parse_acceptance(std::string_view spec);
std::string to_string(const Acceptance& accept);  // "" when none

struct AuditOptions {
  Policy policy;  // with n
  Acceptance accept{};
  ClientTiming timing;
  double wait_tolerance = 0.5;  // seconds past the backoff still accepted
  bool check_waits = true;
  // Wall seconds a retry after an http_429 waits when the client honours the
  // server's retry-after (wait_fit.hpp); nullopt: its backoff.
  std::optional<double> retry_after_wait;
  // A fallback plan's audit (routed_plan below): the policy sends a call's
  // requests from this one on to the second provider; 0: none.
  int fallback_after = 0;
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
  std::string finding;  // what the first failed check means, in a line (finding_of); "" when none
  bool failed(Check c) const { return (checks >> static_cast<unsigned>(c)) & 1U; }
  bool consistent() const { return (checks & ~(1U << static_cast<unsigned>(Check::wait))) == 0; }
};

struct AuditResult {
  Policy policy;
  Acceptance accept{};  // the findings accepted (AuditOptions::accept)
  std::vector<TaskAudit> tasks;  // parallel to Observations::tasks
  std::int64_t mismatches = 0;    // tasks with any failed check
  std::int64_t inconsistent = 0;  // tasks with a failed check other than wait
  std::array<std::int64_t, kChecks> by_check{};
  std::map<std::string, std::int64_t> by_kind;  // mismatching tasks by their blame
  std::map<std::string, std::int64_t> by_finding;  // mismatching tasks by what their mismatch means
  std::int64_t sent = 0, expected = 0, layered = 0;  // requests
  std::map<std::int64_t, std::int64_t> per_call;     // calls by requests sent
  int fallback_after = 0;                            // AuditOptions::fallback_after
  std::int64_t second_requests = 0;                  // requests the client sent to the second provider
  std::array<std::int64_t, kOutcomes> expected_outcomes{}, observed_outcomes{};
  std::int64_t no_outcome = 0, hangs = 0, crashes = 0;
  // requests sent / requests layered with the same s and r (s = 0 for simple) would send.
  std::optional<double> amplification() const;
};

TaskAudit audit_task(const AuditOptions& options, const TaskPlan& plan, const TaskObservation& obs);

// One retry within a call, as the policy reads it: the call states before
// the failed request and before the retry, the fault retried, and the wall
// seconds the client waited between the failed request's end and the retry.
struct ObservedRetry {
  std::int64_t task = 0;
  std::int64_t request = 0;  // the retry's index in its task
  CallState from, to;
  FaultKind after = FaultKind::cut;
  double waited = 0.0;
};
// The retries among the first min(expected, sent) requests of the task.
std::vector<ObservedRetry> observed_retries(const Policy& policy, const Acceptance& accept, const TaskPlan& plan,
                                            const TaskObservation& obs);

inline constexpr double kWaitSlackBelow = 0.05;  // seconds a wait may fall short (clock granularity)
// What a retry owed and the window of wall seconds its wait is accepted in:
// the backoff's range [(1 - jitter) w, w], or [h, h] after an http_429 when
// the client waits the retry-after h; accepted from kWaitSlackBelow short of
// it to `tolerance` past it.
struct WaitWindow {
  double shortest = 0.0, longest = 0.0;  // the range owed, wall seconds
  double above = 0.0;                    // the tolerance past it
  bool http = false;  // the HTTP layer retries; else the stream layer
  int retry = 0;      // that layer's retry number k
  double low() const { return shortest - kWaitSlackBelow; }
  double high() const { return longest + above; }
  bool holds(double waited) const { return waited >= low() && waited <= high(); }
};
WaitWindow wait_window(const ClientTiming& timing, std::optional<double> retry_after_wait, double tolerance,
                       const ObservedRetry& retry);

// A mismatch in words, by its fault kind (docs/audit.md, Findings): "a
// stream without message_stop was reported as done: the client accepts a
// truncated answer (no_stop)". "" for a task with no failed check.
std::string finding_of(const TaskAudit& audit, const TaskObservation& obs);
// What accepting KIND=WORD says the client does, as a finding ending with
// the option that accepts it: "... (no_stop; --accept no_stop=done)". A
// task whose departure one acceptance explains gets this finding.
std::string finding_of_acceptance(FaultKind kind, Outcome word, Dialect dialect = Dialect::anthropic);
// A plan with a fallback column is routed first (routed_plan).
AuditResult run_audit(const Plan& plan, const Observations& obs, const AuditOptions& options);

// A plan with a fallback column (formats/plan.hpp) as the client met it:
// each task's single column holds, for each request it sent, the entry of
// the path it sent it to (TaskObservation::fallback); past those, the entry
// of the path `policy` (with `accept`) and a fallback after `after` requests
// (0: none) would take. Every check and --infer's search then run on it as
// on any plan; the provider check compares the paths. The header keeps its
// "fallback". Throws InputError for a plan without a fallback column.
Plan routed_plan(const Plan& plan, const Observations& obs, const Policy& policy, const Acceptance& accept, int after);

// --infer's fallback, once the policy is chosen: every K in 0 (no fallback)
// .. the policy's requests per call less one (a K at the most never moves a
// request) under which each task's requests went to
// the providers the policy with a fallback after K sends them to, over a
// routed plan; empty when none explains every task.
std::vector<int> infer_fallback(const Plan& routed, const Observations& obs, const Policy& policy,
                                const Acceptance& accept = {});
// "no fallback", "after 2", "no fallback, or after 3 to 9": a list from infer_fallback in words.
std::string describe_fallbacks(const std::vector<int>& candidates);

// The same verdict as audit_task(...).consistent(), without the details: the
// inner loop of the search.
bool consistent_with(const Policy& policy, const TaskPlan& plan, const TaskObservation& obs,
                     const Acceptance& accept = {});

// --infer: simple (r), naive and layered (s, r), budgeted (s, r, B) for s, r
// in 0..kInferMax and B in 1..(s+1)(r+1)-1, in that order (policy, s, r, B).
inline constexpr int kInferMax = 10;
struct InferResult {
  std::int64_t candidates = 0;
  std::vector<Policy> consistent;  // every candidate consistent with every task
  std::vector<Policy> closest;     // when none is: those with the fewest inconsistent tasks
  std::int64_t closest_mismatches = 0;
  // choose_headline: per consistent candidate, the tasks whose waits it does
  // not explain; and the index of the one the headline names.
  std::vector<std::int64_t> wait_mismatches;
  std::size_t headline = 0;
};
// Deterministic: the same result for any thread count.
InferResult infer_policy(const Plan& plan, const Observations& obs, std::int64_t n, const Acceptance& accept = {});
std::vector<Policy> infer_candidates(std::int64_t n);

// Free parameters of a policy: 1 for simple (r), 2 for naive and layered
// (s, r), 3 for budgeted (s, r, B).
int free_parameters(const Policy& policy);

// The rule for the headline among several consistent candidates (docs/audit.md,
// Ties): the fewest tasks whose waits it does not explain (run_audit with
// `options`' timing, or with the schedule fit_waits finds for the candidate
// when `fit_backoff`; 0 for all when waits are not checked), then the fewest
// free parameters, then search order. Fills wait_mismatches and headline.
inline constexpr const char* kHeadlineRule =
    "the fewest tasks whose waits it does not explain, then the fewest free parameters, then search order";
void choose_headline(const Plan& plan, const Observations& obs, const AuditOptions& options, InferResult& result,
                     bool fit_backoff = false);

// "naive with s = 2, r = 2", "simple with r = 2", "budgeted with s = 2, r = 2, B = 4".
std::string describe_candidate(const Policy& policy);

}  // namespace relsim
