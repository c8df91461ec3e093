#pragma once
// relsim fit in seconds (docs/fit.md, Fit in seconds): the two-state chain of
// time mode (docs/time.md, The chain in continuous time) estimated from the
// start times and outcomes of each task's requests. A request is bad when the
// chain is bad at its start; a task's first request sees the stationary law
// (bad with p = t_bad / (t_good + t_bad)); over a gap of d seconds between
// two starts of one task
//   P(bad | bad)  = p + (1 - p) e^(-λd),   P(bad | good) = p (1 - e^(-λd)),
// λ = 1/t_good + 1/t_bad. The states are seen, so the likelihood is a product
// of these over the gaps: no forward pass is needed.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "relsim/fit/estimate.hpp"
#include "relsim/fit/likelihood.hpp"
#include "relsim/fit/records.hpp"

namespace relsim::fit {

// Each task's timed requests as the fit in seconds needs them: the first
// request's outcome, then every gap between consecutive starts with the
// outcomes on both sides, kept by transition (index [from][to], 0 good, 1
// bad). Memory grows with the timed records (8 bytes each).
struct GapData {
  std::int64_t first[2] = {0, 0};
  std::vector<double> gaps[2][2];  // seconds
  std::int64_t untimed = 0;        // records with no start of their own (Record::timed false)
  std::int64_t same_start = 0;     // timed records at their task's previous start, left out
  std::int64_t count() const;      // gaps in all
};

class GapCollector {
 public:
  void add(const Record& record);
  const GapData& data() const { return data_; }

 private:
  struct Last {
    std::int64_t ns = 0;
    std::uint8_t bad = 0;
  };
  GapData data_;
  std::unordered_map<std::string, Last> last_;
};

// The exact log-likelihood at (t_good, t_bad), both > 0 seconds.
double seconds_log_likelihood(const GapData& data, double t_good, double t_bad);

struct SecondsFit {
  bool identified = false;  // false: the note says why (no bad or no good request, no gap)
  double t_good = kNaN, t_bad = kNaN, p = kNaN;
  // 95% profile-likelihood intervals; an end the data do not bound is 0 or
  // kInf (the profile never drops far enough inside the search range).
  Interval t_good_ci{kNaN, kNaN}, t_bad_ci{kNaN, kNaN};
  double log_likelihood = kNaN;
  // Calibration: per outcome before the gap and per quintile of the gaps,
  // the bad requests seen against those the fit expects, sum of squared
  // standardised differences, df = cells - 2. p_value NaN when not run.
  Test check{0.0, 0.0, kNaN, "not identified"};
  std::int64_t gaps = 0;
  std::string note;
};

// Maximum likelihood in (p, λ), λ = 1/t_good + 1/t_bad in [1 / (1e7 x the
// longest gap), 2 / (1e-3 x the shortest)] (a grid refined by Brent,
// Boost.Math, on the profile over p for each rate), intervals by toms748 on
// the profiles of t_good and t_bad. The gaps are rounded to the millisecond
// and equal ones merged (what a log of 10^7 requests then costs is its
// distinct gaps). Not identified (the note says why) without a bad request,
// a good one, a change between them within a task, or when λ runs to an end
// of its range (faults independent at the scale of the gaps).
SecondsFit fit_seconds(const GapData& data);

// Points (t_good, t_bad) of the joint 95% region {l_max - l <= chi2_2(0.95)/2}
// on a grid x grid lattice in log seconds over a box around the estimate
// (1.6 times each profile interval's reach, three decades where an end is
// unbounded), the estimate first. Empty when not identified.
std::vector<std::pair<double, double>> seconds_region(const GapData& data, const SecondsFit& fit, int grid = 15);

// "--t-good 612.3 --t-bad 88.1"
std::string seconds_options(const SecondsFit& fit);

}  // namespace relsim::fit
