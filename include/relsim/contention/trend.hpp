#pragma once
// relsim contention trend (docs/contention.md, "History and trend lines"):
// the essay's four trend lines read from a --history file, one point a
// run: accuracy (success), the tool 429 rate under a burst (a burst run's,
// or by_scenario.burst's of a mixed run), the cross-tenant leak rate
// (wrong-tenant hits of cache lookups) and the pool wait p99. A line that
// does not measure one (no burst, no lookup, no long streams) leaves it
// null. The workbench's trend panel draws the same JSON.
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/json.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim::contention {

// A rate's value and its Wilson interval, as the history line holds them.
struct TrendRate {
  double value = 0.0;
  Interval ci;
};

struct TrendRun {
  int run = 0;  // 1, 2, ... in the file's order
  std::string time, commit, scenario, agent;
  std::uint64_t seed = 0;
  int agents = 0, tenants = 0;
  TrendRate success;
  std::optional<TrendRate> burst_429, leak;
  std::optional<double> pool_wait_p99;
};

// Every non-blank line of `in` (named `source` in errors); throws
// InputError naming the line and what is wrong with it, or that there is
// no run at all.
std::vector<TrendRun> read_trend(std::istream& in, const std::string& source);

Json trend_json(const std::vector<TrendRun>& runs);
// One row a run: run,time,commit,scenario,agent,seed,agents,tenants,
// success,success_lo,success_hi,burst_429,...,leak,...,pool_wait_p99
// (an empty cell for a null).
std::string trend_csv(const std::vector<TrendRun>& runs);
std::string trend_table(const std::vector<TrendRun>& runs);

}  // namespace relsim::contention
