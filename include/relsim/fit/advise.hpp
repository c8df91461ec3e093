#pragma once
// relsim advise (docs/advise.md): from a fitted log to the setting a team
// deploys. The official SDKs expose one knob, maxRetries (TypeScript) /
// max_retries (Python), with a fixed backoff (Backoff::sdk()); they retry
// only before the stream. In relsim's terms that is the layered policy with
// s = maxRetries HTTP-layer retries and r = 0 stream-layer retries. advise
// scans s with the exact engine (exact_time when the log has timestamps, the
// discrete engine otherwise) for the smallest s that meets the target; when
// none within `bound` does, it says what the SDK can do at best and the
// smallest change beyond it: more retries than the bound, or stream-layer
// retries in the agent loop (r > 0 around the SDK's default s = 2).
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "relsim/core/billing.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/json.hpp"
#include "relsim/fit/likelihood.hpp"

namespace relsim::fit {

// The SDKs' default maxRetries.
inline constexpr int kSdkDefaultMaxRetries = 2;

// What the fit gives advise.
struct AdviseFit {
  double p = 0.0, q = 0.0;
  fit::Interval p_ci{fit::kNaN, fit::kNaN}, q_ci{fit::kNaN, fit::kNaN};
  // From the fit in seconds, when the log has timestamps.
  bool timed = false;
  double t_good = fit::kNaN, t_bad = fit::kNaN;
  fit::Interval t_good_ci{fit::kNaN, fit::kNaN}, t_bad_ci{fit::kNaN, fit::kNaN};
  // Points of the fit's joint 95% region: (p, q), or (t_good, t_bad) when
  // timed; the estimate first.
  std::vector<std::pair<double, double>> region;
  std::string untimed_why = "no timestamps";  // why not timed, when not
  FaultWeights kinds = FaultWeights::in_stream_uniform();
  std::string kinds_option;  // "" for the default
  std::vector<std::string> notes;
};

struct AdviseSetup {
  std::int64_t n = 1;   // model calls per task
  double target = 0.99;
  double request_seconds = 0.0, think_seconds = 0.0;
  int bound = 10;        // the most maxRetries advised without saying it is beyond the usual
  int cap = 100;         // the scan's end
  int r_cap = 20;        // the most stream-layer retries tried in the agent loop
  std::int64_t tasks = 20000;  // Monte Carlo tasks for the seconds of done tasks (timed only)
  std::uint64_t seed = 1;
  // With prices (--price-in ...): what each setting costs, by the exact
  // engine's cost walk (docs/model.md, Cost).
  std::optional<Billing> billing;
};

// One setting, evaluated.
struct AdvicePoint {
  int max_retries = 0;      // s
  int stream_retries = 0;   // r: retries of a broken stream in the agent loop
  double success = 0.0;
  fit::Interval success_band{0.0, 0.0};  // min and max over the fit's region
  int band_points = 0;
  double requests_per_task = 0.0;
  // Timed only (NaN otherwise): the exact mean wall time of all tasks; by
  // Monte Carlo (AdviseSetup::tasks, seed), mean and p99 of the done tasks
  // and p99 of all tasks.
  double mean_seconds = fit::kNaN, mean_seconds_done = fit::kNaN, p99_seconds_done = fit::kNaN,
         p99_seconds = fit::kNaN;
  bool meets_target = false;
  // With AdviseSetup::billing (NaN otherwise), at the estimate: the mean
  // cost of a task (done or not), of a done task, and what is spent per
  // done task (cost_mean / success: the failed tasks' spend included).
  double cost_mean = fit::kNaN, cost_mean_done = fit::kNaN, cost_per_done = fit::kNaN;
};

struct Advice {
  AdviseFit fit;
  AdviseSetup setup;
  // sdk: maxRetries alone, within the bound; beyond_bound: maxRetries alone,
  // more than the bound; agent_loop: stream-layer retries needed; none: no
  // setting searched meets the target (answer: the best the SDK can do).
  std::string how;
  AdvicePoint answer;
  std::optional<AdvicePoint> sdk_best;     // the best within the bound, when it misses
  std::optional<AdvicePoint> agent_loop;   // the smallest r with s = 2 that meets, when maxRetries alone misses within the bound
  std::vector<std::pair<int, double>> scan;  // s -> success at the estimate, r = 0, as far as scanned
  std::string model;                         // the exact options of the answer
  std::map<std::string, std::string> snippets;  // by SDK: typescript, python
};

// Throws InputError for a target outside (0, 1), n < 1, negative seconds.
Advice advise(const AdviseFit& fit, const AdviseSetup& setup);

// The setting in each SDK's words: client construction, and with r > 0 the
// agent loop's retry of a broken stream.
std::string sdk_snippet(const std::string& sdk, int max_retries, int stream_retries);

std::string advice_text(const Advice& advice, const std::vector<std::string>& sdks);
// Keys: p, q, p_ci, q_ci, t_good, t_bad, t_good_ci, t_bad_ci (null when
// untimed), timed, model, how, max_retries, stream_retries, success,
// success_band, band_points, meets_target, target, n, requests_per_task,
// mean_seconds, mean_seconds_done, p99_seconds_done, p99_seconds (null when
// untimed), bound, sdk_best, agent_loop (null or a point), scan, snippets,
// notes; with prices each point adds cost_mean, cost_mean_done and
// cost_per_done, and the JSON "billing".
Json advice_json(const Advice& advice, const std::vector<std::string>& sdks);

}  // namespace relsim::fit
