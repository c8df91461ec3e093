// libFuzzer target: the command line's value parsers that take more than a
// word: the sweep axes (grid.hpp: a value, a list a,b,c or a range
// start:stop:step, for reals, integers and chain scopes; the policy and
// backoff axes) and the fault-kind weights of --kinds (faults.hpp). The first
// byte picks the parser, the rest
// is the option's text. InputError is their answer to bad input; anything
// else escaping, a crash or a sanitizer report is a bug, and so is an
// accepted value that breaks the promises of the header (finite, distinct,
// at most kMaxAxisValues; a range inside [start, stop]; weights and backoff
// schedules that print and parse back to themselves).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "relsim/core/error.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/sweep/grid.hpp"
#include "relsim/sweep/known_values.hpp"

namespace {

template <class T>
void check_axis(const std::vector<T>& values) {
  if (values.empty() || values.size() > relsim::kMaxAxisValues) std::abort();
  if (std::set<T>(values.begin(), values.end()).size() != values.size()) std::abort();
  for (const T v : values)
    if (!std::isfinite(static_cast<double>(v))) std::abort();
}

// A single integer range start:stop:step must stay inside [start, stop] in
// steps of `step`.
void check_integer_range(std::string_view spec, const std::vector<long long>& values) {
  if (spec.find(',') != std::string_view::npos) return;
  const std::size_t a = spec.find(':');
  if (a == std::string_view::npos) return;
  const std::size_t b = spec.find(':', a + 1);
  const long long start = relsim::parse_integer(std::string(spec.substr(0, a)), "start");
  const long long stop = relsim::parse_integer(std::string(spec.substr(a + 1, b - a - 1)), "stop");
  const long long step = relsim::parse_integer(std::string(spec.substr(b + 1)), "step");
  if (values.front() != start) std::abort();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] < start || values[i] > stop) std::abort();
    if (i > 0 && values[i] - values[i - 1] != step) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view spec(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 6) {
      case 0: check_axis(relsim::parse_real_axis(spec, "p")); break;
      case 1: {
        const auto values = relsim::parse_integer_axis(spec, "n");
        check_axis(values);
        check_integer_range(spec, values);
        break;
      }
      case 2: {
        const auto scopes = relsim::parse_chain_axis(spec);
        if (scopes.empty() || scopes.size() > 2) std::abort();
        break;
      }
      case 3: {
        const relsim::FaultWeights w = relsim::parse_fault_weights(spec);
        if (!(w.total() > 0.0 && std::isfinite(w.total()))) std::abort();
        if (relsim::parse_fault_weights(relsim::to_string(w)).weight != w.weight) std::abort();
        break;
      }
      case 4: {
        const auto kinds = relsim::parse_policy_axis(spec);
        if (kinds.empty() || kinds.size() > 4) std::abort();
        break;
      }
      case 5:
        for (const relsim::Backoff& b : relsim::parse_backoff_axis(spec)) {
          const std::string text = relsim::to_string(b);
          if (relsim::to_string(relsim::parse_backoff(text)) != text) std::abort();
          for (int k = 0; k < 64; ++k)
            if (!(b.max_wait(k) >= 0.0 && b.max_wait(k) <= relsim::kMaxSeconds)) std::abort();
        }
        break;
    }
  } catch (const relsim::InputError&) {
  }
  return 0;
}
