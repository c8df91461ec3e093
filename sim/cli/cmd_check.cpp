// relsim check: regression check of the exact engine against known values.
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/sweep/known_values.hpp"
#include "relsim/sweep/known_values_report.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {
namespace {

struct CheckArgs {
  std::string file;
  std::string method = "matrix";
  bool json = false;
};

int run_check(const CheckArgs& a) {
  // A miss is printed as soon as it is found, before a later row can fail.
  const auto show_miss = [&](const KnownValueCheck& row) {
    if (!a.json) out() << known_value_miss_text(a.file, row);
  };
  const KnownValuesCheck check = check_known_values(a.file, a.method, show_miss);
  out() << (a.json ? dump_json(known_values_json(check)) + "\n" : known_values_summary_text(check));
  return check.misses == 0 ? 0 : kExitMiss;
}

}  // namespace

Runner add_check(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  auto* cmd = app.add_subcommand("check", "regression check against a CSV of known values; exit 1 on any miss");
  cmd->add_option("file", args->file, "CSV with columns p,q,r,n,b,g,chain,expected,tolerance[,source]")->required();
  check_value<std::string>(cmd->add_option("--method", args->method, "matrix or enumerate")->capture_default_str(),
                           [](const std::string& method) {
                             if (method != "matrix" && method != "enumerate")
                               throw InputError(fmt::format(
                                   "method = '{}' is not a method for check: use matrix or enumerate", method));
                           });
  cmd->add_flag("--json", args->json, "print one JSON object instead of a summary");
  return [args] { return run_check(*args); };
}

}  // namespace relsim::cli
