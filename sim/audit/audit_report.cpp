// What relsim audit prints and writes (audit_report.hpp).
#include "relsim/audit/audit_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "relsim/core/csv.hpp"

namespace relsim {
namespace {

constexpr std::size_t kFirstMismatches = 10;
constexpr std::size_t kListedCandidates = 8;

std::string checks_text(const TaskAudit& a, const char* sep) {
  std::string out;
  for (int c = 0; c < kChecks; ++c)
    if (a.failed(static_cast<Check>(c))) out += (out.empty() ? "" : sep) + std::string(to_string(static_cast<Check>(c)));
  return out;
}

std::string per_call_text(const TaskAudit& a) {
  std::string out;
  for (const std::int64_t k : a.per_call) out += fmt::format("{}{}", out.empty() ? "" : " ", k);
  return out;
}

// The failed checks' names, as --json lists them.
Json checks_json(const TaskAudit& a) {
  Json checks = Json::array();
  for (int c = 0; c < kChecks; ++c)
    if (a.failed(static_cast<Check>(c))) checks.push_back(std::string(to_string(static_cast<Check>(c))));
  return checks;
}

std::string observed_word(const TaskObservation& o) { return o.outcome ? std::string(to_string(*o.outcome)) : ""; }

std::string expected_word(const TaskAudit& a) { return a.ran_off ? "" : a.expected_outcome.name(); }

std::string candidates_text(const std::vector<Policy>& list) {
  std::string out;
  for (std::size_t i = 0; i < list.size() && i < kListedCandidates; ++i)
    out += (i ? "; " : "") + describe_candidate(list[i]);
  if (list.size() > kListedCandidates) out += fmt::format("; and {} more", list.size() - kListedCandidates);
  return out;
}

std::string policy_lines(const AuditReport& r) {
  const AuditResult& res = *r.result;
  if (!r.infer) {
    return fmt::format("  policy audited: {}: {}\n", describe_candidate(res.policy),
                       res.inconsistent == 0 ? std::string("consistent with every task's requests, outcome and retry counts")
                                             : fmt::format("inconsistent with {} task{}", res.inconsistent,
                                                           res.inconsistent == 1 ? "" : "s"));
  }
  const InferResult& in = *r.infer;
  if (r.obs->tasks.empty()) return "  no task ran: nothing to infer from\n";
  if (!in.consistent.empty()) {
    std::string out = fmt::format("  your loop behaves like {}\n", describe_candidate(in.consistent[in.headline]));
    if (in.consistent.size() > 1) {
      std::vector<Policy> others;
      for (std::size_t i = 0; i < in.consistent.size(); ++i)
        if (i != in.headline) others.push_back(in.consistent[i]);
      out += fmt::format("  also consistent ({} of {} tried): {}\n", others.size(), in.candidates,
                         candidates_text(others));
      out += fmt::format("  named by: {} ({} task{} with waits it does not explain)\n", kHeadlineRule,
                         in.wait_mismatches[in.headline], in.wait_mismatches[in.headline] == 1 ? "" : "s");
    }
    return out;
  }
  std::string out = fmt::format(
      "  no policy tried is consistent with every task ({} tried); the closest: {}, inconsistent with {} task{}\n",
      in.candidates, describe_candidate(in.closest.front()), in.closest_mismatches, in.closest_mismatches == 1 ? "" : "s");
  if (in.closest.size() > 1)
    out += fmt::format("  as close: {}\n", candidates_text({in.closest.begin() + 1, in.closest.end()}));
  return out;
}

namespace {

// A fallback plan's audit: the K audited, the K inferred, the requests per provider.
std::string fallback_lines(const AuditReport& r) {
  if (!r.two_providers) return "";
  const int after = r.result->fallback_after;
  std::string out =
      fmt::format("  two providers: {} of {} requests sent to the second; audited {}\n", r.result->second_requests,
                  r.result->sent,
                  after > 0 ? fmt::format("with a fallback after {} request{} of a call", after, after == 1 ? "" : "s")
                            : std::string("without a fallback"));
  if (r.fallbacks) out += fmt::format("  your loop's fallback: {}\n", describe_fallbacks(*r.fallbacks));
  return out;
}

}  // namespace

// How x-stainless-retry-count was read (RetryHeaderReading).
std::string header_line(const RetryHeaderReading& h) {
  if (h.mode == RetryHeaderMode::off) return "  x-stainless-retry-count: not checked (--no-retry-header)\n";
  if (h.sent == 0) return "";
  return fmt::format("  x-stainless-retry-count: on {} request{}, at most {}; read as the SDK's own retries inside each "
                     "attempt of the layer audited ({}): expected, that layer's retry count mod {}\n",
                     h.sent, h.sent == 1 ? "" : "s", h.largest,
                     h.mode == RetryHeaderMode::given ? fmt::format("--inner-retries {}", h.inner)
                                                      : std::string("the largest count in the log"),
                     h.inner + 1);
}

Json header_json(const RetryHeaderReading& h) {
  return Json{{"checked", h.mode != RetryHeaderMode::off},
              {"source", h.mode == RetryHeaderMode::off ? "off" : h.mode == RetryHeaderMode::given ? "given" : "log"},
              {"inner_retries", h.inner >= 0 ? Json(h.inner) : Json(nullptr)},
              {"sent", h.sent},
              {"largest", h.largest >= 0 ? Json(h.largest) : Json(nullptr)}};
}

// The waits: the schedule fitted (or given) and the retry-after reading (WaitFit).
std::string wait_lines(const AuditReport& r) {
  if (!r.waits) return "  waits: not checked (--no-wait-check)\n";
  const WaitFit& w = *r.waits;
  const BackoffFit& b = w.best;
  std::string out = fmt::format(
      "  waits: {} retr{}; {} {} (--backoff {}{}): {} inside its windows, {} outside\n", w.retries,
      w.retries == 1 ? "y" : "ies", w.fitted ? "fitted backoff" : "the backoff given,", describe_backoff(b.backoff),
      to_string(b.backoff), w.fitted ? fmt::format(", {} parameter{}", b.parameters, b.parameters == 1 ? "" : "s") : "",
      b.explained, w.outside);
  const RetryAfterReading& ra = w.retry_after;
  if (ra.retries == 0) return out;
  const RetryAfterSent& sent = r.obs->retry_after;
  const auto said = [](std::optional<double> s) { return s ? fmt::format("{:g} s", *s) : std::string("not sent"); };
  out += fmt::format("  retry-after: {} retr{} of a 429 (retry-after {}, retry-after-ms {}); waits likeliest under the "
                     "backoff {}, retry-after {}, retry-after-ms {}: the client waits {}{}\n",
                     ra.retries, ra.retries == 1 ? "y" : "ies", said(sent.retry_after), said(sent.retry_after_ms),
                     ra.backoff, ra.retry_after, ra.retry_after_ms,
                     ra.use == RetryAfterUse::backoff ? "its backoff" : to_string(ra.use),
                     ra.told_apart ? "" : " (no wait tells them apart)");
  return out;
}

Json waits_json(const AuditReport& r) {
  if (!r.waits) return Json{{"checked", false}};
  const WaitFit& w = *r.waits;
  const RetryAfterReading& ra = w.retry_after;
  const RetryAfterSent& sent = r.obs->retry_after;
  const auto seconds = [](std::optional<double> s) { return s ? Json(*s) : Json(nullptr); };
  return Json{{"checked", true},
              {"fitted", w.fitted},
              {"retries", w.retries},
              {"backoff", to_string(w.best.backoff)},
              {"family", describe_backoff(w.best.backoff)},
              {"parameters", w.best.parameters},
              {"inside", w.best.explained},
              {"outside", w.outside},
              {"retry_after", Json{{"sent", Json{{"retry_after", seconds(sent.retry_after)},
                                                 {"retry_after_ms", seconds(sent.retry_after_ms)}}},
                                   {"retries_of_429", ra.retries},
                                   {"likeliest", Json{{"backoff", ra.backoff},
                                                   {"retry_after", ra.retry_after},
                                                   {"retry_after_ms", ra.retry_after_ms}}},
                                   {"use", std::string(to_string(ra.use))},
                                   {"told_apart", ra.told_apart}}}};
}

std::string counts_text(const std::array<std::int64_t, kOutcomes>& counts) {
  std::string out;
  for (int o = 0; o < kOutcomes; ++o)
    if (counts[static_cast<std::size_t>(o)] > 0)
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", to_string(static_cast<Outcome>(o)),
                         counts[static_cast<std::size_t>(o)]);
  return out.empty() ? "none" : out;
}

std::string request_lines(const AuditReport& r) {
  const AuditResult& res = *r.result;
  const Policy& p = res.policy;
  const auto amp = res.amplification();
  std::string out = fmt::format("  requests: {} sent, {} expected; layered with s = {}, r = {} sends {}: amplification {}\n",
                                res.sent, res.expected, p.kind == PolicyKind::simple ? 0 : p.s, p.r, res.layered,
                                amp ? fmt::format("{:.3f}", *amp) : std::string("n/a"));
  std::string calls;
  for (const auto& [k, count] : res.per_call) calls += fmt::format("{}{}: {}", calls.empty() ? "" : ", ", k, count);
  if (!calls.empty())
    out += fmt::format("  calls by requests sent: {} (most {})\n", calls, res.per_call.rbegin()->first);
  return out;
}

std::string mismatch_lines(const AuditReport& r) {
  const AuditResult& res = *r.result;
  std::string out = fmt::format("  mismatches: {} task{}\n", res.mismatches, res.mismatches == 1 ? "" : "s");
  if (res.mismatches == 0) return out;
  std::string checks, kinds;
  for (int c = 0; c < kChecks; ++c)
    if (res.by_check[static_cast<std::size_t>(c)] > 0)
      checks += fmt::format("{}{} {}", checks.empty() ? "" : ", ", to_string(static_cast<Check>(c)),
                            res.by_check[static_cast<std::size_t>(c)]);
  for (const auto& [kind, count] : res.by_kind) kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", kind, count);
  out += fmt::format("    by check: {}\n    by fault kind: {}\n", checks, kinds);
  out += "  findings (what the mismatches mean; --accept KIND=WORD takes one as the client's rule):\n";
  for (const auto& [finding, count] : res.by_finding) out += fmt::format("    {:>5}  {}\n", count, finding);
  std::size_t shown = 0;
  for (const TaskAudit& a : res.tasks) {
    if (a.checks == 0) continue;
    if (shown++ == kFirstMismatches) break;
    out += fmt::format("    task {}: {}: {}\n", a.task, checks_text(a, ", "), a.detail);
  }
  if (res.mismatches > static_cast<std::int64_t>(kFirstMismatches))
    out += fmt::format("    ... {} more (--per-task or --out lists every task)\n",
                       res.mismatches - static_cast<std::int64_t>(kFirstMismatches));
  return out;
}

Json outcome_counts(const std::array<std::int64_t, kOutcomes>& counts) {
  Json j = Json::object();
  for (int o = 0; o < kOutcomes; ++o)
    if (counts[static_cast<std::size_t>(o)] > 0)
      j[std::string(to_string(static_cast<Outcome>(o)))] = counts[static_cast<std::size_t>(o)];
  return j;
}

Json mismatches_json(const AuditReport& r) {
  const AuditResult& res = *r.result;
  Json by_check = Json::object(), by_kind = Json::object(), first = Json::array();
  for (int c = 0; c < kChecks; ++c)
    by_check[std::string(to_string(static_cast<Check>(c)))] = res.by_check[static_cast<std::size_t>(c)];
  for (const auto& [kind, count] : res.by_kind) by_kind[kind] = count;
  for (std::size_t i = 0; i < res.tasks.size() && first.size() < kFirstMismatches; ++i) {
    const TaskAudit& a = res.tasks[i];
    if (a.checks == 0) continue;
    first.push_back(Json{{"task", a.task},
                         {"checks", checks_json(a)},
                         {"requests_expected", a.expected},
                         {"requests_sent", r.obs->tasks[i].sent},
                         {"outcome_expected", expected_word(a)},
                         {"outcome_reported", observed_word(r.obs->tasks[i])},
                         {"detail", a.detail},
                         {"finding", a.finding}});
  }
  Json findings = Json::array();
  for (const auto& [finding, count] : res.by_finding) findings.push_back(Json{{"finding", finding}, {"tasks", count}});
  return Json{{"total", res.mismatches}, {"inconsistent", res.inconsistent}, {"by_check", by_check},
              {"by_kind", by_kind},       {"findings", findings},          {"first", first}};
}

}  // namespace

Json policy_json(const Policy& p) {
  return Json{{"policy", std::string(to_string(p.kind))},
              {"s", p.kind == PolicyKind::simple ? Json() : Json(p.s)},
              {"r", p.r},
              {"B", p.kind == PolicyKind::budgeted ? Json(p.B) : Json()}};
}

std::string audit_summary(const AuditReport& r) {
  const AuditResult& res = *r.result;
  const Observations& obs = *r.obs;
  std::string out = fmt::format("relsim audit: {} against {} ({} tasks, n = {} calls)\n", r.log_path, r.plan_path,
                                obs.plan_tasks, res.policy.n);
  out += policy_lines(r) + fallback_lines(r) + header_line(obs.header) + wait_lines(r);
  if (const std::string accepted = to_string(res.accept); !accepted.empty())
    out += fmt::format("  accepted as the client's rules (--accept): {}\n", accepted);
  out += fmt::format("  tasks: {} audited, {} not run, {} with no outcome to check\n", obs.tasks.size(), obs.not_run,
                     res.no_outcome);
  out += request_lines(r);
  out += fmt::format("  hangs {}, crashes {}\n", res.hangs, res.crashes);
  out += fmt::format("  outcomes reported: {}\n  outcomes expected: {}\n", counts_text(res.observed_outcomes),
                     counts_text(res.expected_outcomes));
  return out + mismatch_lines(r);
}

std::string audit_per_task(const AuditReport& r) {
  std::string out = fmt::format("  {:>7} {:>8} {:>5}  {:<24} {:<13} {:<8} {:<12} {}\n", "task", "expected", "sent",
                                "outcome expected", "reported", "verdict", "per call", "checks: detail");
  const AuditResult& res = *r.result;
  for (std::size_t i = 0; i < res.tasks.size(); ++i) {
    const TaskAudit& a = res.tasks[i];
    const TaskObservation& o = r.obs->tasks[i];
    std::string row = fmt::format("  {:>7} {:>8} {:>5}  {:<24} {:<13} {:<8} {:<12} {}", a.task, a.expected, o.sent,
                                  a.ran_off ? "(plan ends)" : a.expected_outcome.name(),
                                  o.outcome ? observed_word(o) : std::string("-"), a.checks ? "mismatch" : "ok",
                                  per_call_text(a), a.checks ? checks_text(a, ",") + ": " + a.detail : "");
    out += row.erase(row.find_last_not_of(' ') + 1) + "\n";
  }
  return out;
}

namespace {

// null without a fallback plan; else {"after": K audited (0: none),
// "second_requests", "candidates": the K that explain the paths (--infer;
// 0 is no fallback), "described"}.
Json fallback_json(const AuditReport& r) {
  if (!r.two_providers) return nullptr;
  Json j{{"after", r.result->fallback_after}, {"second_requests", r.result->second_requests}};
  j["candidates"] = r.fallbacks ? Json(*r.fallbacks) : Json(nullptr);
  j["described"] = r.fallbacks ? Json(describe_fallbacks(*r.fallbacks)) : Json(nullptr);
  return j;
}

}  // namespace

Json audit_json(const AuditReport& r) {
  const AuditResult& res = *r.result;
  const Observations& obs = *r.obs;
  Json consistent = Json::array(), closest = Json::array();
  if (r.infer) {
    for (std::size_t i = 0; i < r.infer->consistent.size(); ++i) {
      Json p = policy_json(r.infer->consistent[i]);
      p["wait_mismatches"] = r.infer->wait_mismatches[i];
      p["headline"] = i == r.infer->headline;
      consistent.push_back(p);
    }
    for (const Policy& p : r.infer->closest) {
      Json c = policy_json(p);
      c["inconsistent"] = r.infer->closest_mismatches;
      closest.push_back(c);
    }
  } else if (res.inconsistent == 0) {
    consistent.push_back(policy_json(res.policy));
  }
  std::int64_t exhausted = 0;
  for (const TaskObservation& o : obs.tasks) exhausted += o.exhausted;
  Json per_call = Json::object();
  for (const auto& [k, count] : res.per_call) per_call[std::to_string(k)] = count;
  const auto amp = res.amplification();
  return Json{
      {"tasks", Json{{"audited", obs.tasks.size()}, {"not_run", obs.not_run}, {"no_outcome", res.no_outcome}}},
      {"mismatches", mismatches_json(r)},
      {"policy", policy_json(res.policy)},
      {"consistent", consistent},
      {"closest", closest},
      {"headline_rule", r.infer ? Json(kHeadlineRule) : Json(nullptr)},
      {"retry_header", header_json(obs.header)},
      {"waits", waits_json(r)},
      {"accepted", to_string(res.accept)},
      {"fallback", fallback_json(r)},
      {"amplification", amp ? Json(*amp) : Json()},
      {"hangs", res.hangs},
      {"outcomes", Json{{"expected", outcome_counts(res.expected_outcomes)},
                        {"reported", outcome_counts(res.observed_outcomes)}}},
      {"requests", Json{{"sent", res.sent},
                        {"expected", res.expected},
                        {"layered", res.layered},
                        {"exhausted", exhausted},
                        {"refused", obs.refused},
                        {"per_call_max", res.per_call.empty() ? 0 : res.per_call.rbegin()->first},
                        {"per_call", per_call}}}};
}

Json audit_per_task_json(const AuditReport& r) {
  Json rows = Json::array();
  const AuditResult& res = *r.result;
  for (std::size_t i = 0; i < res.tasks.size(); ++i) {
    const TaskAudit& a = res.tasks[i];
    const TaskObservation& o = r.obs->tasks[i];
    rows.push_back(Json{{"task", a.task},
                        {"requests_expected", a.expected},
                        {"requests_sent", o.sent},
                        {"outcome_expected", expected_word(a)},
                        {"outcome_reported", observed_word(o)},
                        {"hang", o.outcome == Outcome::hang},
                        {"verdict", a.checks ? "mismatch" : "ok"},
                        {"checks", checks_json(a)},
                        {"requests_per_call", a.per_call},
                        {"detail", a.detail}});
  }
  return rows;
}

std::string audit_csv(const AuditReport& r) {
  std::string out =
      "task,requests_expected,requests_sent,outcome_expected,outcome_reported,hang,verdict,checks,requests_per_call,"
      "detail\n";
  const AuditResult& res = *r.result;
  for (std::size_t i = 0; i < res.tasks.size(); ++i) {
    const TaskAudit& a = res.tasks[i];
    const TaskObservation& o = r.obs->tasks[i];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", a.task, a.expected, o.sent, expected_word(a), observed_word(o),
                       o.outcome == Outcome::hang ? 1 : 0, a.checks ? "mismatch" : "ok", checks_text(a, " "),
                       per_call_text(a), csv_field(a.detail));
  }
  return out;
}

const std::vector<std::string> kAuditMetrics = {"success", "mismatches", "requests_per_task", "amplification",
                                                "hangs",   "crashes"};

Measured audit_measured(const AuditReport& report) {
  const AuditResult& r = *report.result;
  Measured m;
  const double tasks = static_cast<double>(r.tasks.size());
  if (tasks > 0) {
    m.values["success"] = static_cast<double>(r.observed_outcomes[static_cast<std::size_t>(Outcome::done)]) / tasks;
    m.values["requests_per_task"] = static_cast<double>(r.sent) / tasks;
  } else {
    m.missing["success"] = m.missing["requests_per_task"] = "no task was audited";
  }
  m.values["mismatches"] = static_cast<double>(r.mismatches);
  m.values["hangs"] = static_cast<double>(r.hangs);
  m.values["crashes"] = static_cast<double>(r.crashes);
  if (const std::optional<double> a = r.amplification()) m.values["amplification"] = *a;
  else m.missing["amplification"] = "no request a layered client would send";
  return m;
}

}  // namespace relsim
