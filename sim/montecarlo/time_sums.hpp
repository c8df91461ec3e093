#pragma once
// Internal: exact sums of the tasks' wall times in microseconds and of
// their squares (simulate_time.hpp), in 256-bit unsigned integers, so that
// the mean and the variance are the same bits for any split of the tasks
// over threads and ranks. A task's time is below 2^63 us and there are at
// most 2^40 tasks, so the sums stay below 2^103 and 2^166, and N S2 and
// S1^2 below 2^206.
#include <array>
#include <cstdint>
#include <vector>

namespace relsim::detail {

// An unsigned 256-bit integer, four 64-bit words, low first; arithmetic
// modulo 2^256.
struct Wide {
  std::array<std::uint64_t, 4> word{};

  // Adds x 2^(64 index).
  void add_at(std::size_t index, unsigned __int128 x);
  Wide& operator+=(const Wide& o);
  Wide operator-(const Wide& o) const;  // *this >= o
  Wide operator*(const Wide& o) const;  // the low 256 bits
  bool operator<(const Wide& o) const;
  long double to_long_double() const;
};

struct TimeSums {
  Wide sum, squares;

  void add(std::int64_t micros);  // in [0, 2^63)
  void add(const TimeSums& o);
  // Both sums as 32-bit pieces in int64s, for parallel::sum_all: the sum of
  // up to 2^31 ranks' pieces cannot overflow. unpack puts the carries back.
  std::vector<std::int64_t> pack() const;
  static TimeSums unpack(const std::vector<std::int64_t>& pieces);
  // The sample variance (N S2 - S1^2) / (N (N - 1)), the numerator exact;
  // 0 for n < 2.
  long double variance(std::int64_t n) const;
};

}  // namespace relsim::detail
