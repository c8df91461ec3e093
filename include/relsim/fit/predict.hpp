#pragma once
// Predictions from a fitted log (docs/fit.md, Predictions): the exact engine
// run at the estimate for a retry policy someone is considering, with a 95%
// band over the joint profile-likelihood region of (p, q), the `relsim exact`
// command line that reproduces the point, and the netem line that makes a
// real interface fail the same way.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/fit/estimate.hpp"

namespace relsim::fit {

struct PredictSpec {
  std::string text;  // as given
  Policy policy;
};
// "policy=layered,s=2,r=3,n=10[,B=4]": keys policy, r and n required, s
// (default 2) and B (budgeted only) optional, each at most once, integers
// through the strict parser. Throws InputError naming the part and the keys.
PredictSpec parse_predict(std::string_view spec);

// The point a fit stands for: (p, q) at the estimate; where q is not
// identified, q = p (or q = 1 with p = 1).
Model fitted_model(const ChainFit& fit);

struct Prediction {
  PredictSpec spec;
  double success = 0.0;
  double mean_requests = 0.0;
  std::vector<std::pair<std::string, double>> outcomes;  // classes with nonzero probability, by name
  Interval success_band, requests_band;                   // min and max over the region
  int region_points = 0;                                  // grid points inside the region (with the estimate)
  std::string band_method = "profile-likelihood region";
  std::string kinds;          // the --kinds used: the log's relsim kinds, "" for the default
  std::string exact_command;  // relsim exact --p P --q Q ...
  std::string netem_command;  // tc qdisc add dev IF root netem loss gemodel P% R% 100% 0%
};

// The region {2 (l_max - l(p, q)) <= chi2_2(0.95)}, scanned on a grid x grid
// lattice over its bounding box (the profile intervals at the df-2 level).
Prediction predict(const ChainCounts& counts, const ChainFit& fit, const PredictSpec& spec, int grid = 41);

// The same for any likelihood of (p, q) (--sdk-retries fits per-call outcomes): the region's
// bounding box and l(p, q); the region is {l_max - l(p, q) <= chi2_2(0.95)/2}.
struct PredictRegion {
  Interval p, q;
  std::function<double(double, double)> log_likelihood;
};
Prediction predict(const PredictRegion& region, const ChainFit& fit, const PredictSpec& spec, int grid = 41);

// The points predict(counts, ...) takes its band over, as (p, q): the
// estimate, then the lattice points inside the joint region.
std::vector<std::pair<double, double>> chain_region(const ChainCounts& counts, const ChainFit& fit, int grid = 41);

}  // namespace relsim::fit
