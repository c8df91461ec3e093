#pragma once
// Weights by name, as the command line gives them ("cut=1,stall=2"): the
// fault kinds of the model (core/faults.hpp) and BugHunt's page faults
// (bughunt/bughunt_plan.hpp) are read by the same rules.
#include <cstddef>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace relsim {

struct WeightWords {
  std::string_view option;   // the option's name in messages: "kinds"
  std::string_view item;     // what one name is: "kind"
  std::string_view example;  // a valid spec: "cut=1,stall=2"
  std::string names;         // every valid name, for the message of an empty spec
  // The index of a name, in [0, count); throws InputError for an unknown one.
  std::function<std::size_t(std::string_view)> index_of;
  std::function<std::string_view(std::size_t)> name_of;
};

// What a value may be, beyond finite and >= 0: at most `max`, and whether
// all of them may be 0 (probabilities by name, such as --tool-faults, may;
// weights to pick by may not). `value` names one in messages.
struct ValueRange {
  double max = std::numeric_limits<double>::infinity();
  bool total_may_be_zero = false;
  std::string_view value = "weight";
};

// Parses `spec` into `count` values: each name at most once, each value a
// finite number in [0, range.max], the total finite and > 0 unless the range
// allows 0; a name left out is 0. Throws InputError naming the option, the
// item and the valid range.
std::vector<double> parse_named_weights(std::string_view spec, std::size_t count, const WeightWords& words,
                                        const ValueRange& range = {});

// The index a uniform u in [0, 1) picks among `weights` (each >= 0, `total`
// their sum, > 0): the first whose cumulative weight exceeds u * total; a
// u * total rounded up to the total picks the last positive weight.
std::size_t pick_by_weight(std::span<const double> weights, double total, double u);

// "name=weight" for every weight > 0, comma-separated, in index order.
std::string named_weights_string(const std::vector<double>& weights, const WeightWords& words);

}  // namespace relsim
