#pragma once
// A live fleet run beside the simulation of the same scenario (docs/fleet.md,
// The fleet, live): each figure of the live run against its spread over the
// simulation's replicates, and the server's log against the client's counts.
#include <functional>
#include <string>
#include <vector>

#include "relsim/fleet/fleet.hpp"
#include "relsim/live/fleet_live.hpp"

namespace relsim {

// One figure: the live run's value against the replicates' values.
struct FigureAgreement {
  std::string name;  // success_rate, rate_429, rate_529, amplification; latency_p50, latency_p99, pool_wait_p99, short_pool_wait_p99
  double live = 0.0;
  double mean = 0.0, sd = 0.0, min = 0.0, max = 0.0;  // over the replicates (sd: n - 1)
  double replayed = 0.0;  // the replicate whose draws the live run replayed
  double allowed = 0.0;   // the distance from the mean the live value may have
  bool agrees = false;    // |live - mean| <= allowed
  // Whether the verdict counts: latencies and pool waits are shown, not
  // judged, since the machine and loopback add their own time to every live
  // stream.
  bool judged = true;
};

// The distance allowed: kSpreads standard deviations of the replicates, plus
// kRelativeSlack of the mean for what the two do not share (a live stream
// lasts whole milliseconds of wall time, a bad one ends where its fault
// does, loopback adds its own latency).
inline constexpr double kSpreads = 4.0;
inline constexpr double kRelativeSlack = 0.05;

// `replicates` holds one result per replicate, `replayed` the index of the
// one whose draws the live run replayed (or -1). Throws InputError for fewer
// than two replicates.
std::vector<FigureAgreement> compare_figures(const fleet::FleetResult& live,
                                             const std::vector<fleet::FleetResult>& replicates, int replayed);

// Whether the server's log agrees with the client's counts: the same
// requests, 429s and 529s, every request under its task's tenant, every
// answer naming its task, nothing left open, and with a pool of K per tenant
// never more than K of a tenant's requests open at the server.
struct LogAgreement {
  bool agrees = true;
  std::vector<std::string> problems;  // one line each
};
LogAgreement check_log(const FleetLiveResult& live, const fleet::Scenario& scenario);

// relsim fleet --live: the replicates simulated one by one, the live run,
// the replicates pooled, and the two comparisons.
struct FleetAgreementRun {
  fleet::Scenario scenario;
  fleet::RunConfig config;  // the pooled run's: replicates 0 .. replicates - 1
  FleetLiveConfig live_config;
  FleetLiveResult live;
  fleet::FleetResult pooled;
  std::vector<FigureAgreement> figures;
  LogAgreement log;

  // The log agrees, and every judged figure.
  bool agrees() const;
};

// Simulates `replicates` replicates one at a time (calling `simulated`
// with the number done after each), runs the scenario live replaying
// live_config.replicate's draws, simulates the replicates pooled, and
// compares. Throws InputError as validate_live and fleet::validate do
// (before any run), when the duration let a replicate start fewer tasks
// than the live run runs (it runs them all), and as compare_figures does
// for fewer than two replicates (after the runs: check that first).
FleetAgreementRun run_fleet_agreement(const fleet::Scenario& scenario, fleet::RunConfig config,
                                      const FleetLiveConfig& live_config, int replicates, bool force,
                                      const std::function<void(int)>& simulated = {});

}  // namespace relsim
