// relsim check: regression check of the exact engine against known values.
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/sweep/known_values.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

struct CheckArgs {
  std::string file;
  std::string method = "matrix";
  bool json = false;
};

int run_check(const CheckArgs& a) {
  if (a.method != "matrix" && a.method != "enumerate")
    throw InputError(fmt::format("method = '{}' is not a method for check: use matrix or enumerate", a.method));
  const auto rows = read_known_values(a.file);
  int misses = 0;
  Json results = Json::array();
  for (const auto& kv : rows) {
    ExactOptions opt;
    opt.distribution = false;
    const double got = a.method == "matrix" ? exact_matrix(kv.model, kv.policy, opt).success
                                            : exact_enumerate(kv.model, kv.policy).success;
    const double diff = std::abs(got - kv.expected);
    const bool ok = diff <= kv.tolerance;
    misses += ok ? 0 : 1;
    const std::string what =
        fmt::format("p={} q={} r={} n={} b={} g={} chain={}", kv.model.p, kv.model.q, kv.policy.r, kv.policy.n,
                    kv.model.b, kv.model.g, to_string(kv.model.chain));
    if (a.json) {
      results.push_back(Json{{"line", kv.line}, {"case", what}, {"expected", kv.expected}, {"computed", got},
                             {"abs_diff", diff}, {"tolerance", kv.tolerance}, {"ok", ok}, {"source", kv.source}});
    } else if (!ok) {
      out() << fmt::format("MISS {}:{}: {}: computed {:.17g}, expected {:.17g}, |diff| {:.3g} > tolerance {:.3g}\n",
                               a.file, kv.line, what, got, kv.expected, diff, kv.tolerance);
    }
  }
  if (a.json) {
    out() << dump_json(Json{{"file", a.file}, {"method", a.method}, {"cases", rows.size()}, {"misses", misses},
                                {"results", results}})
              << "\n";
  } else {
    out() << fmt::format("{}: {} cases, {} passed, {} missed ({})\n", a.file, rows.size(),
                             static_cast<int>(rows.size()) - misses, misses, a.method);
  }
  return misses == 0 ? 0 : kExitMiss;
}

}  // namespace

Runner add_check(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  auto* cmd = app.add_subcommand("check", "regression check against a CSV of known values; exit 1 on any miss");
  cmd->add_option("file", args->file, "CSV with columns p,q,r,n,b,g,chain,expected,tolerance[,source]")->required();
  cmd->add_option("--method", args->method, "matrix or enumerate")->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object instead of a summary");
  return [args] { return run_check(*args); };
}

}  // namespace relsim::cli
