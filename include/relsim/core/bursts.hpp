#pragma once
// The chain's bursts in the user's words (docs/model.md, Bursts): how long a
// run of bad chain steps lasts on average and how long the good run between
// two of them. A chain step is a request when b = g = 0; silent steps count
// too. These are properties of the chain, not of what a client sees: a
// client stops sending when a task fails and retries inside bursts, so the
// share of its requests that fail (fault_share in exact.hpp) differs from p.
#include <string>
#include <string_view>

#include "relsim/core/model.hpp"

namespace relsim {

struct BurstShape {
  // 1 / (1 - q); +inf when q = 1 (a burst never ends); NaN when p = 0 (no bursts).
  double mean_burst = 0.0;
  // 1 / p0 = (1 - p) / (p (1 - q)); +inf when p = 0; 0 when p = 1.
  double mean_gap = 0.0;
};

BurstShape burst_shape(const Model& model);

// "5 chain steps (1/(1 - q))" and "245 chain steps between bursts (1/p0)",
// or what stands in for an infinite or missing value.
std::string burst_words(const BurstShape& shape);
std::string gap_words(const BurstShape& shape);

// The other way, as --burst-mean gives it: a run of bad requests lasts
// 1/(1-q) requests on average (geometric), so a mean burst length L >= 1 is
// q = 1 - 1/L (L = 1: q = 0, no bad request follows a bad one). Throws
// InputError naming L (as `name`, the option that gave it) unless it is in
// [1, 1e15].
double q_from_burst_mean(double burst_mean, std::string_view name = "burst mean");

}  // namespace relsim
