#pragma once
// Weights by name, as the command line gives them ("cut=1,stall=2"): the
// fault kinds of the model (core/faults.hpp) and BugHunt's page faults
// (live/bughunt_plan.hpp) are read by the same rules.
#include <cstddef>
#include <functional>
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

// Parses `spec` into `count` weights: each name at most once, each weight a
// finite number >= 0, the total finite and > 0; a name left out weighs 0.
// Throws InputError naming the option, the item and the valid range.
std::vector<double> parse_named_weights(std::string_view spec, std::size_t count, const WeightWords& words);

// "name=weight" for every weight > 0, comma-separated, in index order.
std::string named_weights_string(const std::vector<double>& weights, const WeightWords& words);

}  // namespace relsim
