// relsim audit: check what any client did against a plan, task by task (docs/audit.md).
#include <algorithm>
#include <iostream>
#include <utility>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/audit/audit.hpp"
#include "relsim/audit/audit_report.hpp"
#include "relsim/audit/wait_fit.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"
#include "cli/require_option.hpp"

namespace relsim::cli {
namespace {

struct AuditArgs {
  std::string plan, log, outcomes, out;
  std::string policy_kind;
  int s = 2, r = 2, B = 0;
  long long n = 0;
  bool infer = false, json = false, per_task = false, no_wait_check = false;
  bool no_retry_header = false;
  std::string backoff;  // --backoff SPEC
  std::vector<CLI::Option*> backoff_opts;  // --backoff, --backoff-base, --backoff-cap: none given, fitted from the log
  int inner_retries = -1;  // --inner-retries; -1: read from the log
  std::string accept;      // --accept KIND=WORD,...
  std::string require;  // --require: thresholds for CI
  double wait_tolerance = 0.5;
  ClientTiming timing;
  CLI::Option* n_opt = nullptr;
  int fallback_after = 0;  // --fallback-after; a fallback plan's own K unless given
  CLI::Option* fallback_opt = nullptr;
};

// --n, else the plan header's "n".
std::int64_t calls_per_task(const AuditArgs& a, const Plan& plan) {
  if (a.n_opt->count()) return a.n;
  const auto it = plan.header.find("n");
  if (it == plan.header.end())
    throw InputError(a.plan.empty() ? fmt::format("{}: a chain-mode log does not know the calls per task: give --n", a.log)
                                    : fmt::format("{}: the plan's header has no n: give --n", a.plan));
  if (!it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > kMaxCalls)
    throw InputError(fmt::format("{}: header field \"n\" = {} is not an integer in [1, {}]", a.plan, json_excerpt(*it),
                                 kMaxCalls));
  return it->get<std::int64_t>();
}

// Without --plan: a chain-mode log's plan, each task's list as long as any
// policy audited can send (the most --infer tries, or --policy's).
Plan plan_of_log(const AuditArgs& a, const RequestLog& log) {
  if (!log.header.contains("chain"))
    throw InputError(fmt::format("{}: give --plan: only a log of relsim proxy in chain mode (--p) names the chain its "
                                 "faults came from",
                                 a.log));
  if (!a.n_opt->count())
    throw InputError(fmt::format("{}: a chain-mode log does not know the calls per task: give --n", a.log));
  std::int64_t per_call = std::int64_t{kInferMax + 1} * (kInferMax + 1);
  if (!a.infer) {
    const Policy policy{a.n, a.r, a.s, a.B, parse_policy_kind(a.policy_kind)};
    validate(policy);  // before its request count is computed from --s and --r
    per_call = std::max(1, policy.max_requests_per_call());
  }
  const std::int64_t n = std::clamp<std::int64_t>(a.n, 1, kMaxChainPlanRequests);
  return *plan_of_chain_log(log, std::min(n, kMaxChainPlanRequests / per_call) * per_call);
}

int run_audit_command(const AuditArgs& a) {
  if (a.policy_kind.empty() && !a.infer)
    throw InputError("audit needs a policy to check against: give --policy P (with --s, --r, --B) or --infer");
  AuditOptions options;
  options.timing = a.timing;
  options.wait_tolerance = a.wait_tolerance;
  options.check_waits = !a.no_wait_check;
  if (!a.accept.empty()) options.accept = parse_acceptance(a.accept);
  if (!a.backoff.empty()) options.timing.backoff_schedule = parse_backoff(a.backoff);
  const bool fit_backoff =
      std::none_of(a.backoff_opts.begin(), a.backoff_opts.end(), [](const CLI::Option* o) { return o->count() > 0; });
  validate(options.timing);
  const RequestLog log = read_request_log(a.log);
  const Plan plan = a.plan.empty() ? plan_of_log(a, log) : read_plan(a.plan);
  const std::string plan_name = a.plan.empty() ? "the chain of its header" : a.plan;
  check_auditable(plan, plan_name);
  const std::int64_t n = calls_per_task(a, plan);
  if (!a.infer) {
    options.policy = Policy{n, a.r, a.s, a.B, parse_policy_kind(a.policy_kind)};
    validate(options);
  }
  std::vector<OutcomeReport> overrides;
  if (!a.outcomes.empty()) overrides = read_outcome_csv(a.outcomes);
  Observations obs = observe(plan, log, a.outcomes.empty() ? nullptr : &overrides, n, a.outcomes);
  if (a.no_retry_header) read_retry_header(obs, RetryHeaderMode::off);
  else if (a.inner_retries >= 0) read_retry_header(obs, RetryHeaderMode::given, a.inner_retries);
  AuditReport report{plan_name, a.log, &obs, nullptr, std::nullopt, std::nullopt, false, std::nullopt};
  // Two providers: every check runs over the entries the client met on the
  // paths it took (routed_plan); the provider check compares the paths.
  report.two_providers = plan_fallback_after(plan) > 0;
  if (a.fallback_opt->count() && !report.two_providers)
    throw InputError(fmt::format("--fallback-after: {} has no fallback column: a client's two providers are audited "
                                 "over a plan made with relsim plan --fallback-after",
                                 plan_name));
  // --infer routes by the paths alone (the entries past a task's requests do not matter to its search).
  options.fallback_after = a.fallback_opt->count() ? a.fallback_after : a.infer ? 0 : plan_fallback_after(plan);
  const auto route = [&] {
    return report.two_providers ? routed_plan(plan, obs, options.policy, options.accept, options.fallback_after) : plan;
  };
  Plan audited = route();
  if (a.infer) {
    report.infer = infer_policy(audited, obs, n, options.accept);
    choose_headline(audited, obs, options, *report.infer, fit_backoff);
    options.policy = report.infer->consistent.empty() ? report.infer->closest.front()
                                                      : report.infer->consistent[report.infer->headline];
    if (report.two_providers) {
      // The fallback after the policy: no fallback when that explains the paths, else the smallest K that does.
      report.fallbacks = infer_fallback(audited, obs, options.policy, options.accept);
      if (!report.fallbacks->empty()) options.fallback_after = report.fallbacks->front();
      audited = route();
    }
  }
  if (options.check_waits) {
    report.waits = fit_waits(audited, obs, options, fit_backoff);
    options = with_waits(options, *report.waits);
  }
  const AuditResult result = run_audit(audited, obs, options);
  report.result = &result;
  // The file first: a failure to write it is bad input with nothing printed.
  if (!a.out.empty()) write_file_atomically(a.out, audit_csv(report));
  if (a.json) {
    Json j = audit_json(report);
    if (a.per_task) j["per_task"] = audit_per_task_json(report);
    out() << dump_json(j) << "\n";
  } else {
    out() << audit_summary(report);
    if (a.per_task) out() << audit_per_task(report);
  }
  const int verdict = require_verdict(a.require, kAuditMetrics, audit_measured(report));
  return result.mismatches > 0 ? kExitMiss : verdict;
}

}  // namespace

Runner add_audit(CLI::App& app) {
  auto a = std::make_shared<AuditArgs>();
  auto* cmd = app.add_subcommand(
      "audit", "check what any client did (relsim serve --plan --log) against a policy, task by task; exit 1 on any "
               "mismatch");
  cmd->add_option("--plan", a->plan,
                  "the plan the server served (relsim plan --max-requests K), b = g = 0; not for a log of relsim proxy "
                  "in chain mode, whose plan is drawn again from its chain");
  cmd->add_option("--log", a->log, "the request log (relsim serve --log FILE, JSON Lines)")->required();
  cmd->add_option("--outcomes", a->outcomes,
                  "CSV task,outcome,detail: reported outcomes that replace the log's (the last per task counts)");
  auto* policy = cmd->add_option("--policy", a->policy_kind, "the policy to check against: simple, naive, layered or "
                                                              "budgeted (docs/policies.md)");
  auto* s = cmd->add_option("--s", a->s, fmt::format("HTTP-layer (SDK) retries, in [0, {}]", kMaxHttpRetries))
                ->capture_default_str();
  auto* r = cmd->add_option("--r", a->r, fmt::format("stream-layer retries per call, in [0, {}]", kMaxRetries))
                ->capture_default_str();
  auto* B = cmd->add_option("--B", a->B, fmt::format("budgeted: requests per call, in [1, {}]", kMaxRequestsPerCall));
  cmd->add_flag("--infer", a->infer,
                fmt::format("search simple, naive, layered and budgeted over s, r in [0, {}] and B in [1, (s+1)(r+1)-1] "
                            "for every set consistent with all tasks (else the closest), and audit against the one "
                            "the headline names: {}",
                            kInferMax, kHeadlineRule))
      ->excludes(policy)
      ->excludes(s)
      ->excludes(r)
      ->excludes(B);
  a->n_opt = cmd->add_option("--n", a->n, fmt::format("model calls per task, in [1, {}]; default: the plan's", kMaxCalls));
  a->fallback_opt = cmd->add_option(
      "--fallback-after", a->fallback_after,
      fmt::format("a plan with two providers (relsim plan --fallback-after): the policy sends a call's requests from "
                  "the K+1-th on to the second, in [0, {}] (0: no fallback); default: the plan's K, or with --infer "
                  "the K that explains the paths",
                  kMaxRequestsPerCall));
  refuse_with(a->fallback_opt, cmd->get_option("--infer"),
              "--fallback-after and --infer both given: --infer finds the fallback that explains the paths");
  cmd->add_flag("--json", a->json, "print one JSON object (docs/audit.md) instead of the summary");
  add_require_option(*cmd, a->require, kAuditMetrics);
  cmd->add_flag("--per-task", a->per_task,
                "after the summary, one row per audited task; with --json, the key \"per_task\" (the --out CSV's rows)");
  cmd->add_option("--out", a->out, "write one CSV row per audited task to this file (written atomically)");
  auto* backoff = cmd->add_option("--backoff", a->backoff,
                                  "check the waits against this schedule instead of fitting one from the log: sdk, "
                                  "exp:BASE,CAP,JITTER, list:W1,W2,... or none (docs/audit.md, Waits)");
  check_value<std::string>(backoff, [](const std::string& text) { parse_backoff(text); });
  auto* base = cmd->add_option("--backoff-base", a->timing.backoff_schedule.base,
                               "check against min(base 2^k, cap) (1 - U/4) seconds instead of fitting; base >= 0");
  auto* cap = cmd->add_option("--backoff-cap", a->timing.backoff_schedule.cap,
                              "with --backoff-base: the largest backoff, seconds, >= 0 (default 8)");
  for (CLI::Option* o : {base, cap}) refuse_with(backoff, o, "--backoff and --backoff-base/--backoff-cap both given: choose one");
  a->backoff_opts = {backoff, base, cap};
  cmd->add_option("--time-scale", a->timing.time_scale, "multiplies every backoff, > 0")->capture_default_str();
  cmd->add_option("--wait-tolerance", a->wait_tolerance,
                  "seconds a wait may exceed its backoff w (accepted: [(1 - jitter) w - 0.05, w + tolerance]), >= 0")
      ->capture_default_str();
  cmd->add_flag("--no-wait-check", a->no_wait_check, "do not check the waits between retries");
  auto* inner = cmd->add_option("--inner-retries", a->inner_retries,
                                fmt::format("the SDK's own maxRetries inside the retry layer audited (a framework "
                                            "retrying around the SDK): x-stainless-retry-count runs 0..S in each "
                                            "attempt; S in [0, {}]; default: the largest count in the log",
                                            kMaxHttpRetries));
  auto* no_header = cmd->add_flag("--no-retry-header", a->no_retry_header,
                                  "do not check x-stainless-retry-count at all");
  check_value<int>(inner, [](int s) {
    if (s < 0 || s > kMaxHttpRetries)
      throw InputError(fmt::format("--inner-retries = {} is out of range: it must be in [0, {}]", s, kMaxHttpRetries));
  });
  refuse_with(no_header, inner, "--no-retry-header and --inner-retries both given: choose one");
  check_value<std::string>(cmd->add_option("--accept", a->accept,
                                           "findings to accept, KIND=WORD,...: the client takes that fault kind as "
                                           "done, or ends the task there with the word (crash, hang, env_error), in "
                                           "place of what the policy does (docs/audit.md, Findings); e.g. "
                                           "no_stop=done,stall=hang"),
                           [](const std::string& text) { parse_acceptance(text); });
  return [a] { return run_audit_command(*a); };
}

}  // namespace relsim::cli
