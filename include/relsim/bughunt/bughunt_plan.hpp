#pragma once
// BugHunt's fault plan (docs/bughunt.md, "Faults from the chain"): for each
// run of a testing agent, what every page load it makes meets, drawn from
// the fault chain. One load is one chain step; `b` silent steps lie between
// two loads of a run (the reload's delay); a fresh chain starts each run from
// the stationary law, a continuous one carries on from the run before, `g`
// silent steps after its last load. A failed load meets one of the page
// faults, picked by weight. The plan lists a run's loads as far as the
// tester reads them (the oracle, exact/triage.hpp's judge), so a live run
// that makes another load than planned shows as a mismatch.
//
// Draws: Philox (core/rng.hpp), stream page_load for whether load j of run i
// fails (one uniform each) and page_fault for its fault (one uniform each),
// so a plan is the same for a seed whatever else changes.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "relsim/core/model.hpp"
#include "relsim/exact/triage.hpp"

namespace relsim {

// How a failed load fails, as the browser injects it: the connection reset,
// a 503, or an answer slower than the page's 1 s timeout.
enum class PageFault { reset, http_503, slow };
inline constexpr int kPageFaults = 3;
std::string_view to_string(PageFault fault);  // "reset", "503", "slow"
PageFault parse_page_fault(std::string_view word);  // throws InputError

struct PageFaultWeights {
  std::array<double, kPageFaults> weight{1.0, 1.0, 1.0};
};
// Parses "reset=1,503=2,slow=0": each fault named at most once, weights
// finite and >= 0, total > 0; an unnamed fault weighs 0. Throws InputError.
PageFaultWeights parse_page_fault_weights(std::string_view spec);
std::string to_string(const PageFaultWeights& weights);

using PageLoad = std::optional<PageFault>;  // nullopt: the load works
std::string_view to_string(const PageLoad& load);  // "ok" or the fault

struct BughuntRun {
  std::vector<PageLoad> loads;  // as many as the tester makes
  RunVerdict oracle;            // what the tester must conclude from them
};

inline constexpr std::int64_t kMaxBughuntRuns = 10'000;

// Runs 0 .. runs-1. Throws InputError for an invalid model, reloads or run
// count out of [1, kMaxBughuntRuns], or weights whose total is not > 0.
std::vector<BughuntRun> draw_bughunt_plan(const Model& model, Tester tester, int reloads, AppVersion version,
                                          const PageFaultWeights& weights, std::int64_t runs, std::uint64_t seed);

}  // namespace relsim
