// Exact 256-bit sums of wall times (montecarlo/time_sums.hpp).
#include "montecarlo/time_sums.hpp"

#include "relsim/core/error.hpp"

namespace relsim::detail {
namespace {

using u128 = unsigned __int128;
constexpr std::size_t kWords = 4;
constexpr int kPieces = 8;  // 32-bit pieces of one Wide

}  // namespace

void Wide::add_at(std::size_t index, u128 x) {
  for (std::size_t i = index; i < kWords && x != 0; ++i) {
    const u128 s = static_cast<u128>(word[i]) + static_cast<std::uint64_t>(x);
    word[i] = static_cast<std::uint64_t>(s);
    x = (x >> 64) + (s >> 64);
  }
}

Wide& Wide::operator+=(const Wide& o) {
  for (std::size_t i = 0; i < kWords; ++i) add_at(i, o.word[i]);
  return *this;
}

Wide Wide::operator-(const Wide& o) const {
  RELSIM_ASSERT(!(*this < o));
  Wide d;
  std::uint64_t borrow = 0;
  for (std::size_t i = 0; i < kWords; ++i) {
    const u128 take = static_cast<u128>(o.word[i]) + borrow;
    borrow = static_cast<u128>(word[i]) < take ? 1 : 0;
    d.word[i] = static_cast<std::uint64_t>(static_cast<u128>(word[i]) + (static_cast<u128>(borrow) << 64) - take);
  }
  return d;
}

Wide Wide::operator*(const Wide& o) const {
  Wide p;
  for (std::size_t i = 0; i < kWords; ++i)
    for (std::size_t j = 0; i + j < kWords; ++j)
      p.add_at(i + j, static_cast<u128>(word[i]) * o.word[j]);
  return p;
}

bool Wide::operator<(const Wide& o) const {
  for (std::size_t i = kWords; i-- > 0;)
    if (word[i] != o.word[i]) return word[i] < o.word[i];
  return false;
}

long double Wide::to_long_double() const {
  long double x = 0.0L;
  for (std::size_t i = kWords; i-- > 0;) x = x * 0x1p64L + static_cast<long double>(word[i]);
  return x;
}

void TimeSums::add(std::int64_t micros) {
  RELSIM_ASSERT(micros >= 0);
  const auto x = static_cast<std::uint64_t>(micros);
  sum.add_at(0, x);
  squares.add_at(0, static_cast<u128>(x) * x);
}

void TimeSums::add(const TimeSums& o) {
  sum += o.sum;
  squares += o.squares;
}

std::vector<std::int64_t> TimeSums::pack() const {
  std::vector<std::int64_t> pieces;
  for (const Wide* w : {&sum, &squares})
    for (int k = 0; k < kPieces; ++k)
      pieces.push_back(static_cast<std::int64_t>((w->word[static_cast<std::size_t>(k / 2)] >> (32 * (k % 2))) &
                                                 0xFFFFFFFFu));
  return pieces;
}

TimeSums TimeSums::unpack(const std::vector<std::int64_t>& pieces) {
  RELSIM_ASSERT(pieces.size() == 2 * kPieces);
  TimeSums t;
  Wide* targets[2] = {&t.sum, &t.squares};
  for (std::size_t w = 0; w < 2; ++w)
    for (int k = 0; k < kPieces; ++k) {
      const std::int64_t piece = pieces[w * kPieces + static_cast<std::size_t>(k)];
      RELSIM_ASSERT(piece >= 0);
      targets[w]->add_at(static_cast<std::size_t>(k / 2), static_cast<u128>(piece) << (32 * (k % 2)));
    }
  return t;
}

long double TimeSums::variance(std::int64_t n) const {
  if (n < 2) return 0.0L;
  Wide count;
  count.add_at(0, static_cast<std::uint64_t>(n));
  // N S2 >= S1^2 (Cauchy-Schwarz), so the difference is exact and >= 0.
  const Wide numerator = count * squares - sum * sum;
  const auto nd = static_cast<long double>(n);
  return numerator.to_long_double() / (nd * (nd - 1.0L));
}

}  // namespace relsim::detail
