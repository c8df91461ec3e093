// relsim contention run --scenario long-short (contention.hpp): the model
// API's side of contention, a connection pool starved by long streams,
// played by the fleet's live run (relsim's mock provider and client on
// loopback) beside the fleet's simulation of the same scenario, whose
// replicates give the prediction (docs/contention.md, Long streams and
// short tasks).
#include <cmath>

#include <fmt/format.h>

#include "relsim/contention/contention.hpp"
#include "relsim/core/error.hpp"
#include "relsim/live/fleet_agreement.hpp"

namespace relsim::contention {
namespace {

// Wall seconds per model second: a long stream of 30 s lasts 0.6 s, a
// short one of 2 s lasts 40 ms (eight events 5 ms apart, whole
// milliseconds, so the live streams last what the simulation's do).
constexpr double kTimeScale = 0.02;
constexpr double kLongSeconds = 30.0;
constexpr double kShortSeconds = 2.0;
constexpr int kTasksPerAgent = 3;
constexpr int kReplicates = 20;
// A live wait has a floor, not a ceiling: timers never fire early, and the
// machine adds its own time to every stream (about 1 s in 30 at this
// scale on 2 cores). The band's upper side is widened by this share of the
// simulated mean.
constexpr double kLateShare = 0.1;

// The live figure against the replicates' spread (the band relsim fleet
// --live allows), widened above by `late` of the mean.
Prediction figure_prediction(std::string what, const FigureAgreement& f, double late) {
  Prediction p;
  p.what = std::move(what);
  p.value = f.mean;
  p.measured = f.live;
  p.interval = Interval{f.mean - f.allowed, f.mean + f.allowed + late * std::abs(f.mean)};
  p.agrees = p.interval->covers(f.live);
  return p;
}

}  // namespace

fleet::Scenario long_short_scenario(const ContentionConfig& c) {
  fleet::Scenario s;
  s.agents = c.agents;
  s.tenants = c.tenants;
  // The first pool x tenants agents stream long: agent a belongs to tenant
  // a mod M, so each tenant has as many long agents as connections.
  s.long_agents = std::int64_t{c.pool} * c.tenants;
  s.long_seconds = kLongSeconds;
  s.request_seconds = kShortSeconds;
  s.tasks_per_agent = kTasksPerAgent;
  s.duration = 3600.0;
  s.policy.n = 1;
  // The naive agents share their tenant's pool; the careful ones open a
  // connection per task (the pool for long streams apart from the short).
  if (c.agent == AgentKind::naive)
    s.pool = c.pool;
  else
    s.pool_per_task = true;
  return s;
}

ContentionScores run_long_short(const ContentionConfig& c, const std::function<void(int, int)>& progress) {
  const fleet::Scenario s = long_short_scenario(c);
  fleet::RunConfig rc;
  rc.seed = c.seed;
  rc.threads = 1;
  FleetLiveConfig lc;
  lc.time_scale = kTimeScale;
  lc.client_threads = 2;
  if (progress) progress(0, c.agents);
  const FleetAgreementRun run = run_fleet_agreement(s, rc, lc, kReplicates, false);
  if (progress) progress(c.agents, c.agents);
  if (!run.log.agrees) throw InputError("long-short: the mock provider's log disagrees with the client: " +
                                        run.log.problems.front());
  ContentionScores out;
  out.config = c;
  const fleet::FleetResult& live = run.live.counts;
  out.success = Rate{live.successes, live.tasks};
  out.pool_wait_p99 = live.pool_wait_quantile(0.99);
  out.seconds = run.live.wall_seconds;
  for (const FigureAgreement& f : run.figures) {
    if (f.name == "success_rate")
      out.predictions.push_back(figure_prediction("task success, the fleet's simulation", f, 0.0));
    else if (f.name == "pool_wait_p99")
      out.predictions.push_back(figure_prediction("pool wait p99 (model s), the fleet's simulation", f, kLateShare));
  }
  return out;
}

}  // namespace relsim::contention
