// Latency histograms (fleet.hpp): bins 1% wide from 1 ms, so that the
// histograms of replicates and ranks add up exactly as integers and a
// quantile of the sum is the quantile of the whole run.
#include <cmath>
#include <limits>

#include "relsim/fleet/fleet.hpp"

namespace relsim::fleet {
namespace {

constexpr double kFirst = 1e-3;  // seconds: bin 1 starts here
constexpr double kGrowth = 1.01;

}  // namespace

double latency_bin_low(int bin) { return bin <= 0 ? 0.0 : kFirst * std::pow(kGrowth, bin - 1); }

double latency_bin_high(int bin) { return kFirst * std::pow(kGrowth, bin); }

int latency_bin(double seconds) {
  if (!(seconds >= kFirst)) return 0;  // NaN too
  const double k = std::floor(std::log(seconds / kFirst) / std::log(kGrowth)) + 1.0;
  return k >= kLatencyBins - 1 ? kLatencyBins - 1 : static_cast<int>(k);
}

double histogram_quantile(const std::vector<std::int64_t>& histogram, double q) {
  std::int64_t total = 0;
  for (const std::int64_t c : histogram) total += c;
  if (total == 0) return std::numeric_limits<double>::quiet_NaN();
  // The smallest bin whose cumulative count reaches ceil(q total).
  const auto need = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(total)));
  std::int64_t seen = 0;
  for (std::size_t b = 0; b < histogram.size(); ++b) {
    seen += histogram[b];
    if (seen >= need && seen > 0) {
      const int bin = static_cast<int>(b);
      return bin == 0 ? 0.0 : std::sqrt(latency_bin_low(bin) * latency_bin_high(bin));
    }
  }
  return std::sqrt(latency_bin_low(kLatencyBins - 1) * latency_bin_high(kLatencyBins - 1));
}

}  // namespace relsim::fleet
