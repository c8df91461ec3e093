#pragma once
// Quantiles of a count per task (requests per task), from its distribution
// given as mass by value: exact probabilities, or simulated task counts.
// The q-quantile is the smallest m with P(X <= m) >= q (docs/model.md,
// Requests per task).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/json.hpp"

namespace relsim {

// The levels relsim reports, in parts per ten thousand: p50, p90, p99, p99.9.
inline constexpr std::array<int, 4> kCountLevels{5000, 9000, 9900, 9990};
// Their names, for JSON keys and CSV columns: "p50", "p90", "p99", "p999".
inline constexpr std::array<std::string_view, 4> kCountLevelNames{"p50", "p90", "p99", "p999"};

struct CountQuantiles {
  std::array<std::int64_t, 4> at{};  // by kCountLevels
  std::int64_t max = 0;              // the largest value with positive mass
};

// mass[m]: probability (or weight) of value m. nullopt when the mass sums to
// zero. A cumulative sum within 1e-12 (relative) of a level meets it, so a
// level the distribution reaches exactly is not lost to rounding.
std::optional<CountQuantiles> count_quantiles(const std::vector<double>& mass);

// counts[m]: tasks with value m, in exact integer arithmetic. nullopt when
// there are no tasks.
std::optional<CountQuantiles> count_quantiles(const std::vector<std::int64_t>& counts);

// The quantiles over all tasks, over the tasks that finished (done) and
// over those that did not (every other outcome); nullopt where no task is.
struct OutcomeQuantiles {
  std::optional<CountQuantiles> all, done, failed;
};
// From the mass by value of the done tasks and of the others.
OutcomeQuantiles outcome_quantiles(const std::vector<double>& done, const std::vector<double>& failed);
OutcomeQuantiles outcome_quantiles(const std::vector<std::int64_t>& done, const std::vector<std::int64_t>& failed);

// {"all": {"p50": .., "p90": .., "p99": .., "p999": .., "max": ..}, "done": .., "failed": ..},
// null where there is none.
Json outcome_quantiles_json(const OutcomeQuantiles& q);
// "p50 30, p90 31, p99 34, p99.9 37, max 120".
std::string count_quantiles_words(const CountQuantiles& q);

}  // namespace relsim
