#pragma once
// The points of a sweep's grid (sweep.hpp) in grid order, each validated
// and seeded; internal to the sweep.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/sweep/sweep.hpp"

namespace relsim::sweep_detail {

struct SweepPoint {
  Model model;                    // discrete mode
  std::optional<TimeModel> time;  // time mode
  double t_good = 0.0, t_bad = 0.0;
  Policy policy;
  long long r = 0, n = 0;
  std::uint64_t seed = 0;  // the point's simulation seed
};

struct SweepPoints {
  std::vector<SweepPoint> valid;  // in grid order
  std::int64_t total = 0;         // all points of the grid, valid or not
  std::int64_t skipped = 0;       // invalid points left out (never with strict)
  std::string first_skip;         // why the first one was invalid
};

// Throws InputError for an empty axis, a grid over kMaxSweepPoints points,
// or (with config.strict) the first invalid point.
SweepPoints sweep_points(const SweepGrid& grid, const SweepConfig& config);

}  // namespace relsim::sweep_detail
