#pragma once
// Thresholds for CI, in the manner of k6's (docs/thresholds.md):
// `--require 'success>=0.995,p99_seconds<=600,requests_per_task<=45'` on a
// command that computes those metrics; a run that misses one exits 1 with one
// line per threshold missed, so a team can gate a deploy on it.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace relsim {

enum class ThresholdOp { at_least, at_most, above, below };  // >=, <=, >, <

struct Threshold {
  std::string metric;
  ThresholdOp op = ThresholdOp::at_least;
  double bound = 0.0;
  std::string text;  // as given, spaces dropped: "success>=0.995"
};

// Parses NAME OP NUMBER[,NAME OP NUMBER...] (OP: >=, <=, >, <). Throws
// InputError naming the expression: a metric not among `metrics` (listing
// them), a missing or unknown operator, a bound that is not a finite number.
std::vector<Threshold> parse_thresholds(std::string_view spec, const std::vector<std::string>& metrics);

struct ThresholdCheck {
  Threshold threshold;
  std::optional<double> value;  // nullopt: the run did not compute it (a miss)
  std::string why_missing;
  bool met = false;
};

// Why a metric in seconds is missing from a run outside time mode.
inline constexpr const char* kSecondsNeedTimeMode = "seconds exist in time mode only (--t-good, --t-bad)";

// The metrics a run computed, and why the others are missing.
struct Measured {
  std::map<std::string, double> values;
  std::map<std::string, std::string> missing;  // metric -> why it was not computed
};

std::vector<ThresholdCheck> check_thresholds(const std::vector<Threshold>& thresholds, const Measured& measured);
// One line per threshold missed: "threshold missed: success>=0.995 (success = 0.946729)".
std::vector<std::string> missed_lines(const std::vector<ThresholdCheck>& checks);

}  // namespace relsim
