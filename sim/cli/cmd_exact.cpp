// relsim exact: the transfer matrix, enumeration, or both side by side; in
// time mode (--t-good, --t-bad) the same engine with steps in seconds.
#include <iostream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/exact/report.hpp"
#include "relsim/parallel/parallel.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

struct ExactArgs {
  ModelArgs model;
  TimeArgs time;
  std::string method = "matrix";
  int max_length = kDefaultMaxEnumerateLength;
  int threads = 0;
  double distribution_work = ExactOptions{}.max_distribution_work;
  bool json = false;
  std::string csv, seconds_csv;  // "-": stdout, instead of the table
};

// The distributions asked for by --csv and --seconds-csv: (path, text). All
// checks come first, so that an error leaves no file behind.
std::vector<std::pair<std::string, std::string>> csv_outputs(const ExactArgs& a, const ExactResult& r,
                                                             const std::optional<TimeModel>& time) {
  std::vector<std::pair<std::string, std::string>> out;
  if (a.csv == "-" && a.seconds_csv == "-")
    throw InputError("--csv - and --seconds-csv - both want stdout: give one of them a file");
  if (a.json && (a.csv == "-" || a.seconds_csv == "-"))
    throw InputError("--json and a CSV on stdout (-) both want stdout: give the CSV a file");
  if (!a.csv.empty()) {
    if (!r.distribution_complete)
      throw InputError("--csv: the requests distribution is too large to compute exactly here "
                       "(raise --distribution-work)");
    out.emplace_back(a.csv, requests_csv(r));
  }
  if (!a.seconds_csv.empty()) {
    if (!time) throw InputError("--seconds-csv applies in time mode only: give --t-good and --t-bad");
    if (!r.seconds_complete) throw InputError("--seconds-csv: " + seconds_quantiles_note(*time, r));
    out.emplace_back(a.seconds_csv, seconds_csv(r));
  }
  return out;
}

// Writes the CSVs; returns whether stdout took one (then no table follows).
bool write_csvs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  bool to_stdout = false;
  for (const auto& [path, text] : outputs) {
    if (path == "-") {
      out() << text;
      to_stdout = true;
    } else {
      write_file_atomically(path, text);
    }
  }
  return to_stdout;
}

// Under mpirun every rank computes the same result (the enumeration split
// over them); rank 0 alone prints.
void print(const ExactArgs& a, const Model& model, const Policy& policy, const ExactResult& r) {
  if (!ranks().root()) return;
  if (write_csvs(csv_outputs(a, r, std::nullopt))) return;
  out() << (a.json ? dump_json(exact_json(model, policy, r)) + "\n" : exact_table(model, policy, r));
}

ExactOptions matrix_options(const ExactArgs& a) {
  if (!(a.distribution_work >= 0.0))
    throw InputError(fmt::format("distribution-work = {} is out of range: it must be >= 0", a.distribution_work));
  ExactOptions mopt;
  mopt.max_distribution_work = a.distribution_work;
  mopt.kinds = a.model.fault_weights();
  return mopt;
}

int run_exact_time(const ExactArgs& a, const TimeModel& time) {
  const Policy policy = a.model.policy();
  if (a.method != "matrix")
    throw InputError(fmt::format("method = '{}': time mode (--t-good, --t-bad) uses --method matrix", a.method));
  const ExactResult r = exact_time(time, policy, matrix_options(a));
  if (!ranks().root()) return 0;
  if (write_csvs(csv_outputs(a, r, time))) return 0;
  if (a.json) out() << dump_json(exact_time_json(a.time.chain_json(time), time, policy, r)) << "\n";
  else out() << exact_time_table(a.time.chain_words(time), time, policy, r);
  return 0;
}

int run_exact(const ExactArgs& a) {
  if (const std::optional<TimeModel> time = a.time.time_model(a.model)) return run_exact_time(a, *time);
  const Model model = a.model.model();
  const Policy policy = a.model.policy();
  if (a.method != "matrix" && a.method != "enumerate" && a.method != "both")
    throw InputError(fmt::format("method = '{}' is not a method: use matrix, enumerate or both", a.method));
  const ExactOptions mopt = matrix_options(a);
  const EnumerateOptions eopt{a.max_length, a.threads, a.model.fault_weights()};
  const parallel::Share share = ranks();
  if (a.method != "matrix" && policy.kind != PolicyKind::simple)
    throw InputError(fmt::format("method = {} covers the simple policy only, not policy = {}: use --method matrix",
                                 a.method, to_string(policy.kind)));
  if (a.method == "enumerate") {
    print(a, model, policy, exact_enumerate(model, policy, eopt, share));
    return 0;
  }
  if (a.method == "matrix") {
    print(a, model, policy, exact_matrix(model, policy, mopt));
    return 0;
  }
  // Refuse an over-long enumeration before spending time on the matrix.
  const ExactResult e = exact_enumerate(model, policy, eopt, share);
  const ExactResult m = exact_matrix(model, policy, mopt);
  const double diff = max_abs_diff(m, e);
  if (!share.root()) return 0;
  if (write_csvs(csv_outputs(a, m, std::nullopt))) return 0;
  if (a.json) {
    Json j = exact_json(model, policy, m);
    j["method"] = "both";
    j["enumerate_success"] = e.success;
    j["max_abs_diff"] = diff;
    out() << dump_json(j) << "\n";
  } else {
    out() << exact_table(model, policy, m) << exact_table(model, policy, e)
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
  add_time_options(*cmd, args->time);
  cmd->add_option("--csv", args->csv,
                  "write the requests distribution here as CSV (requests,outcome,probability), atomically; "
                  "-: to stdout instead of the table");
  cmd->add_option("--seconds-csv", args->seconds_csv,
                  "time mode, fixed waits: write the wall-time distribution here as CSV "
                  "(seconds,outcome,probability), atomically; -: to stdout instead of the table");
  return [args] { return run_exact(*args); };
}

}  // namespace relsim::cli
