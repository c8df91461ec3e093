// BugHunt's fault plan (bughunt_plan.hpp): the chain stepped load by load,
// each run read as far as its tester reads it.
#include "relsim/bughunt/bughunt_plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/core/weights.hpp"

namespace relsim {
namespace {

constexpr std::array<std::string_view, kPageFaults> kNames{"reset", "503", "slow"};

std::string all_names() { return fmt::format("{}", fmt::join(kNames, ", ")); }

const WeightWords& fault_words();

}  // namespace

std::string_view to_string(PageFault fault) { return kNames[static_cast<std::size_t>(fault)]; }
std::string_view to_string(const PageLoad& load) { return load ? to_string(*load) : "ok"; }

PageFault parse_page_fault(std::string_view word) {
  for (int k = 0; k < kPageFaults; ++k)
    if (word == kNames[static_cast<std::size_t>(k)]) return static_cast<PageFault>(k);
  throw InputError(fmt::format("page fault = '{}' is not a fault: use {}", word, all_names()));
}

namespace {

const WeightWords& fault_words() {
  static const WeightWords words{
      "kinds", "fault", "reset=1,503=1", all_names(),
      [](std::string_view name) { return static_cast<std::size_t>(parse_page_fault(name)); },
      [](std::size_t i) { return kNames.at(i); }};
  return words;
}

}  // namespace

PageFaultWeights parse_page_fault_weights(std::string_view spec) {
  const std::vector<double> parsed = parse_named_weights(spec, kPageFaults, fault_words());
  PageFaultWeights w;
  std::copy(parsed.begin(), parsed.end(), w.weight.begin());
  return w;
}

std::string to_string(const PageFaultWeights& w) {
  return named_weights_string(std::vector<double>(w.weight.begin(), w.weight.end()), fault_words());
}

std::vector<BughuntRun> draw_bughunt_plan(const Model& model, Tester tester, int reloads, AppVersion version,
                                          const PageFaultWeights& weights, std::int64_t runs, std::uint64_t seed) {
  validate(model);
  if (runs < 1 || runs > kMaxBughuntRuns)
    throw InputError(fmt::format("runs = {} is out of range: it must be in [1, {}]", runs, kMaxBughuntRuns));
  if (reloads < 0 || reloads > kMaxReloads)
    throw InputError(fmt::format("reloads = {} is out of range: it must be in [0, {}]", reloads, kMaxReloads));
  const double total = weights.weight[0] + weights.weight[1] + weights.weight[2];
  if (!(total > 0.0 && std::isfinite(total)))
    throw InputError(fmt::format("kinds = '{}' has total weight {}: it must be finite and > 0", to_string(weights), total));
  const Chain chain = gilbert_chain(model);
  const int most = tester == Tester::naive ? 1 : reloads + 1;
  std::vector<BughuntRun> plan(static_cast<std::size_t>(runs));
  bool last_bad = false;  // the state at the run before's last load (continuous chain)
  for (std::int64_t i = 0; i < runs; ++i) {
    const auto run = static_cast<std::uint64_t>(i);
    BughuntRun& r = plan[static_cast<std::size_t>(i)];
    std::vector<bool> failed;
    // P(the first load fails): the stationary law, or one step of g + 1 on.
    double p_bad = model.chain == ChainScope::continuous && i > 0 ? chain.gap(last_bad ? 1 : 0, 1) : chain.initial(1);
    for (int load = 0; load < most; ++load) {
      const bool bad = rng::uniform(seed, rng::Stream::page_load, run, static_cast<std::uint64_t>(load)) < p_bad;
      failed.push_back(bad);
      r.loads.push_back(bad ? PageLoad(static_cast<PageFault>(pick_by_weight(
                                  weights.weight, total,
                                  rng::uniform(seed, rng::Stream::page_fault, run, static_cast<std::uint64_t>(load)))))
                            : PageLoad());
      last_bad = bad;
      if (!bad || tester == Tester::naive) break;
      p_bad = chain.retry(1, 1);  // a reload b + 1 steps after a failed load
    }
    r.oracle = judge(tester, reloads, version, failed);
  }
  return plan;
}

}  // namespace relsim
