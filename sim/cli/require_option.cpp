#include "cli/require_option.hpp"

#include <iostream>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {

CLI::Option* add_require_option(CLI::App& cmd, std::string& spec, std::vector<std::string> metrics) {
  // The help first: the validator below takes `metrics` over.
  const std::string help = fmt::format("thresholds for CI, e.g. 'success>=0.995,requests_per_task<=45': exit 1 with "
                                       "one line per threshold missed (docs/thresholds.md); metrics: {}",
                                       fmt::join(metrics, ", "));
  return check_value<std::string>(cmd.add_option("--require", spec, help),
                                  [metrics = std::move(metrics)](const std::string& text) {
                                    parse_thresholds(text, metrics);
                                  });
}

int require_verdict(const std::string& spec, const std::vector<std::string>& metrics, const Measured& measured) {
  if (spec.empty()) return 0;
  const std::vector<std::string> missed = missed_lines(check_thresholds(parse_thresholds(spec, metrics), measured));
  for (const std::string& line : missed) notes() << "relsim: " << line << "\n";
  return missed.empty() ? 0 : kExitMiss;
}

}  // namespace relsim::cli
