#pragma once
// Confidence intervals for a binomial proportion k/N: Wilson score (Wilson
// 1927), Clopper-Pearson (1934) and Jeffreys (Brown, Cai, DasGupta 2001),
// with quantiles from Boost.Math.
#include <cstdint>
#include <string_view>

namespace relsim {

enum class IntervalKind { wilson, clopper_pearson, jeffreys };
std::string_view to_string(IntervalKind kind);
IntervalKind parse_interval_kind(std::string_view word);  // throws InputError

struct Interval {
  double low = 0.0;
  double high = 1.0;
  bool covers(double x) const { return low <= x && x <= high; }
};

// Two-sided interval at `confidence` in (0, 1). Requires 0 <= k <= n, n >= 1;
// throws InputError otherwise.
Interval binomial_interval(IntervalKind kind, std::int64_t k, std::int64_t n, double confidence);

// The same for correlated trials whose success count has `design_effect`
// times the binomial variance (Kish 1965): the interval of the effective
// sample n' = round(n / d), k' = round(k n' / n), never narrower than the
// binomial one (d below 1 counts as 1). Throws InputError as above, and for
// a design effect that is not a finite number >= 0.
Interval effective_interval(IntervalKind kind, std::int64_t k, std::int64_t n, double confidence,
                            double design_effect);

}  // namespace relsim
