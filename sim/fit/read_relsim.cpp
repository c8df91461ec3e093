// relsim's own files (records.hpp): the request log of `relsim serve --log`
// (docs/wire.md, read by request_log.hpp's strict reader) and `relsim plan`
// files (plan.hpp). A log request counts when it took an index and was served
// an entry: "ok" is good, a fault kind is bad with that kind. Log lines are
// written when replies end, so requests are sorted by (task, index) first.
#include <algorithm>

#include <fmt/format.h>

#include "fit/read_common.hpp"
#include "relsim/core/error.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/formats/request_log.hpp"

namespace relsim::fit {
namespace {

ReadStats from_log(const RequestLog& log, const RecordSink& sink) {
  ReadStats stats;
  stats.format = "relsim";
  std::vector<const RequestLine*> used;
  used.reserve(log.requests.size());
  for (const RequestLine& r : log.requests) {
    if (r.fallback)
      throw InputError(fmt::format("{}:{}: a request to the second provider's path (\"fallback\": true): fitting one "
                                   "chain to two providers' requests is not covered yet",
                                   log.where, r.line));
    if (r.index < 0)
      add_skip(stats, "requests refused before taking an entry (index null)");
    else if (!r.served)
      add_skip(stats, "requests that found their task's script exhausted");
    else
      used.push_back(&r);
  }
  add_skip(stats, "outcome report lines", static_cast<std::int64_t>(log.outcomes.size()));
  std::stable_sort(used.begin(), used.end(), [](const RequestLine* a, const RequestLine* b) {
    return a->task != b->task ? a->task < b->task : a->index < b->index;
  });
  Record record;
  for (const RequestLine* r : used) {
    record.task = std::to_string(r->task);
    record.order = r->index;
    record.bad = r->entry.has_value();
    record.kind = record.bad ? std::string(to_string(*r->entry)) : std::string();
    sink(record);
    ++stats.records;
  }
  return stats;
}

ReadStats from_plan(const Plan& plan, const RecordSink& sink) {
  if (plan_fallback_after(plan) > 0)
    throw InputError("the plan has a fallback to a second provider: fitting one chain to two providers' requests "
                     "is not covered yet");
  ReadStats stats;
  stats.format = "plan";
  stats.notes.push_back("a plan file: the requests a policy may send (each call's run of bad requests listed whole), "
                        "not what a client sent");
  Record record;
  for (const TaskPlan& task : plan.tasks) {
    record.task = std::to_string(task.task);
    for (std::size_t i = 0; i < task.requests.size(); ++i) {
      record.order = static_cast<std::int64_t>(i);
      record.bad = task.requests[i].has_value();
      record.kind = record.bad ? std::string(to_string(*task.requests[i])) : std::string();
      sink(record);
      ++stats.records;
    }
  }
  return stats;
}

bool plan_header_first(std::string_view text) {
  const auto start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return false;
  const auto end = std::min(text.find('\n', start), text.size());
  const Json j = Json::parse(text.begin() + static_cast<std::ptrdiff_t>(start),
                             text.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
  return !j.is_discarded() && shape_of(j) == Shape::plan;
}

}  // namespace

ReadStats read_relsim(const std::string& text, const std::string& where, const RecordSink& sink) {
  const bool plan = plan_header_first(text);
  ReadStats stats;
  try {
    stats = plan ? from_plan(parse_plan(text, where), sink) : from_log(parse_request_log(text, where), sink);
  } catch (const InputError&) {
    if (plan)
      check_mixed_lines(text, where, "relsim plan", {Shape::plan, Shape::plan_task});
    else
      check_mixed_lines(text, where, "relsim request log", {Shape::relsim_log, Shape::relsim_request});
    throw;
  }
  require_records(stats, where);
  return stats;
}

}  // namespace relsim::fit
