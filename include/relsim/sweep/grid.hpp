#pragma once
// Parameter axes for sweeps: a single value ("0.3"), a list ("0.3,0.6,0.9")
// or an inclusive range start:stop:step ("0.05:0.5:0.05"). Range values are
// start + i step, rounded to 12 significant digits so that 0.15 is 0.15, not
// 0.15000000000000002.
#include <cstdint>
#include <string_view>
#include <vector>

#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"

namespace relsim {

inline constexpr std::size_t kMaxAxisValues = 1'000'000;
// A real axis takes fewer: each of its values is rounded to 12 significant
// digits through its decimal text, and 900,000 of them took over 30 s in the
// fuzzer (tests/fuzz/fuzz_cli_options.cpp); no sweep runs that many points.
inline constexpr std::size_t kMaxRealAxisValues = 100'000;

// Throws InputError naming the axis and the offending text: empty items, a
// malformed or non-finite number, a step <= 0, stop < start, duplicates, or
// more than kMaxAxisValues values (kMaxRealAxisValues for a real axis).
std::vector<double> parse_real_axis(std::string_view spec, std::string_view name);
std::vector<long long> parse_integer_axis(std::string_view spec, std::string_view name);

// "fresh", "continuous" or a comma list of them.
std::vector<ChainScope> parse_chain_axis(std::string_view spec);

// "simple", ..., or a comma list of policy words, each at most once.
std::vector<PolicyKind> parse_policy_axis(std::string_view spec);

// Backoff schedules (parse_backoff) separated by commas: a comma followed by
// a letter starts the next schedule, so "sdk,none,exp:1,30,0,list:1,2,4" is
// four. Each schedule at most once.
std::vector<Backoff> parse_backoff_axis(std::string_view spec);

}  // namespace relsim
