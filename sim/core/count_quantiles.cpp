#include "relsim/core/count_quantiles.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace relsim {
namespace {

// Scans the cumulative sum once; `reaches(cum, level)` says whether it
// meets a level given in parts per ten thousand.
template <class T, class Reaches>
std::optional<CountQuantiles> scan(const std::vector<T>& mass, Reaches reaches) {
  CountQuantiles q;
  bool any = false;
  for (std::size_t m = 0; m < mass.size(); ++m)
    if (mass[m] > T{0}) {
      q.max = static_cast<std::int64_t>(m);
      any = true;
    }
  if (!any) return std::nullopt;
  T cum{0};
  std::size_t level = 0;
  for (std::size_t m = 0; m < mass.size() && level < kCountLevels.size(); ++m) {
    cum += mass[m];
    while (level < kCountLevels.size() && reaches(cum, kCountLevels[level])) q.at[level++] = static_cast<std::int64_t>(m);
  }
  // Rounding can leave the last levels just short: they fall on the largest value.
  for (; level < kCountLevels.size(); ++level) q.at[level] = q.max;
  return q;
}

}  // namespace

std::optional<CountQuantiles> count_quantiles(const std::vector<double>& mass) {
  double total = 0.0;
  for (const double x : mass)
    if (x > 0.0) total += x;
  return scan(mass, [total](double cum, int level) { return cum >= (level / 10000.0) * total * (1.0 - 1e-12); });
}

std::optional<CountQuantiles> count_quantiles(const std::vector<std::int64_t>& counts) {
  std::int64_t total = 0;
  for (const std::int64_t x : counts)
    if (x > 0) total += x;
  // cum / total >= level / 10^4, exactly; tasks are at most 10^12, so the
  // products stay far below 2^63.
  return scan(counts, [total](std::int64_t cum, int level) { return cum * 10000 >= static_cast<std::int64_t>(level) * total; });
}

namespace {

template <class T>
OutcomeQuantiles split(const std::vector<T>& done, const std::vector<T>& failed) {
  std::vector<T> all(std::max(done.size(), failed.size()), T{0});
  for (std::size_t m = 0; m < done.size(); ++m) all[m] += done[m];
  for (std::size_t m = 0; m < failed.size(); ++m) all[m] += failed[m];
  return {count_quantiles(all), count_quantiles(done), count_quantiles(failed)};
}

Json one_json(const std::optional<CountQuantiles>& q) {
  if (!q) return nullptr;
  Json j = Json::object();
  for (std::size_t l = 0; l < kCountLevels.size(); ++l) j[std::string(kCountLevelNames[l])] = q->at[l];
  j["max"] = q->max;
  return j;
}

}  // namespace

OutcomeQuantiles outcome_quantiles(const std::vector<double>& done, const std::vector<double>& failed) {
  return split(done, failed);
}

OutcomeQuantiles outcome_quantiles(const std::vector<std::int64_t>& done, const std::vector<std::int64_t>& failed) {
  return split(done, failed);
}

Json outcome_quantiles_json(const OutcomeQuantiles& q) {
  return Json{{"all", one_json(q.all)}, {"done", one_json(q.done)}, {"failed", one_json(q.failed)}};
}

std::string count_quantiles_words(const CountQuantiles& q) {
  return fmt::format("p50 {}, p90 {}, p99 {}, p99.9 {}, max {}", q.at[0], q.at[1], q.at[2], q.at[3], q.max);
}

}  // namespace relsim
