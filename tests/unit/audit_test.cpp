// The audit of any client (relsim audit; docs/audit.md): hand-written plans
// and request logs whose verdicts are worked out by hand from the rules in
// docs/policies.md, not by running the code under test; --infer on small logs
// whose consistent sets are derived by hand; every bad input an InputError.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/audit/audit.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

using Tasks = std::vector<std::vector<std::string>>;

std::string plan_text(const Tasks& tasks, std::int64_t n, int b = 0) {
  std::string out = fmt::format(R"({{"relsim_plan": 1, "tasks": {}, "source": "scripted", "n": {}, "b": {}, "g": 0}})",
                                tasks.size(), n, b) + "\n";
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    std::string list;
    for (const auto& e : tasks[t]) list += (list.empty() ? "\"" : ", \"") + e + "\"";
    out += fmt::format(R"({{"task": {}, "requests": [{}]}})", t, list) + "\n";
  }
  return out;
}

Plan plan_of(const Tasks& tasks, std::int64_t n) { return parse_plan(plan_text(tasks, n), "plan.jsonl"); }

// A request log as relsim serve writes it. Each request of a task comes
// `wait` seconds after the previous request of that task finished.
struct LogBuilder {
  std::string text = "{\"relsim_log\": 1, \"port\": 8080, \"plan_tasks\": null}\n";
  std::map<std::int64_t, std::int64_t> next;
  std::map<std::int64_t, double> free_at;  // ms

  LogBuilder& req(std::int64_t task, const std::string& entry, std::optional<int> retry = std::nullopt,
                  double wait = 0.6, const std::string& end = "complete") {
    const std::int64_t index = next[task]++;
    const double at = index == 0 ? 0.0 : free_at[task] + wait * 1000.0;
    free_at[task] = at + 1.0;
    const std::string rc = retry ? fmt::format("\"{}\"", *retry) : "null";
    text += fmt::format(R"({{"task": {}, "index": {}, "entry": "{}", "status": 200, "end": "{}", "received_ms": {}, )"
                        R"("finished_ms": {}, "retry_count": {}, "body_bytes": 86}})",
                        task, index, entry, end, at, at + 1.0, rc) + "\n";
    return *this;
  }
  // Several requests with retry counts, `wait` apart.
  LogBuilder& reqs(std::int64_t task, const std::vector<std::string>& entries, const std::vector<int>& retries) {
    for (std::size_t i = 0; i < entries.size(); ++i) req(task, entries[i], retries.at(i));
    return *this;
  }
  LogBuilder& exhausted(std::int64_t task) {
    const std::int64_t index = next[task]++;
    text += fmt::format(R"({{"task": {}, "index": {}, "entry": null, "exhausted": true, "status": 404, )"
                        R"("end": "complete", "received_ms": 9000, "finished_ms": 9001, "retry_count": null, )"
                        R"("body_bytes": 86}})",
                        task, index) + "\n";
    return *this;
  }
  LogBuilder& outcome(std::int64_t task, const std::string& word) {
    text += fmt::format(R"({{"task": {}, "outcome": "{}", "detail": "", "received_ms": 9999}})", task, word) + "\n";
    return *this;
  }
  RequestLog log() const { return parse_request_log(text, "log.jsonl"); }
};

struct Audited {
  Observations obs;
  AuditResult result;
};

Audited audit(const Plan& plan, const LogBuilder& log, const Policy& p, bool waits = false) {
  AuditOptions options;
  options.policy = p;
  options.check_waits = waits;
  Audited a{observe(plan, log.log(), nullptr, p.n), {}};
  a.result = run_audit(plan, a.obs, options);
  return a;
}

const Tasks kSlowHeadersAlways = {std::vector<std::string>(9, "slow_headers")};

// docs/policies.md: naive retries slow headers s times in the HTTP layer, then
// hands them to the stream layer, whose r retries each get s HTTP retries:
// (s+1)(r+1) = 9 requests, then crash:slow_headers.
LogBuilder naive_on_slow_headers() {
  LogBuilder b;
  b.reqs(0, std::vector<std::string>(9, "slow_headers"), {0, 1, 2, 0, 1, 2, 0, 1, 2});
  b.outcome(0, "crash");
  return b;
}

TEST(Audit, SlowHeadersAlwaysNaiveSendsNineAndCrashes) {
  const Plan plan = plan_of(kSlowHeadersAlways, 1);
  const LogBuilder log = naive_on_slow_headers();
  const Audited naive = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::naive});
  EXPECT_EQ(naive.result.mismatches, 0);
  EXPECT_EQ(naive.result.tasks[0].expected, 9);
  EXPECT_EQ(naive.result.crashes, 1);
  // Layered gives up after s + 1 = 3 requests with env_error: 9 is 3 times that.
  const Audited layered = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::layered});
  ASSERT_EQ(layered.result.mismatches, 1);
  const TaskAudit& t = layered.result.tasks[0];
  EXPECT_EQ(t.expected, 3);
  EXPECT_EQ(t.expected_outcome.name(), "env_error:slow_headers");
  EXPECT_TRUE(t.failed(Check::requests));
  EXPECT_TRUE(t.failed(Check::outcome));
  EXPECT_FALSE(t.failed(Check::retry_count));  // 0, 1, 2 agree as far as layered goes
  EXPECT_EQ(t.blame, "slow_headers");
  EXPECT_EQ(layered.result.by_kind.at("slow_headers"), 1);
  EXPECT_EQ(layered.result.sent, 9);
  EXPECT_EQ(layered.result.layered, 3);
  EXPECT_EQ(layered.result.amplification(), 3.0);
  EXPECT_EQ(t.per_call, std::vector<std::int64_t>{9});
}

TEST(Audit, SlowHeadersAlwaysLayeredSendsThreeAndReportsEnvError) {
  const Plan plan = plan_of(kSlowHeadersAlways, 1);
  LogBuilder log;
  log.reqs(0, {"slow_headers", "slow_headers", "slow_headers"}, {0, 1, 2}).outcome(0, "env_error");
  EXPECT_EQ(audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}).result.mismatches, 0);
  const Audited naive = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::naive});
  EXPECT_EQ(naive.result.tasks[0].expected, 9);
  EXPECT_EQ(naive.result.tasks[0].expected_outcome.name(), "crash:slow_headers");
  EXPECT_EQ(naive.result.by_check[static_cast<int>(Check::requests)], 1);
  EXPECT_EQ(naive.result.by_check[static_cast<int>(Check::outcome)], 1);
}

TEST(Audit, InStreamOverloadedNaiveCrashesAtOnceLayeredRetries) {
  const Plan plan = plan_of({{"overloaded", "ok"}}, 1);
  LogBuilder log;
  log.req(0, "overloaded", 0).outcome(0, "crash");
  EXPECT_EQ(audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::naive}).result.mismatches, 0);
  const Audited layered = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::layered});
  const TaskAudit& t = layered.result.tasks[0];
  EXPECT_EQ(t.expected, 2);
  EXPECT_EQ(t.expected_outcome.name(), "done");
  EXPECT_TRUE(t.failed(Check::requests) && t.failed(Check::outcome));
  EXPECT_EQ(t.blame, "overloaded");
}

TEST(Audit, AStallStillOpenAtShutdownWithNoOutcomeIsAHang) {
  const Plan plan = plan_of({{"stall", "ok"}}, 1);
  LogBuilder log;
  log.req(0, "stall", 0, 0.6, "stopped");
  const Audited naive = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::naive});
  EXPECT_EQ(naive.result.mismatches, 0);  // naive has no idle timeout: hang
  EXPECT_EQ(naive.result.hangs, 1);
  EXPECT_EQ(naive.obs.tasks[0].outcome, Outcome::hang);
  EXPECT_FALSE(naive.obs.tasks[0].reported.has_value());
  const Audited layered = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::layered});
  EXPECT_TRUE(layered.result.tasks[0].failed(Check::outcome));
  EXPECT_EQ(layered.result.tasks[0].blame, "stall");
}

TEST(Audit, AStallNeverRetriedWhoseClientWasKilledIsAHang) {
  const Plan plan = plan_of({{"stall", "ok"}, {"ok", "ok"}}, 1);
  LogBuilder log;
  log.req(0, "stall", 0, 0.6, "client_gone").req(1, "ok", 0, 0.6, "client_gone");
  const Audited naive = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::naive});
  EXPECT_EQ(naive.obs.tasks[0].outcome, Outcome::hang);
  EXPECT_FALSE(naive.obs.tasks[1].outcome.has_value());  // a good stream the client left: not a hang
  EXPECT_EQ(naive.result.hangs, 1);
  EXPECT_EQ(naive.result.mismatches, 0);
}

TEST(Audit, RetryCountsMustCountHttpRetriesWithinEachSdkCall) {
  const Plan plan = plan_of({{"http_529", "http_529", "ok"}}, 1);
  LogBuilder good;
  good.reqs(0, {"http_529", "http_529", "ok"}, {0, 1, 2}).outcome(0, "done");
  EXPECT_EQ(audit(plan, good, Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}).result.mismatches, 0);
  LogBuilder flat;  // a loop of its own around an SDK with no retries: every request is a first try
  flat.reqs(0, {"http_529", "http_529", "ok"}, {0, 0, 0}).outcome(0, "done");
  // Read from the log (the largest count is 0): the SDK's own layer never
  // retried, so the header's 0 does not veto the outer layer's retries.
  EXPECT_EQ(audit(plan, flat, Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}).result.mismatches, 0);
  // Said to be the SDK's own 2 retries, the same zeros are a mismatch.
  AuditOptions options;
  options.policy = Policy{.n = 1, .r = 2, .kind = PolicyKind::layered};
  options.check_waits = false;
  Observations obs = observe(plan, flat.log(), nullptr, 1);
  read_retry_header(obs, RetryHeaderMode::given, 2);
  const AuditResult a = run_audit(plan, obs, options);
  EXPECT_TRUE(a.tasks[0].failed(Check::retry_count));
  EXPECT_FALSE(a.tasks[0].failed(Check::requests));
  EXPECT_EQ(a.tasks[0].blame, "http_529");
  // Simple retries every fault as a new attempt: retry counts 0, 0, 0 are its own.
  EXPECT_EQ(audit(plan, flat, Policy{.n = 1, .r = 2, .s = 0, .kind = PolicyKind::simple}).result.mismatches, 0);
  EXPECT_NE(audit(plan, good, Policy{.n = 1, .r = 2, .s = 0, .kind = PolicyKind::simple}).result.mismatches, 0);
}

// A framework retrying around the SDK (docs/audit.md, The retry header):
// LangChain builds the SDK with maxRetries 0 and retries 6 times itself, so
// its 7 attempts on a pinned 529 all carry 0; an SDK with 1 retry of its own
// inside an outer layer of 2 (s = 5 in all) sends 0 1 0 1 0 1. Worked out by
// hand: naive s = 6, r = 0 on [529 x 7, ok x 2] sends 7 requests and crashes
// (a status error past the HTTP layer), on [529, ok, ok] sends 3 and is done.
TEST(AuditRetryHeader, AnOuterLayerAroundTheSdkIsReadModuloTheSdksOwnRetries) {
  std::vector<std::string> pinned(7, "http_529");
  pinned.insert(pinned.end(), {"ok", "ok"});
  const Plan plan = plan_of({pinned, {"http_529", "ok", "ok"}}, 2);
  LogBuilder langchain;
  langchain.reqs(0, std::vector<std::string>(7, "http_529"), std::vector<int>(7, 0)).outcome(0, "crash");
  langchain.reqs(1, {"http_529", "ok", "ok"}, {0, 0, 0}).outcome(1, "done");
  const Policy naive6{.n = 2, .r = 0, .s = 6, .kind = PolicyKind::naive};
  EXPECT_EQ(audit(plan, langchain, naive6).result.mismatches, 0);
  const Observations obs = observe(plan, langchain.log(), nullptr, 2);
  EXPECT_EQ(obs.header.inner, 0);
  EXPECT_EQ(obs.header.sent, 10);
  const InferResult res = infer_policy(plan, obs, 2);
  ASSERT_FALSE(res.consistent.empty());
  bool found = false;
  for (const Policy& p : res.consistent) found |= describe_candidate(p) == "naive with s = 6, r = 0";
  EXPECT_TRUE(found);

  const Plan six = plan_of({std::vector<std::string>(6, "http_529")}, 1);
  LogBuilder nested;  // SDK maxRetries 1 inside an outer layer of 2 retries: 6 attempts, then env_error
  nested.reqs(0, std::vector<std::string>(6, "http_529"), {0, 1, 0, 1, 0, 1}).outcome(0, "env_error");
  const Policy layered5{.n = 1, .r = 0, .s = 5, .kind = PolicyKind::layered};
  EXPECT_EQ(audit(six, nested, layered5).result.mismatches, 0);
  // The header off: anything goes; read from the log, 5 5 5 ... says the SDK
  // retried 5 times inside one call, which the first request cannot have.
  LogBuilder garbage;
  garbage.reqs(0, std::vector<std::string>(6, "http_529"), std::vector<int>(6, 5)).outcome(0, "env_error");
  EXPECT_NE(audit(six, garbage, layered5).result.mismatches, 0);
  Observations off = observe(six, garbage.log(), nullptr, 1);
  read_retry_header(off, RetryHeaderMode::off);
  AuditOptions options;
  options.policy = layered5;
  options.check_waits = false;
  EXPECT_EQ(run_audit(six, off, options).mismatches, 0);
  EXPECT_EQ(off.header.sent, 6);
  EXPECT_EQ(off.header.inner, -1);
}

// Several consistent candidates: the headline is the one with the fewest
// tasks whose waits it does not explain, then the fewest free parameters,
// then search order (docs/audit.md, --infer).
TEST(AuditInfer, TheHeadlineFollowsTheStatedRule) {
  const Plan plan = plan_of({{"http_529", "ok"}}, 1);
  LogBuilder log;
  log.req(0, "http_529", std::nullopt).req(0, "ok", std::nullopt, 0.6).outcome(0, "done");
  const Observations obs = observe(plan, log.log(), nullptr, 1);
  InferResult res = infer_policy(plan, obs, 1);
  ASSERT_GT(res.consistent.size(), 2U);
  AuditOptions options;
  options.check_waits = true;
  choose_headline(plan, obs, options, res);
  ASSERT_EQ(res.wait_mismatches.size(), res.consistent.size());
  // A wait of 0.6 s fits the first retry's [0.325, 1.0] s for every candidate: simple (one parameter) wins.
  EXPECT_EQ(describe_candidate(res.consistent[res.headline]), "simple with r = 1");
  // Too short a wait for any: still a tie on waits, so the same rule.
  LogBuilder quick;
  quick.req(0, "http_529", std::nullopt).req(0, "ok", std::nullopt, 0.01).outcome(0, "done");
  const Observations q = observe(plan, quick.log(), nullptr, 1);
  InferResult rq = infer_policy(plan, q, 1);
  choose_headline(plan, q, options, rq);
  for (const std::int64_t w : rq.wait_mismatches) EXPECT_EQ(w, 1);
  EXPECT_EQ(free_parameters(rq.consistent[rq.headline]), 1);
}

TEST(Audit, WaitsBeforeRetriesFollowTheBackoff) {
  // HTTP retry 0: w = 0.5 s, accepted [0.325, 1.0]; retry 1: w = 1 s, accepted [0.7, 1.5].
  const Plan plan = plan_of({{"http_529", "http_529", "ok"}}, 1);
  auto with_waits = [&](double w1, double w2) {
    LogBuilder b;
    b.req(0, "http_529", 0).req(0, "http_529", 1, w1).req(0, "ok", 2, w2).outcome(0, "done");
    return audit(plan, b, Policy{.n = 1, .r = 2, .kind = PolicyKind::layered}, true).result;
  };
  EXPECT_EQ(with_waits(0.4, 0.9).mismatches, 0);
  const AuditResult zero = with_waits(0.0, 0.9);
  EXPECT_EQ(zero.mismatches, 1);
  EXPECT_EQ(zero.by_check[static_cast<int>(Check::wait)], 1);
  EXPECT_EQ(zero.inconsistent, 0);  // a wait alone does not make the policy inconsistent
  EXPECT_EQ(with_waits(0.4, 0.6).by_check[static_cast<int>(Check::wait)], 1);
  EXPECT_EQ(with_waits(0.4, 1.6).by_check[static_cast<int>(Check::wait)], 1);
  // A stream-layer retry waits as retry 0 of its layer; a new call does not wait.
  const Plan cut = plan_of({{"cut", "ok", "ok"}}, 2);
  LogBuilder b;
  b.req(0, "cut", 0).req(0, "ok", 0, 0.0).req(0, "ok", 0, 0.0).outcome(0, "done");
  const AuditResult r = audit(cut, b, Policy{.n = 2, .r = 2, .kind = PolicyKind::layered}, true).result;
  EXPECT_EQ(r.by_check[static_cast<int>(Check::wait)], 1);
  EXPECT_NE(r.tasks[0].detail.find("request 1: waited 0.000 s"), std::string::npos) << r.tasks[0].detail;
  EXPECT_EQ(r.tasks[0].per_call, (std::vector<std::int64_t>{2, 1}));
}

TEST(Audit, DoneWithFewerGoodRequestsThanCallsIsPartialDone) {
  // n = 2, layered r = 2: ok, then cut three times: env_error:cut after 4 requests.
  const Plan plan = plan_of({{"ok", "cut", "cut", "cut"}}, 2);
  LogBuilder log;
  log.reqs(0, {"ok", "cut"}, {0, 0}).outcome(0, "done");  // took the cut stream for an answer
  const Audited a = audit(plan, log, Policy{.n = 2, .r = 2, .kind = PolicyKind::layered});
  EXPECT_EQ(a.obs.tasks[0].outcome, Outcome::partial_done);
  EXPECT_EQ(a.result.tasks[0].expected, 4);
  EXPECT_TRUE(a.result.tasks[0].failed(Check::outcome));
  EXPECT_EQ(a.result.tasks[0].blame, "cut");
  EXPECT_EQ(a.result.observed_outcomes[static_cast<int>(Outcome::partial_done)], 1);
}

TEST(Audit, RunningPastTheScriptIsAFindingUnlessThePolicyNeedsMore) {
  const Plan plan = plan_of({{"slow_headers", "slow_headers", "slow_headers"}}, 1);
  LogBuilder log;
  log.reqs(0, {"slow_headers", "slow_headers", "slow_headers"}, {0, 1, 2}).exhausted(0).outcome(0, "crash");
  const Audited layered = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::layered});
  EXPECT_TRUE(layered.result.tasks[0].failed(Check::exhausted));
  EXPECT_TRUE(layered.result.tasks[0].failed(Check::requests));
  // naive s = 2, r = 2 needs 9 requests: the plan runs out where the client ran out.
  const Audited naive = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::naive});
  EXPECT_EQ(naive.result.mismatches, 0);
  EXPECT_TRUE(naive.result.tasks[0].ran_off);
  EXPECT_TRUE(consistent_with(Policy{.n = 1, .r = 2, .kind = PolicyKind::naive}, plan.tasks[0], naive.obs.tasks[0]));
}

TEST(Audit, TasksNeverRunAreCountedNotAudited) {
  const Plan plan = plan_of({{"ok"}, {"ok"}, {"ok"}}, 1);
  LogBuilder log;
  log.req(1, "ok", 0).outcome(1, "done").outcome(2, "env_error");
  const Audited a = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::layered});
  EXPECT_EQ(a.obs.not_run, 1);
  ASSERT_EQ(a.obs.tasks.size(), 2U);
  EXPECT_EQ(a.result.tasks[1].task, 2);
  EXPECT_TRUE(a.result.tasks[1].failed(Check::requests));  // reported without a request
}

// --infer. A layered s = 2, r = 2 loop over four tasks chosen to pin it down:
//   0: slow_headers x9  -> 3 requests (retry counts 0 1 2), env_error: s = 2, not naive, not simple
//   1: cut x4           -> 3 requests, env_error: r = 2, or a budget B = 3
//   2: cut slow slow ok -> 4 requests (0 0 1 2), done: rules out B <= 3
//   3: ok               -> 1 request, done
// Consistent: layered s = 2, r = 2 and budgeted s = 2, r = 2 with B = 4 ... 8
// (a budget of at least 4 never binds on these tasks, and B < (s+1)(r+1) = 9).
TEST(AuditInfer, FindsExactlyTheConsistentSets) {
  const Plan plan = plan_of({std::vector<std::string>(9, "slow_headers"),
                             {"cut", "cut", "cut", "cut"},
                             {"cut", "slow_headers", "slow_headers", "ok"},
                             {"ok"}},
                            1);
  LogBuilder log;
  log.reqs(0, {"slow_headers", "slow_headers", "slow_headers"}, {0, 1, 2}).outcome(0, "env_error");
  log.reqs(1, {"cut", "cut", "cut"}, {0, 0, 0}).outcome(1, "env_error");
  log.reqs(2, {"cut", "slow_headers", "slow_headers", "ok"}, {0, 0, 1, 2}).outcome(2, "done");
  log.reqs(3, {"ok"}, {0}).outcome(3, "done");
  const Observations obs = observe(plan, log.log(), nullptr, 1);
  const InferResult res = infer_policy(plan, obs, 1);
  std::vector<std::string> found;
  for (const Policy& p : res.consistent) found.push_back(describe_candidate(p));
  const std::vector<std::string> expected = {
      "layered with s = 2, r = 2",          "budgeted with s = 2, r = 2, B = 4", "budgeted with s = 2, r = 2, B = 5",
      "budgeted with s = 2, r = 2, B = 6", "budgeted with s = 2, r = 2, B = 7", "budgeted with s = 2, r = 2, B = 8"};
  EXPECT_EQ(found, expected);
  EXPECT_TRUE(res.closest.empty());
  // 11 simple + 2 x 121 naive/layered + sum over s, r of ((s+1)(r+1) - 1) budgeted = 66^2 - 121.
  EXPECT_EQ(res.candidates, 11 + 242 + 66 * 66 - 121);
}

TEST(AuditInfer, NaiveOnSlowHeadersIsNaiveTwoTwoOrAnOuterLayerOfNine) {
  // 9 requests 0 1 2 0 1 2 0 1 2 and a crash. Read as the SDK's own 2 retries
  // (the largest count): 3 SDK calls of 3 attempts, either inside naive's 3
  // stream rounds (s = 2, r = 2; r = 3 would need 12 requests, past the
  // plan's 9) or inside an outer HTTP-layer loop of 9 (naive s = 8, r = 0).
  const Plan plan = plan_of(kSlowHeadersAlways, 1);
  Observations obs = observe(plan, naive_on_slow_headers().log(), nullptr, 1);
  InferResult res = infer_policy(plan, obs, 1);
  std::vector<std::string> found;
  for (const Policy& p : res.consistent) found.push_back(describe_candidate(p));
  EXPECT_EQ(found, (std::vector<std::string>{"naive with s = 2, r = 2", "naive with s = 8, r = 0"}));
  // Said to be the only retry layer (inner retries past any s): s = 2, r = 2 alone.
  read_retry_header(obs, RetryHeaderMode::given, kMaxHttpRetries);
  res = infer_policy(plan, obs, 1);
  ASSERT_EQ(res.consistent.size(), 1U);
  EXPECT_EQ(describe_candidate(res.consistent[0]), "naive with s = 2, r = 2");
}

TEST(AuditInfer, WithNothingConsistentReportsTheClosestAndItsCount) {
  // Task 1's retry count is not a count: no candidate can agree with it.
  const Plan plan = plan_of({std::vector<std::string>(9, "slow_headers"), {"ok"}}, 1);
  LogBuilder log = naive_on_slow_headers();
  log.text += R"({"task": 1, "index": 0, "entry": "ok", "status": 200, "end": "complete", "received_ms": 1, )"
              R"("finished_ms": 2, "retry_count": "x", "body_bytes": 86})" "\n";
  log.outcome(1, "done");
  const Observations obs = observe(plan, log.log(), nullptr, 1);
  const InferResult res = infer_policy(plan, obs, 1);
  EXPECT_TRUE(res.consistent.empty());
  ASSERT_EQ(res.closest.size(), 2U);  // as above: the header cannot tell these two apart
  EXPECT_EQ(describe_candidate(res.closest[0]), "naive with s = 2, r = 2");
  EXPECT_EQ(describe_candidate(res.closest[1]), "naive with s = 8, r = 0");
  EXPECT_EQ(res.closest_mismatches, 1);
}

// The log a client following `follow` exactly leaves on `plan`, with every
// `broken`-th task's first retry count not a count (no candidate can agree).
std::string follower_log(const Plan& plan, const Policy& follow, std::int64_t broken) {
  LogBuilder b;
  for (const TaskPlan& t : plan.tasks) {
    TaskRunner runner(follow);
    for (std::size_t i = 0; i < t.requests.size() && !runner.ended(); ++i) {
      const int rc = runner.state().http;
      runner.feed(t.requests[i]);
      b.req(t.task, plan_name(t.requests[i]), rc);
    }
    b.outcome(t.task, std::string(to_string(runner.outcome().outcome)));
  }
  std::string text = b.text;
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(plan.tasks.size()); t += broken) {
    const auto at = text.find(fmt::format(R"({{"task": {}, "index": 0,)", t));
    const auto rc = text.find("\"retry_count\": \"", at) + 16;
    text.replace(rc, 1, "x");
  }
  return text;
}

TEST(AuditInfer, TheClosestIsTheSameForAnyThreadCount) {
  Model model;
  model.p = 0.3;
  model.q = 0.8;
  SimConfig config;
  config.tasks = 3000;
  config.seed = 4;
  config.kinds = parse_fault_weights("cut=1,stall=1,slow_headers=2,http_529=1,overloaded=1");
  const Policy naive{.n = 2, .r = 2, .kind = PolicyKind::naive};
  const Plan plan = generate_audit_plan(model, naive, config, 9);
  const Observations obs = observe(plan, parse_request_log(follower_log(plan, naive, 50), "log"), nullptr, 2);
  std::vector<std::vector<std::string>> runs;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    const InferResult res = infer_policy(plan, obs, 2);
    EXPECT_TRUE(res.consistent.empty());
    EXPECT_EQ(res.closest_mismatches, 3000 / 50);  // the broken tasks, and naive agrees with every other
    std::vector<std::string> names;
    for (const Policy& p : res.closest) names.push_back(describe_candidate(p));
    runs.push_back(names);
  }
  omp_set_num_threads(omp_get_num_procs());
  ASSERT_FALSE(runs[0].empty());
  EXPECT_NE(std::find(runs[0].begin(), runs[0].end(), "naive with s = 2, r = 2"), runs[0].end());
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

// Bad input: one InputError naming where.
void expect_error(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no InputError; expected one naming " << part;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(AuditInput, ALogFromAnotherPlanNamesTheFirstMismatchingTask) {
  const Plan plan = plan_of({{"ok"}, {"ok"}, {"cut", "ok"}}, 1);
  LogBuilder log;
  log.req(0, "ok", 0).req(2, "ok", 0).req(1, "cut", 0);
  expect_error([&] { observe(plan, log.log(), nullptr, 1); }, "log.jsonl:3: the log is from another plan: task 2");
  LogBuilder other;
  other.req(5, "ok", 0);
  expect_error([&] { observe(plan, other.log(), nullptr, 1); }, "task 5 is not in the plan");
  LogBuilder header;
  header.text = "{\"relsim_log\": 1, \"port\": 1, \"plan_tasks\": 400}\n";
  expect_error([&] { observe(plan, header.log(), nullptr, 1); }, "plan_tasks = 400, the plan has 3");
}

TEST(AuditInput, MalformedLinesNameTheirLineNumber) {
  LogBuilder log;
  log.req(0, "ok", 0);
  const std::string base = log.text;
  expect_error([&] { parse_request_log(base + R"({"task": 0, "index": 1, "entr)", "log.jsonl"); },
               "log.jsonl:3: not a JSON object");
  expect_error([&] { parse_request_log(base + "[1, 2]\n", "log.jsonl"); }, "log.jsonl:3");
  expect_error([&] { parse_request_log(base + R"({"task": 0, "outcome": "finished", "received_ms": 1})", "log.jsonl"); },
               "log.jsonl:3: outcome 'finished' is not an outcome");
  expect_error([&] { parse_request_log(R"({"relsim_plan": 1})", "log.jsonl"); }, "log.jsonl:1:");
  expect_error([&] { parse_request_log(base + R"({"task": -1, "outcome": "done", "received_ms": 1})", "log.jsonl"); },
               "log.jsonl:3: \"task\"");
  // A task's indices must be 0, 1, 2 ...
  const Plan plan = plan_of({{"ok", "ok"}}, 2);
  const std::string twice = base + R"({"task": 0, "index": 0, "entry": "ok", "status": 200, "end": "complete", )"
                                   R"("received_ms": 5, "finished_ms": 6, "retry_count": "0", "body_bytes": 86})";
  expect_error([&] { observe(plan, parse_request_log(twice, "log.jsonl"), nullptr, 2); }, "index 0 appears twice");
}

TEST(AuditInput, OutcomesCsvIsStrict) {
  const Plan plan = plan_of({{"ok"}, {"ok"}}, 1);
  LogBuilder log;
  log.req(0, "ok", 0).outcome(0, "crash");
  const auto csv = parse_outcome_csv("task,outcome,detail\n0,done,\"fine, \"\"really\"\"\"\n", "o.csv");
  ASSERT_EQ(csv.size(), 1U);
  EXPECT_EQ(csv[0].detail, "fine, \"really\"");
  const Observations obs = observe(plan, log.log(), &csv, 1, "o.csv");
  EXPECT_EQ(obs.tasks[0].reported, Outcome::done);  // the CSV overrides the log
  expect_error([&] { parse_outcome_csv("task,outcome,detail\n0,fine,\n", "o.csv"); },
               "o.csv:2: outcome 'fine' is not an outcome");
  expect_error([&] { parse_outcome_csv("task,verdict\n", "o.csv"); }, "o.csv:1");
  const auto unknown = parse_outcome_csv("task,outcome,detail\n7,done,\n", "o.csv");
  expect_error([&] { observe(plan, log.log(), &unknown, 1, "o.csv"); }, "o.csv:2: an outcome for task 7");
}

TEST(AuditInput, PlansWithSilentStepsCannotBeAudited) {
  const Plan plan = parse_plan(plan_text({{"ok"}}, 1, 1), "plan.jsonl");
  expect_error([&] { check_auditable(plan, "plan.jsonl"); }, "plan.jsonl: the plan has b = 1");
}

}  // namespace
}  // namespace relsim

namespace relsim {
namespace {

// Findings in words (docs/audit.md, Findings), worked out by hand for
// layered s = 2, r = 2, which retries each in-stream fault and so finishes
// [fault, ok] with 2 requests: a client that takes a stream without
// message_stop as the answer sends 1 and reports done; one with no idle
// timeout hangs on the stall; one that throws on a cut crashes. --accept
// declares each as the client's rule, and the audit then agrees with it.
TEST(AuditFindings, EachMismatchSaysWhatItMeansAndAcceptingItLeavesNone) {
  const Plan plan = plan_of({{"no_stop", "ok"}, {"stall", "ok"}, {"cut", "ok"}}, 1);
  LogBuilder log;
  log.req(0, "no_stop", 0).outcome(0, "done");
  log.req(1, "stall", 0, 0.6, "stopped");
  log.req(2, "cut", 0).outcome(2, "crash");
  const Policy layered{.n = 1, .r = 2, .s = 2, .kind = PolicyKind::layered};
  AuditOptions options;
  options.policy = layered;
  options.check_waits = false;
  const Observations obs = observe(plan, log.log(), nullptr, 1);
  const AuditResult before = run_audit(plan, obs, options);
  ASSERT_EQ(before.mismatches, 3);
  EXPECT_EQ(before.tasks[0].finding,
            "a stream without message_stop was reported as done: the client accepts a truncated answer (no_stop; --accept no_stop=done)");
  EXPECT_EQ(before.tasks[1].finding, "a stalled stream hung the task: the client has no idle timeout (stall; --accept stall=hang)");
  EXPECT_EQ(before.tasks[2].finding,
            "a cut escaped the loop as an exception (crash): the client does not end the task cleanly on it (cut; --accept cut=crash)");
  EXPECT_EQ(before.by_finding.size(), 3U);
  options.accept = parse_acceptance("no_stop=done,stall=hang,cut=crash");
  EXPECT_EQ(run_audit(plan, obs, options).mismatches, 0);
  EXPECT_EQ(to_string(options.accept), "cut=crash,no_stop=done,stall=hang");
  // --infer with the same acceptance finds layered consistent.
  const InferResult res = infer_policy(plan, obs, 1, options.accept);
  bool found = false;
  for (const Policy& p : res.consistent) found |= describe_candidate(p) == "layered with s = 2, r = 2";
  EXPECT_TRUE(found);
  expect_error([] { parse_acceptance("nostop=done"); }, "'nostop=done' names no fault kind");
  expect_error([] { parse_acceptance("cut=fine"); }, "'cut=fine' names no outcome");
  expect_error([] { parse_acceptance("cut=crash,cut=done"); }, "'cut=done' is given twice");
}

TEST(AuditFindings, AnOpenAiDialectTaskIsToldInItsOwnWords) {
  // The same two findings on chat completions (log lines with "dialect":
  // "openai"): OpenAI's stream has a finish_reason, not message_stop, and an
  // error object, not an error event. A task of the Messages API beside it
  // keeps its words; a dialect the log cannot have is refused.
  const Plan plan = plan_of({{"no_stop", "ok"}, {"overloaded", "ok"}, {"no_stop", "ok"}}, 1);
  LogBuilder log;
  log.req(0, "no_stop", 0).outcome(0, "done");
  log.req(1, "overloaded", 0).outcome(1, "done");
  log.req(2, "no_stop", 0).outcome(2, "done");
  std::string text;
  for (std::size_t at = 0, end; (end = log.text.find('\n', at)) != std::string::npos; at = end + 1) {
    std::string line = log.text.substr(at, end - at);
    if (line.find("\"index\"") != std::string::npos && line.find("\"task\": 2,") == std::string::npos)
      line.insert(line.size() - 1, ", \"dialect\": \"openai\"");
    text += line + "\n";
  }
  AuditOptions options;
  options.policy = Policy{.n = 1, .r = 2, .s = 2, .kind = PolicyKind::layered};
  options.check_waits = false;
  const AuditResult r = run_audit(plan, observe(plan, parse_request_log(text, "log.jsonl"), nullptr, 1), options);
  ASSERT_EQ(r.mismatches, 3);
  EXPECT_EQ(r.tasks[0].finding, "a stream without a finish_reason was reported as done: the client accepts a "
                                "truncated answer (no_stop; --accept no_stop=done)");
  EXPECT_EQ(r.tasks[1].finding, "an error object inside the stream was reported as done: the client ignores errors "
                                "inside a stream (overloaded; --accept overloaded=done)");
  EXPECT_EQ(r.tasks[2].finding, "a stream without message_stop was reported as done: the client accepts a truncated "
                                "answer (no_stop; --accept no_stop=done)");
  std::string bad = text;
  bad.replace(bad.find("\"openai\""), 8, "\"gemini\"");
  expect_error([&] { parse_request_log(bad, "log.jsonl"); }, "\"dialect\" = \"gemini\" is not \"anthropic\" or \"openai\"");
}

TEST(AuditFindings, ARealUpstreamsOwnFailureThroughTheProxyIsNotTheClients) {
  // Through relsim proxy: the plan had request 0 good, the upstream could not
  // be reached (502 from the proxy), the client retried and finished. Simple
  // r = 2 expects one request; the finding says whose doing the second was.
  const Plan plan = plan_of({{"ok", "ok", "ok"}}, 1);
  LogBuilder log;
  log.text += R"({"task": 0, "index": 0, "entry": "ok", "status": 502, "end": "complete", "received_ms": 0, )"
              R"("finished_ms": 1, "retry_count": null, "body_bytes": 86, "upstream": {"status": null, )"
              R"("headers_ms": 0.4, "bytes": 0, "reused": false, "error": "upstream http://127.0.0.1:1 failed )"
              R"(before its headers: Connection refused"}})" "\n";
  log.next[0] = 1;
  log.free_at[0] = 1.0;
  log.req(0, "ok").outcome(0, "done");
  const Audited a = audit(plan, log, Policy{.n = 1, .r = 2, .kind = PolicyKind::simple});
  ASSERT_EQ(a.result.mismatches, 1);
  EXPECT_EQ(a.result.tasks[0].finding,
            "the real upstream itself failed and the proxy passed its failure on: this task's mismatch is not the "
            "client's doing (upstream)");
  EXPECT_NE(a.result.tasks[0].detail.find("upstream request 0: upstream http://127.0.0.1:1 failed before its headers"),
            std::string::npos)
      << a.result.tasks[0].detail;
  // The upstream's own error status counts the same; a 200 does not.
  LogBuilder own;
  own.text += R"({"task": 0, "index": 0, "entry": "ok", "status": 500, "end": "complete", "received_ms": 0, )"
              R"("finished_ms": 1, "retry_count": null, "body_bytes": 86, "upstream": {"status": 500, )"
              R"("headers_ms": 0.4, "bytes": 90, "reused": true}})" "\n";
  EXPECT_EQ(own.log().requests[0].upstream_failed, "the upstream answered 500");
  LogBuilder fine;
  fine.text += R"({"task": 0, "index": 0, "entry": "ok", "status": 200, "end": "complete", "received_ms": 0, )"
               R"("finished_ms": 1, "retry_count": null, "body_bytes": 86, "upstream": {"status": 200, )"
               R"("headers_ms": 0.4, "bytes": 905, "reused": true}})" "\n";
  EXPECT_FALSE(fine.log().requests[0].upstream_failed);
  LogBuilder bad;
  bad.text += R"({"task": 0, "index": 0, "entry": "ok", "status": 200, "end": "complete", "received_ms": 0, )"
              R"("finished_ms": 1, "retry_count": null, "body_bytes": 86, "upstream": "yes"})" "\n";
  expect_error([&] { (void)bad.log(); }, "\"upstream\" = \"yes\" is not an object");
}

}  // namespace
}  // namespace relsim
