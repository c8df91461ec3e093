// relsim exact: the transfer matrix, enumeration, or both side by side.
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/exact/report.hpp"
#include "relsim/parallel/parallel.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

struct ExactArgs {
  ModelArgs model;
  std::string method = "matrix";
  int max_length = kDefaultMaxEnumerateLength;
  int threads = 0;
  double distribution_work = ExactOptions{}.max_distribution_work;
  bool json = false;
};

// Under mpirun every rank computes the same result (the enumeration split
// over them); rank 0 alone prints.
void print(const Model& model, const Policy& policy, const ExactResult& r, bool json) {
  if (!parallel::world().root()) return;
  std::cout << (json ? dump_json(exact_json(model, policy, r)) + "\n" : exact_table(model, policy, r));
}

int run_exact(const ExactArgs& a) {
  const Model model = a.model.model();
  const Policy policy = a.model.policy();
  if (a.method != "matrix" && a.method != "enumerate" && a.method != "both")
    throw InputError(fmt::format("method = '{}' is not a method: use matrix, enumerate or both", a.method));
  if (!(a.distribution_work >= 0.0))
    throw InputError(fmt::format("distribution-work = {} is out of range: it must be >= 0", a.distribution_work));
  const EnumerateOptions eopt{a.max_length, a.threads, a.model.fault_weights()};
  const parallel::Share ranks = parallel::world();
  ExactOptions mopt;
  mopt.max_distribution_work = a.distribution_work;
  mopt.kinds = a.model.fault_weights();
  if (a.method != "matrix" && policy.kind != PolicyKind::simple)
    throw InputError(fmt::format("method = {} covers the simple policy only, not policy = {}: use --method matrix",
                                 a.method, to_string(policy.kind)));
  if (a.method == "enumerate") {
    print(model, policy, exact_enumerate(model, policy, eopt, ranks), a.json);
    return 0;
  }
  if (a.method == "matrix") {
    print(model, policy, exact_matrix(model, policy, mopt), a.json);
    return 0;
  }
  // Refuse an over-long enumeration before spending time on the matrix.
  const ExactResult e = exact_enumerate(model, policy, eopt, ranks);
  const ExactResult m = exact_matrix(model, policy, mopt);
  const double diff = max_abs_diff(m, e);
  if (!parallel::world().root()) return 0;
  if (a.json) {
    Json j = exact_json(model, policy, m);
    j["method"] = "both";
    j["enumerate_success"] = e.success;
    j["max_abs_diff"] = diff;
    std::cout << dump_json(j) << "\n";
  } else {
    std::cout << exact_table(model, policy, m) << exact_table(model, policy, e)
              << fmt::format("max |matrix - enumerate| over success, env_error and every bin: {:.3g}\n", diff);
  }
  return 0;
}

}  // namespace

Runner add_exact(CLI::App& app) {
  auto args = std::make_shared<ExactArgs>();
  auto* cmd = app.add_subcommand("exact", "exact P(success), outcomes and requests per task, for any policy");
  add_model_options(*cmd, args->model);
  add_policy_options(*cmd, args->model);
  cmd->add_option("--method", args->method, "matrix (transfer matrix), enumerate (all 2^(n(r+1)) sequences) or both")
      ->capture_default_str();
  cmd->add_option("--max-length", args->max_length,
                  fmt::format("refuse enumeration above this n(r+1), at most {}", kHardMaxEnumerateLength))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "OpenMP threads for enumeration (0: OpenMP's default)")
      ->capture_default_str();
  cmd->add_option("--distribution-work", args->distribution_work,
                  "bin updates the matrix may spend on the requests distribution before leaving it out")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object instead of a table");
  return [args] { return run_exact(*args); };
}

}  // namespace relsim::cli
