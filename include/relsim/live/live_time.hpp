#pragma once
// The live check in seconds (docs/model.md, Live check in time mode): the
// embedded mock server in outage mode (outage.hpp), whose on/off schedule runs
// in scaled real time, the real retrying client with its backoff schedule,
// and two checks:
//   success  the share of tasks done against exact_time's success for the
//            same model, inside a Wilson interval (99.99% by default);
//   waits    every retry's wait, as the server saw it (received_ms of the
//            retry minus finished_ms of the request before), inside
//            [max (1 - jitter) - tolerance, max + tolerance] of the wait the
//            client owes there (retry_wait.hpp).
// and, as in the plan-driven check, each task's outcome and request count
// against the policy's rules (react) over the replies the server gave it.
//
// Task i starts i * spacing model seconds after the client starts, whatever
// became of the tasks before it; the schedule is stationary at every fixed
// time, so each task's first request sees the stationary state, as the exact
// engine's fresh scope assumes. Tasks far enough apart are nearly
// independent: starts `spacing` apart see states whose correlation is
// exp(-(1/t_good + 1/t_bad) spacing), e^-5 for the default spacing.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/client/client.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/core/outage.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim {

struct TimeLiveConfig {
  double t_good = 0.0, t_bad = 0.0;  // mean sojourns, model seconds
  double retry_after = 0.0;          // the server's retry-after on http_429, model seconds; 0: none
  FaultWeights kinds = FaultWeights::in_stream_uniform();
  Policy policy;
  ClientTiming timing;  // the client's backoff_schedule, think_seconds, time_scale and timeouts
  Dialect dialect = Dialect::anthropic;  // the API the client speaks
  std::int64_t tasks = 400;
  double spacing = 0.0;  // model seconds between two task starts, > 0 (default_spacing is a good one)
  int concurrency = 32;
  int client_threads = 1;
  int server_threads = 1;
  std::uint64_t seed = rng::kReferenceSeed;  // the outage schedule and kinds, the client's jitter
  double wait_tolerance = 0.05;              // wall seconds either side of a wait's window
  double confidence = 0.9999;
};

// 5 / (1/t_good + 1/t_bad) model seconds.
double default_spacing(double t_good, double t_bad);

// The model the exact value is for: the two-state chain, the fresh scope,
// every request 0 s except a slow_headers fault (the client's header
// timeout) and a stall (its idle timeout), the client's backoff and think
// time and the server's retry-after; in model seconds (wall / time_scale).
TimeModel live_time_model(const TimeLiveConfig& config);

// The longest one call and one task can take here (wall seconds): every
// request the policy can send, each taking the longer of the header and
// idle timeouts plus half a second, and the longest wait after each. The
// exact value knows no deadline, so the client's must not be shorter.
struct LiveDeadlines {
  double call = 0.0, task = 0.0;
};
LiveDeadlines needed_deadlines(const TimeLiveConfig& config);

// Throws InputError naming the bad value: the policy, timing and outage
// values, tasks in [1, 10^6], the spacing, the tolerance, the confidence in
// (0, 1), a retry-after in (0, 1e-6), and a call or task deadline shorter
// than needed_deadlines.
void validate(const TimeLiveConfig& config);

// What the waits and the steps between requests looked like.
struct TimeLiveWaits {
  std::int64_t checked = 0;  // retries whose wait was checked
  std::int64_t outside = 0;  // waits outside their window
  // Over the checked waits, wall seconds: the least (waited - shortest) and
  // the most (waited - max); inside the window means >= -tolerance and
  // <= tolerance.
  double min_margin = 0.0, max_excess = 0.0;
  // waited - the wait the client drew (its seeded jitter, recomputed): the
  // scheduling noise and latency on top of the schedule.
  double max_residual = 0.0, mean_residual = 0.0;
  // Every step between two requests of a task: (start - previous start) -
  // (the model's duration of the previous request + the drawn wait or the
  // think time), wall seconds.
  std::int64_t steps = 0;
  double max_step_residual = 0.0, mean_step_residual = 0.0;
};

struct TimeLiveCheck {
  TimeLiveConfig config;  // with the spacing used
  std::vector<LiveTask> live;
  // Per task: the policy's rules (react) over the replies the server gave it.
  std::vector<Prediction> expected;
  std::int64_t successes = 0, requests = 0, bad_requests = 0;
  std::map<std::string, std::int64_t> outcomes;  // live outcome name -> tasks
  // Tasks whose live outcome or request count differ from the policy's
  // rules over the replies the server gave them.
  std::vector<std::int64_t> mismatches;
  // Requests whose reply is not what the schedule (redrawn from the seed)
  // says for their received time and index.
  std::int64_t off_schedule = 0;
  // Tasks no worker was free for at their start time, which started more
  // than a tenth of the shorter mean sojourn late: their start depended on
  // the tasks before them. max_late: the most any task started late (wall s).
  std::int64_t late_starts = 0;
  double max_late = 0.0;
  TimeLiveWaits waits;
  double exact = 0.0;               // exact_time's success
  double exact_mean_seconds = 0.0;  // and its mean wall time per task, model seconds
  double mean_seconds = 0.0;        // the live tasks' mean wall time, model seconds
  Interval interval;                // Wilson, at config.confidence
  OutageView schedule;              // the server's, at the end
  double bad_time = 0.0;            // share of [from, now] the schedule was bad
  double wall_seconds = 0.0;
  std::vector<std::string> problems;  // the first few failures, in words

  bool covered() const { return interval.covers(exact); }
  bool passed() const {
    return covered() && waits.outside == 0 && mismatches.empty() && off_schedule == 0 && late_starts == 0;
  }
};

// Starts the server in outage mode, runs config.tasks tasks with the real
// client, and checks them. Throws InputError for a bad config.
TimeLiveCheck run_time_live_check(const TimeLiveConfig& config);

// One line per task: task,start,seconds,requests,outcome,expected_outcome,expected_requests,match
std::string time_live_csv(const TimeLiveCheck& check);

}  // namespace relsim
