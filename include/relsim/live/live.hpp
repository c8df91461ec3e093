#pragma once
// The live check (docs/model.md, Live check): draw the plan, ask the oracle, run every
// task for real against the embedded mock server with the retrying client,
// and compare each task's outcome and request count with the oracle's.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/client/client.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"

namespace relsim {

// Timeouts short enough for loopback runs: 200 ms for headers and between
// events, backoff scaled by 0.01, a 2 s task deadline (what a naive stall waits).
ClientTiming live_timing();

struct LiveCheck {
  std::vector<Prediction> oracle;  // per task
  std::vector<LiveTask> live;      // per task
  std::vector<std::int64_t> mismatches;  // tasks whose live outcome or request count differ from the oracle's
  std::map<std::string, std::int64_t> outcomes;  // live outcome name -> tasks
  std::int64_t successes = 0, requests = 0, wrong = 0;
  std::int64_t throttled = 0;  // live tasks a throttle ended (the oracle's are in `oracle`)
  std::int64_t fallback_requests = 0;  // live requests sent to the second provider
  double wall_seconds = 0.0;  // the live part: server up to last task done
  // With LiveOptions::keep_logs: the server's log of each task (requests as
  // it saw them, in order, with their retry-count header and times), after
  // the server stopped; empty otherwise.
  std::vector<TaskLog> logs;
};

struct LiveOptions {
  Dialect dialect = Dialect::anthropic;  // the API the client speaks (ClientConfig::dialect)
  int concurrency = 32;
  int client_threads = 1;
  int server_threads = 1;
  std::uint64_t jitter_seed = 0;  // of the client's backoff jitter
  bool coordinated_start = false;  // true: waves released together (ClientConfig)
  bool keep_logs = false;          // keep the server's per-task logs in LiveCheck::logs
  // A retry throttle in the client (ClientConfig::throttle), predicted by the
  // oracle over the tasks in plan order: needs concurrency 1, where the
  // order of the answers, and so every decision of the throttle, is the plan's.
  Throttle throttle;
  // A fallback (ClientConfig::fallback_after) over a plan with a fallback
  // column: the client sends a call's later requests to the second
  // provider's path, the oracle reads them from that column, and a task
  // whose split between the two differs is a mismatch. 0: none.
  int fallback_after = 0;
};

// Runs every task of `plan` live under `policy`. Throws InputError for bad
// options or a plan the policy outruns.
LiveCheck run_live_check(const Plan& plan, const Policy& policy, const ClientTiming& timing,
                         const LiveOptions& options);

}  // namespace relsim
