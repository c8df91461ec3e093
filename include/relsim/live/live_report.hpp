#pragma once
// What `relsim live` prints and writes for a plan's run (docs/model.md, Live
// check): the --json object, the table of a scripted run or the counts of a
// drawn or replayed one, the oracle mismatches, and the per-task CSV (--out).
// Time mode has live_time_report.hpp.
#include <cstdint>
#include <optional>
#include <string>

#include "relsim/core/fallback.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/live/live.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim {

struct LiveReport {
  const LiveCheck* check = nullptr;
  Policy policy;
  Interval ci;                    // 95% Wilson interval of the successes over the tasks run
  std::optional<double> exact;    // a plan drawn from a model: its exact P(success)
  std::string throttle = "none";  // the client's retry throttle, as given (--throttle)
  std::uint64_t seed = 0;         // of the plan and of the client's backoff jitter
  int concurrency = 0;            // tasks in flight at once
  std::string fault, times;       // a scripted run (--fault, --times); fault empty otherwise
  bool timeline = false;          // --timeline: the JSON adds "timeline" (needs check->logs)
  Dialect dialect = Dialect::anthropic;  // the API the client spoke (--dialect)
  // A fallback to a second provider: as the plan's header gives it
  // ("fallback", plan_gen.hpp); null without.
  Json fallback;
};

// The report of `check` under `policy`: its interval and, for a plan drawn
// from `model` with fault weights `kinds` (and `fallback`, a second
// provider), the exact value that interval should cover; the givens
// (throttle, seed, the fallback's JSON ...) are left for the caller.
LiveReport live_report(const LiveCheck& check, const Policy& policy, const std::optional<Model>& model,
                       const FaultWeights& kinds, const std::optional<Fallback>& fallback = std::nullopt);

// {"policy", "n", "r", "s", "tasks", "successes", "ci_low", "ci_high",
// "exact" (null unless drawn from a model), "outcomes", "requests", "wrong",
// "mismatches", "mismatched_tasks", "wall_seconds", "throttle", "throttled",
// "seed"}, and "timeline" (live_timeline_json) with report.timeline; with
// a fallback, "fallback" (report.fallback) and "fallback_requests" (live),
// and each mismatched task's "oracle_fallback_requests" and
// "live_fallback_requests".
Json live_json(const LiveReport& report);

// A scripted run: every task, live against the oracle. Otherwise the counts
// and the interval against the exact value.
std::string live_table(const LiveReport& report);

// One "relsim live: MISMATCH ..." line per task whose live run differs from
// the oracle's (for stderr), and the table's last line, their number.
std::string live_mismatch_lines(const LiveCheck& check);
std::string live_mismatch_count(const LiveCheck& check);

// One line per task: task,oracle_outcome,oracle_requests,live_outcome,live_requests,seconds,match
std::string live_csv(const LiveCheck& check);

}  // namespace relsim
