// distinct_sequences (relsim/fit/baum_welch.hpp): the tasks folded into distinct sequences with
// counts, so that Baum-Welch does one forward-backward pass per distinct sequence.
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/fit/baum_welch.hpp"

namespace relsim::fit {

Sequences distinct_sequences(const std::vector<std::vector<std::uint8_t>>& tasks) {
  Sequences out;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const std::vector<std::uint8_t>& seq = tasks[t];
    if (seq.empty()) continue;
    for (std::uint8_t v : seq) {
      if (v > 1)
        throw InputError(fmt::format("task {} has outcome value {}: use 0 (good) or 1 (bad)", t, int(v)));
      out.bad += v;
    }
    out.records += std::int64_t(seq.size());
    const std::string key(reinterpret_cast<const char*>(seq.data()), seq.size());
    const auto [it, inserted] = index.try_emplace(key, out.distinct.size());
    if (inserted) {
      out.distinct.push_back(seq);
      out.count.push_back(1.0);
    } else {
      out.count[it->second] += 1.0;
    }
  }
  return out;
}

}  // namespace relsim::fit
