// relsim live --timeline (live_timeline.hpp).
#include "relsim/live/live_timeline.hpp"

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/server/server.hpp"

namespace relsim {
namespace {

// The x-stainless-retry-count a request carried, when it is a number.
std::optional<int> retry_count(const LoggedRequest& request) {
  const std::optional<std::string> value = request.header("x-stainless-retry-count");
  return value ? parse_number<int>(*value) : std::nullopt;
}

// Whether the client got no whole answer from a request. Read from the
// server's log, the same record as the rows, rather than from the client's
// LiveTask::seen: the two agree request by request whenever the live run
// agrees with the oracle (the check compares their counts), and the log
// needs no alignment with the client's list when they do not. A request
// fails unless it was served "ok" with a 200 and ended complete.
bool failed(const LoggedRequest& request) {
  const bool ok = request.entry && request.entry->reply == Reply::ok;
  return !(ok && request.status == 200 && request.end == "complete");
}

Json task_rows(const LiveCheck& check) {
  Json tasks = Json::array();
  for (std::size_t i = 0; i < check.live.size(); ++i) {
    const LiveTask& live = check.live[i];
    const Prediction& oracle = check.oracle[i];
    tasks.push_back(Json{{"task", live.task},
                         {"oracle", oracle.outcome.name()},
                         {"oracle_requests", oracle.requests},
                         {"oracle_max_wait_seconds", oracle.max_wait_seconds},
                         {"live", live.outcome.name()},
                         {"live_requests", live.requests},
                         {"seconds", live.seconds},
                         {"error", live.error}});
  }
  return tasks;
}

Json request_rows(const LiveCheck& check) {
  Json rows = Json::array();
  for (const TaskLog& log : check.logs) {
    for (std::size_t k = 0; k < log.requests.size(); ++k) {
      const LoggedRequest& r = log.requests[k];
      const std::optional<int> count = retry_count(r);
      rows.push_back(Json{{"task", log.task},
                          {"request", k},
                          {"start_ms", r.received_ms},
                          {"end_ms", r.finished_ms ? Json(*r.finished_ms) : Json()},
                          {"reply", r.entry ? Json(entry_name(*r.entry)) : Json()},
                          {"status", r.status},
                          {"end", r.end},
                          {"retry_count", count ? Json(*count) : Json()},
                          {"layer", std::string(request_layer(k, count, k > 0 && failed(log.requests[k - 1])))}});
    }
  }
  return rows;
}

}  // namespace

std::string_view request_layer(std::size_t request, std::optional<int> retry_count, bool previous_failed) {
  if (request == 0) return "first";
  if (retry_count.value_or(0) > 0) return "http";
  return previous_failed ? "stream" : "call";
}

Json live_timeline_json(const LiveCheck& check) {
  RELSIM_ASSERT(check.logs.size() == check.live.size());
  return Json{{"tasks", task_rows(check)}, {"requests", request_rows(check)}};
}

}  // namespace relsim
