#include "relsim/core/bursts.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

BurstShape burst_shape(const Model& model) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  BurstShape s;
  s.mean_burst = model.p == 0.0 ? std::numeric_limits<double>::quiet_NaN() : model.q >= 1.0 ? inf : 1.0 / (1.0 - model.q);
  const double p0 = model.p0();
  s.mean_gap = model.p >= 1.0 ? 0.0 : p0 > 0.0 ? 1.0 / p0 : inf;
  return s;
}

std::string burst_words(const BurstShape& shape) {
  if (std::isnan(shape.mean_burst)) return "none (p = 0: no request is bad)";
  if (std::isinf(shape.mean_burst)) return "endless (q = 1: a burst never ends)";
  return fmt::format("{:.6g} chain steps (1/(1 - q))", shape.mean_burst);
}

std::string gap_words(const BurstShape& shape) {
  if (std::isinf(shape.mean_gap)) return "endless (p0 = 0: no burst ever starts)";
  if (shape.mean_gap == 0.0) return "none (p = 1: every request is bad)";
  return fmt::format("{:.6g} chain steps between bursts (1/p0)", shape.mean_gap);
}

double q_from_burst_mean(double L, std::string_view name) {
  if (!(L >= 1.0 && L <= 1e15))
    throw InputError(fmt::format("{} = {} is out of range: it must be in [1, 1e15] requests (q = 1 - 1/L; "
                                 "1 is no burst longer than one request)",
                                 name, L));
  return 1.0 - 1.0 / L;
}

}  // namespace relsim
