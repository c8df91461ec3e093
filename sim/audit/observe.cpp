// What the log says about each task, once (audit.hpp, observe): the plan, the
// request log and the reported outcomes joined, and checked to belong together.
#include <algorithm>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/audit/audit.hpp"

namespace relsim {
namespace {

std::string entry_name(const RequestLine& r) {
  return r.exhausted ? "(script exhausted)" : plan_name(r.entry);
}

// Every indexed request was served the plan's entry at its task and index,
// checked in log order so the error names the first line from another plan.
void check_same_plan(const Plan& plan, const RequestLog& log) {
  const auto tasks = static_cast<std::int64_t>(plan.tasks.size());
  if (const auto pt = log.header.find("plan_tasks"); pt != log.header.end() && pt->is_number_integer() &&
                                                     pt->get<std::int64_t>() != tasks)
    throw InputError(fmt::format("{}: the log is from another plan: its header has plan_tasks = {}, the plan has {}",
                                 log.where, pt->get<std::int64_t>(), tasks));
  for (const RequestLine& r : log.requests) {
    const std::string at = fmt::format("{}:{}: the log is from another plan: task {}", log.where, r.line, r.task);
    // With or without an index (without: the server had no column for it and answered 404).
    if (r.fallback && r.task < tasks && plan.tasks[static_cast<std::size_t>(r.task)].fallback.empty())
      throw InputError(fmt::format("{}: a request went to the second provider's path, and the plan has no fallback "
                                   "column",
                                   at));
    if (r.index < 0) continue;
    if (r.task >= tasks) throw InputError(fmt::format("{} is not in the plan ({} tasks)", at, tasks));
    const TaskPlan& task = plan.tasks[static_cast<std::size_t>(r.task)];
    const auto& script = r.fallback ? task.fallback : task.requests;
    const auto length = static_cast<std::int64_t>(script.size());
    if (r.exhausted && r.index < length)
      throw InputError(fmt::format("{}: request {} found the script exhausted, the plan holds {} requests", at,
                                   r.index, length));
    if (!r.exhausted && (r.index >= length || r.entry != script[static_cast<std::size_t>(r.index)]))
      throw InputError(fmt::format("{}: request {} was served '{}', the plan has {}", at, r.index, entry_name(r),
                                   r.index < length ? fmt::format("'{}'", plan_name(script[static_cast<std::size_t>(r.index)]))
                                                    : fmt::format("only {} requests", length)));
  }
}

// The last report of each task: the log's, then the overrides'.
std::vector<const OutcomeReport*> last_reports(const RequestLog& log, const std::vector<OutcomeReport>* overrides,
                                               std::int64_t tasks, const std::string& outcomes_where) {
  std::vector<const OutcomeReport*> last(static_cast<std::size_t>(tasks), nullptr);
  for (const OutcomeReport& o : log.outcomes) {
    if (o.task >= tasks)
      throw InputError(fmt::format("{}:{}: the log is from another plan: an outcome for task {}, not in the plan ({} "
                                   "tasks)",
                                   log.where, o.line, o.task, tasks));
    last[static_cast<std::size_t>(o.task)] = &o;
  }
  if (overrides) {
    for (const OutcomeReport& o : *overrides) {
      if (o.task >= tasks)
        throw InputError(fmt::format("{}:{}: an outcome for task {}, which is not in the plan (tasks 0 to {})",
                                     outcomes_where, o.line, o.task, tasks - 1));
      last[static_cast<std::size_t>(o.task)] = &o;
    }
  }
  return last;
}

int retry_count_value(const std::optional<std::string>& text) {
  if (!text) return kRetryCountAbsent;
  const auto v = parse_number<int>(*text);
  return v && *v >= 0 ? *v : kRetryCountInvalid;
}

// One task's requests (sorted by index, checked to be 0, 1, 2 ...) and report.
TaskObservation observe_task(std::int64_t task, const std::vector<const RequestLine*>& requests,
                             const OutcomeReport* report, std::int64_t n, const std::string& where) {
  TaskObservation o;
  o.task = task;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const RequestLine& r = *requests[i];
    if (r.index != static_cast<std::int64_t>(i))
      throw InputError(r.index < static_cast<std::int64_t>(i)
                           ? fmt::format("{}:{}: task {}: request index {} appears twice", where, r.line, task, r.index)
                           : fmt::format("{}: task {}: request index {} is missing from the log", where, task, i));
    ++o.sent;
    if (r.exhausted) ++o.exhausted;
    else if (!r.entry) ++o.good;
    o.retry_count.push_back(retry_count_value(r.retry_count));
    o.received_ms.push_back(r.received_ms);
    o.finished_ms.push_back(r.finished_ms);
    if (r.dialect == Dialect::openai) o.dialect = Dialect::openai;
    o.fallback.push_back(r.fallback);
    if (r.upstream_failed && o.upstream_failed.empty())
      o.upstream_failed = fmt::format("request {}: {}", r.index, *r.upstream_failed);
  }
  // A hang: the last request still open at shutdown, or a stall the client
  // never got past (no retry, no report: it left only when its process did).
  const RequestLine* last = requests.empty() ? nullptr : requests.back();
  o.stopped = last && (last->end == RequestEnd::stopped ||
                       (last->end == RequestEnd::client_gone && last->served &&
                        (last->entry == FaultKind::stall || last->entry == FaultKind::stall_first)));
  if (report) {
    o.reported = report->outcome;
    o.detail = report->detail;
    o.outcome = report->outcome == Outcome::done && o.good < n ? Outcome::partial_done : report->outcome;
  } else if (o.stopped) {
    o.outcome = Outcome::hang;
  }
  return o;
}

// The log header's "retry_after" / "retry_after_ms" (strings, as sent), in
// seconds; nullopt when absent, null or not a non-negative number.
std::optional<double> header_seconds(const Json& header, const char* key, double unit) {
  const auto it = header.find(key);
  if (it == header.end() || !it->is_string()) return std::nullopt;
  const auto v = parse_number<double>(it->get<std::string>());
  if (!v || !(*v >= 0.0)) return std::nullopt;
  return *v * unit;
}

}  // namespace

int expected_retry_header(int http, int inner) { return inner < 0 ? http : http % (inner + 1); }

void read_retry_header(Observations& obs, RetryHeaderMode mode, int inner) {
  RetryHeaderReading& h = obs.header;
  h = RetryHeaderReading{};
  h.mode = mode;
  for (TaskObservation& t : obs.tasks)
    for (int& rc : t.retry_count) {
      if (rc >= 0) ++h.sent, h.largest = std::max(h.largest, rc);
      if (mode == RetryHeaderMode::off) rc = kRetryCountAbsent;
    }
  h.inner = mode == RetryHeaderMode::off ? -1 : mode == RetryHeaderMode::given ? inner : h.largest;
  for (TaskObservation& t : obs.tasks) t.inner_retries = h.inner;
}

void check_auditable(const Plan& plan, const std::string& where) {
  for (const char* key : {"b", "g"}) {
    const auto it = plan.header.find(key);
    if (it == plan.header.end()) continue;
    if (!it->is_number() || it->get<double>() != 0.0)
      throw InputError(fmt::format("{}: the plan has {} = {}: a plan served to any client needs b = g = 0 (a server "
                                   "cannot tell a retry after silent steps from the next call)",
                                   where, key, json_excerpt(*it)));
  }
}

Observations observe(const Plan& plan, const RequestLog& log, const std::vector<OutcomeReport>* overrides,
                     std::int64_t n, const std::string& outcomes_where) {
  check_auditable(plan, "the plan");
  check_same_plan(plan, log);
  Observations out;
  out.plan_tasks = static_cast<std::int64_t>(plan.tasks.size());
  out.retry_after = {header_seconds(log.header, "retry_after", 1.0), header_seconds(log.header, "retry_after_ms", 1e-3)};
  const auto reports = last_reports(log, overrides, out.plan_tasks, outcomes_where);
  std::vector<const RequestLine*> indexed;
  indexed.reserve(log.requests.size());
  for (const RequestLine& r : log.requests) {
    if (r.index < 0) ++out.refused;
    else indexed.push_back(&r);
  }
  std::stable_sort(indexed.begin(), indexed.end(), [](const RequestLine* a, const RequestLine* b) {
    return a->task != b->task ? a->task < b->task : a->index < b->index;
  });
  std::size_t at = 0;
  std::vector<const RequestLine*> mine;
  for (std::int64_t t = 0; t < out.plan_tasks; ++t) {
    mine.clear();
    while (at < indexed.size() && indexed[at]->task == t) mine.push_back(indexed[at++]);
    const OutcomeReport* report = reports[static_cast<std::size_t>(t)];
    if (mine.empty() && !report) {
      ++out.not_run;
      continue;
    }
    out.tasks.push_back(observe_task(t, mine, report, n, log.where));
  }
  read_retry_header(out, RetryHeaderMode::from_log);
  return out;
}

}  // namespace relsim
