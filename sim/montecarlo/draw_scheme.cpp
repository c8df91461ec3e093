// DrawScheme::make (simulate.hpp): the thresholds and kind cuts that turn the
// draws of docs/methods.md into requests, from (model, policy, weights).
#include <algorithm>
#include <cmath>

#include "relsim/exact/exact.hpp"
#include "relsim/montecarlo/simulate.hpp"

namespace relsim {

DrawScheme DrawScheme::make(const Model& model, const Policy& policy, const FaultWeights& kinds) {
  validate(policy);
  const Chain chain = gilbert_chain(model);  // validates the model
  DrawScheme s;
  // Thresholds for as many requests as one call of this policy can send;
  // t_j does not depend on that number, so a plan drawn for a larger one
  // agrees with the simple policy's draws request for request.
  const int width = policy.max_requests_per_call();
  s.r = width - 1;
  const double stay_bad = chain.retry(1, 1);
  std::array<double, kEntries> first_bad{};
  first_bad[static_cast<int>(Entry::task_start)] = chain.initial(1);
  first_bad[static_cast<int>(Entry::after_good)] = chain.gap(0, 1);
  first_bad[static_cast<int>(Entry::after_bad)] = chain.gap(1, 1);
  // continuous_start walks all n calls; the fresh scope never enters a lane.
  first_bad[static_cast<int>(Entry::lane_start)] =
      model.chain == ChainScope::continuous ? continuous_start(chain, policy, kinds)(1) : chain.initial(1);
  s.threshold.resize(static_cast<std::size_t>(kEntries * width));
  for (int e = 0; e < kEntries; ++e) {
    double t = first_bad[static_cast<std::size_t>(e)];
    for (int j = 0; j < width; ++j) {
      s.threshold[static_cast<std::size_t>(e * width + j)] = t;
      t *= stay_bad;
    }
  }

  s.cut = kind_cuts(kinds);
  int k = 0;
  for (int i = 0; i < 256; ++i) {
    const std::uint64_t word = static_cast<std::uint64_t>(i) << 24;
    while (word >= s.cut[static_cast<std::size_t>(k)]) ++k;
    s.guide[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(k);
  }
  return s;
}

}  // namespace relsim
