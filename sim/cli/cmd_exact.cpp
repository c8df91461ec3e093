// relsim exact: the transfer matrix, enumeration, or both side by side; in
// time mode (--t-good, --t-bad) the same engine with steps in seconds; with
// --target and --solve, the smallest r, s, b or B that meets a target.
#include <algorithm>
#include <iostream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/exact/fallback_report.hpp"
#include "relsim/exact/report.hpp"
#include "relsim/exact/solve.hpp"
#include "relsim/exact/solve_report.hpp"
#include "relsim/exact/triage.hpp"
#include "relsim/exact/triage_report.hpp"
#include "relsim/parallel/parallel.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"
#include "cli/require_option.hpp"

namespace relsim::cli {
namespace {

struct ExactArgs {
  ModelArgs model;
  TimeArgs time;
  ToolArgs tools;
  BillingArgs billing;
  FallbackArgs fallback;
  std::string method = "matrix";
  int max_length = kDefaultMaxEnumerateLength;
  int threads = 0;
  double distribution_work = ExactOptions{}.max_distribution_work;
  bool json = false;
  std::string csv, seconds_csv;  // "-": stdout, instead of the table
  double target = 0.0;
  std::string solve;             // r, s, b or B; empty: no search
  std::string triage;            // naive or careful; empty: the agent's task
  std::string require;           // --require: thresholds for CI
  int reloads = 1;
  CLI::Option* r_option = nullptr;
  CLI::Option* reloads_option = nullptr;
  CLI::Option* n_option = nullptr;
  CLI::Option* target_option = nullptr;
};

// The distributions asked for by --csv and --seconds-csv: (path, text). All
// checks come first, so that an error leaves no file behind.
std::vector<std::pair<std::string, std::string>> csv_outputs(const ExactArgs& a, const ExactResult& r,
                                                             const std::optional<TimeModel>& time) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!a.csv.empty()) {
    if (!r.distribution_complete)
      throw InputError("--csv: the requests distribution is too large to compute exactly here "
                       "(raise --distribution-work)");
    out.emplace_back(a.csv, requests_csv(r));
  }
  if (!a.seconds_csv.empty()) {
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

// --require's verdict on a result (`time`: a time-mode one), the exit code.
int verdict(const ExactArgs& a, const ExactResult& r, const TimeModel* time) {
  return require_verdict(a.require, kExactMetrics, exact_measured(r, time));
}

// Under mpirun every rank computes the same result (the enumeration split
// over them); rank 0 alone prints. Returns the exit code.
int print(const ExactArgs& a, const Model& model, const Policy& policy, const ExactResult& r) {
  if (!ranks().root()) return 0;
  if (!write_csvs(csv_outputs(a, r, std::nullopt)))
    out() << (a.json ? dump_json(exact_json(model, policy, a.model.fault_weights(), r)) + "\n"
                     : exact_table(model, policy, a.model.fault_weights(), r));
  return verdict(a, r, nullptr);
}

// The fallback is checked against `policy` (--solve: the searched value at its limit).
ExactOptions matrix_options(const ExactArgs& a, const Policy& policy) {
  ExactOptions mopt;
  mopt.max_distribution_work = a.distribution_work;
  mopt.kinds = a.model.fault_weights();
  mopt.billing = a.billing.parsed();
  if (a.fallback.after_option->count()) mopt.fallback = a.fallback.parsed(mopt.kinds, policy);
  return mopt;
}
ExactOptions matrix_options(const ExactArgs& a) { return matrix_options(a, a.model.policy()); }

int run_exact_time(const ExactArgs& a, const TimeModel& time) {
  const Policy policy = a.model.policy();
  const ExactResult r = exact_time(time, policy, matrix_options(a));
  if (!ranks().root()) return 0;
  if (!write_csvs(csv_outputs(a, r, time))) {
    if (a.json)
      out() << dump_json(exact_time_json(a.time.chain_json(time), time, policy, a.model.fault_weights(), r)) << "\n";
    else out() << exact_time_table(a.time.chain_words(time), time, policy, a.model.fault_weights(), r);
  }
  return verdict(a, r, &time);
}

int run_solve(const ExactArgs& a, const std::optional<TimeModel>& time) {
  const SolveParam param = parse_solve_param(a.solve);
  ModelArgs args = a.model;
  // Any valid value: it is searched.
  if (param == SolveParam::r) args.r = 0;
  if (param == SolveParam::B) args.B = 1;
  const Policy base = args.policy();
  // A fallback is checked against the search's largest value, the solver's range then starting where a call
  // sends at least its K requests.
  const ExactOptions options = matrix_options(a, with_value(base, param, solve_range(param, base, time.has_value()).second));
  SolveResult result;
  Json head;
  std::string words;
  if (time) {
    result = solve_exact_time(*time, base, param, a.target, options);
    head = time_head_json(a.time.chain_json(*time), *time, base);
    words = a.time.chain_words(*time);
  } else {
    const Model model = args.model();
    result = solve_exact(model, base, param, a.target, options);
    head = model_json(model, base);
    words = solve_model_words(model, param);
  }
  if (options.fallback) {
    const double p = time ? time->chain.bad_share() : args.model().p;
    head["fallback"] = fallback_json(p, *options.fallback);
    words += "; fallback " + fallback_words(p, *options.fallback);
  }
  if (!ranks().root()) return result.found ? 0 : kExitMiss;
  out() << (a.json ? dump_json(solve_answer_json(head, result)) + "\n" : solve_answer_text(result, words, base));
  return result.found ? 0 : kExitMiss;
}

// A testing agent's verdicts (--triage): one run of page loads, no task.
int run_triage(const ExactArgs& a) {
  const Tester tester = parse_tester(a.triage);
  const Model model = a.model.model();
  const TriageRates rates = triage_exact(model, tester, a.reloads);
  out() << (a.json ? dump_json(triage_json(model, tester, a.reloads, rates)) + "\n"
                   : triage_table(model, tester, a.reloads, rates));
  return 0;
}

int run_exact(const ExactArgs& a) {
  const std::optional<ToolModel> tools = a.tools.tool_model();
  if (!a.triage.empty()) return run_triage(a);
  if (!a.n_option->count()) throw InputError("--n is required");
  if (!a.solve.empty()) return run_solve(a, a.time.time_model(a.model));
  if (!a.r_option->count()) throw InputError("--r is required (only --solve r goes without it)");
  if (const std::optional<TimeModel> time = a.time.time_model(a.model)) return run_exact_time(a, *time);
  const Model model = a.model.model();
  const Policy policy = a.model.policy();
  ExactOptions mopt = matrix_options(a);
  mopt.tools = tools;
  const EnumerateOptions eopt{a.max_length, a.threads, a.model.fault_weights()};
  const parallel::Share share = ranks();
  if (a.method != "matrix" && policy.kind != PolicyKind::simple)
    throw InputError(fmt::format("method = {} covers the simple policy only, not policy = {}: use --method matrix",
                                 a.method, to_string(policy.kind)));
  if (a.method == "enumerate") return print(a, model, policy, exact_enumerate(model, policy, eopt, share));
  if (a.method == "matrix") return print(a, model, policy, exact_matrix(model, policy, mopt));
  // Refuse an over-long enumeration before spending time on the matrix.
  const ExactResult e = exact_enumerate(model, policy, eopt, share);
  const ExactResult m = exact_matrix(model, policy, mopt);
  const double diff = max_abs_diff(m, e);
  if (!share.root()) return 0;
  if (write_csvs(csv_outputs(a, m, std::nullopt))) return verdict(a, m, nullptr);
  if (a.json) {
    Json j = exact_json(model, policy, a.model.fault_weights(), m);
    j["method"] = "both";
    j["enumerate_success"] = e.success;
    j["max_abs_diff"] = diff;
    out() << dump_json(j) << "\n";
  } else {
    out() << exact_table(model, policy, a.model.fault_weights(), m) << exact_table(model, policy, a.model.fault_weights(), e)
              << fmt::format("max |matrix - enumerate| over success, env_error and every bin: {:.3g}\n", diff);
  }
  return verdict(a, m, nullptr);
}

// The options that the rules below name, besides those ExactArgs keeps.
struct ExactOptionsGiven {
  CLI::Option *method, *distribution_work, *solve, *triage, *csv, *seconds_csv, *json;
};

// A string option's value as given (CLI11 has it as soon as it has parsed
// the line, before it converts any option), or "" when it was not given.
std::string given_text(const CLI::Option* option) {
  return option->count() ? option->results().back() : std::string();
}

// The rules that name a value: of the option they sit on, or of another
// option as given (given_text).
void declare_exact_value_rules(const ExactArgs& a, const ExactOptionsGiven& o) {
  const std::function<bool()> timed = a.time.timed_rule();
  check_value<std::string>(o.method, [timed, tools = a.tools.faults_option, solve = o.solve](const std::string& method) {
    if (method != "matrix" && method != "enumerate" && method != "both")
      throw InputError(fmt::format("method = '{}' is not a method: use matrix, enumerate or both", method));
    if (method == "matrix") return;
    if (tools->count())
      throw InputError(fmt::format("method = '{}': tool calls (--tool-faults) run on the matrix engine only; use "
                                   "--method matrix", method));
    if (solve->count()) throw InputError(fmt::format("method = '{}': --solve uses --method matrix", method));
    if (timed())
      throw InputError(fmt::format("method = '{}': time mode (--t-good, --t-bad) uses --method matrix", method));
  });
  check_value<std::string>(a.tools.faults_option, [o, target = a.target_option](const std::string& faults) {
    const std::string given = fmt::format("tool-faults = '{}'", faults);
    if (o.triage->count())
      throw InputError(given + ": --triage runs page loads, not an agent's task; leave out --tool-faults");
    if (o.solve->count() || target->count())
      throw InputError(given + ": --solve and --target do not support tool calls yet; leave out --tool-faults");
    if (o.csv->count())
      throw InputError(given + ": the requests distribution is not computed with tool calls; leave out --csv");
  });
  check_value<std::string>(o.solve, [r = a.r_option](const std::string& solve) {
    const bool searches_r = parse_solve_param(solve) == SolveParam::r;
    if (!searches_r && !r->count()) throw InputError("--r is required (only --solve r and --triage go without it)");
    if (searches_r && r->count()) throw InputError("--solve r searches r: leave out --r");
  });
  check_value<std::string>(o.triage, [reloads = a.reloads_option](const std::string& triage) {
    if (parse_tester(triage) == Tester::naive && reloads->count())
      throw InputError("--reloads: the naive tester never reloads; give --triage careful");
  });
  check_value<std::string>(o.csv, [o](const std::string& csv) {
    if (csv == "-" && given_text(o.seconds_csv) == "-")
      throw InputError("--csv - and --seconds-csv - both want stdout: give one of them a file");
  });
  for (CLI::Option* csv : {o.csv, o.seconds_csv})
    check_value<std::string>(csv, [json = o.json](const std::string& path) {
      if (path == "-" && json->count())
        throw InputError("--json and a CSV on stdout (-) both want stdout: give the CSV a file");
    });
  refuse_when(o.seconds_csv, [timed] { return !timed(); },
              "--seconds-csv applies in time mode only: give --t-good and --t-bad");
  refuse_when(o.triage, timed, "--triage counts loads as chain steps: leave out the time options");
}

// Which options go together, declared on them (option_rules.hpp); the rules
// left to the run: --n and --r missing (nothing is given to hang a rule on),
// and --method enumerate against the policy's value.
void declare_exact_rules(const ExactArgs& a, const ExactOptionsGiven& o) {
  check_value<double>(o.distribution_work, [](double work) {
    if (!(work >= 0.0)) throw InputError(fmt::format("distribution-work = {} is out of range: it must be >= 0", work));
  });
  needs_option(o.solve, a.target_option, "--solve needs --target, the P(success) to reach, in (0, 1]");
  for (const CLI::Option* out : {o.csv, o.seconds_csv})
    refuse_with(o.solve, out, "--solve prints the answer only: leave out --csv and --seconds-csv");
  for (const CLI::Option* search : {o.solve, a.target_option})
    refuse_with(o.triage, search, "--triage has no --solve or --target");
  for (const CLI::Option* task : {a.r_option, a.n_option})
    refuse_with(o.triage, task,
                "--triage: a run is page loads, not calls with retries: leave out --n and --r (--reloads is how "
                "often a careful tester reloads)");
  for (const CLI::Option* out : {o.csv, o.seconds_csv})
    refuse_with(o.triage, out, "--triage prints rates only: leave out --csv");
  needs_option(a.reloads_option, o.triage, "--reloads needs --triage careful");
  needs_option(a.target_option, o.solve, "--target needs --solve r, s, b or B: the parameter to search");
  for (const CLI::Option* other : {o.solve, o.triage})
    refuse_with(a.billing.price_in_option, other, "--solve and --triage print no cost: leave out the prices");
  check_value<double>(a.billing.price_in_option, [method = o.method](double) {
    if (!given_text(method).empty() && given_text(method) != "matrix")
      throw InputError(fmt::format("method = '{}': the cost per task is computed by --method matrix only",
                                   given_text(method)));
  });
  refuse_with(a.fallback.after_option, o.triage, "--triage has no calls to fall back: leave out --fallback-after");
  refuse_with(a.fallback.after_option, a.tools.faults_option,
              "--fallback-after does not cover tool calls (--tool-faults) yet: leave out one of them");
  refuse_when(a.fallback.after_option, [m = o.method] { return !given_text(m).empty() && given_text(m) != "matrix"; },
              "--fallback-after: a fallback is computed by --method matrix only");
  declare_exact_value_rules(a, o);  // after these: their lines come first
}

}  // namespace

Runner add_exact(CLI::App& app) {
  auto args = std::make_shared<ExactArgs>();
  auto* cmd = app.add_subcommand("exact", "exact P(success), outcomes and requests per task, for any policy");
  add_model_options(*cmd, args->model);
  add_policy_options(*cmd, args->model);
  auto* method = cmd->add_option("--method", args->method,
                                 "matrix (transfer matrix), enumerate (all 2^(n(r+1)) sequences) or both")
                     ->capture_default_str();
  cmd->add_option("--max-length", args->max_length,
                  fmt::format("refuse enumeration above this n(r+1), at most {}", kHardMaxEnumerateLength))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "OpenMP threads for enumeration (0: OpenMP's default)")
      ->capture_default_str();
  auto* distribution_work =
      cmd->add_option("--distribution-work", args->distribution_work,
                      "bin updates the matrix may spend on the requests distribution before leaving it out")
          ->capture_default_str();
  auto* json = cmd->add_flag("--json", args->json, "print one JSON object instead of a table");
  add_time_options(*cmd, args->time);
  add_tool_options(*cmd, args->tools, args->time.timed_rule());
  add_billing_options(*cmd, args->billing);
  add_fallback_options(*cmd, args->fallback, args->billing.price_in_option, args->time.timed_rule());
  args->target_option = cmd->add_option("--target", args->target,
                                        "with --solve: the P(success) to reach, in (0, 1]");
  auto* solve = cmd->add_option("--solve", args->solve,
                  "print the smallest r, s (layered, naive, budgeted), b or B (budgeted) whose exact P(success) "
                  "meets --target, its success and mean requests; exit 1 when no value up to the limit does");
  auto* triage = cmd->add_option("--triage", args->triage,
                  "naive or careful: a testing agent's verdicts instead of the agent's task, one page load per chain "
                  "step (docs/bughunt.md): false bug reports, ENV_ERROR and missed bugs; --b is the reload's delay");
  args->reloads_option =
      cmd->add_option("--reloads", args->reloads,
                      fmt::format("--triage careful: reloads after a failed load, in [0, {}]", kMaxReloads))
          ->capture_default_str();
  // --n goes without --triage only; run_exact checks for it.
  args->n_option = cmd->get_option("--n")->required(false);
  // --r is searched by --solve r; every other run checks for it in run_exact.
  args->r_option = cmd->get_option("--r")->required(false);
  args->r_option->description(fmt::format("retries per call, in [0, {}]; required unless --solve r or --triage", kMaxRetries));
  auto* csv = cmd->add_option("--csv", args->csv,
                  "write the requests distribution here as CSV (requests,outcome,probability), atomically; "
                  "-: to stdout instead of the table");
  auto* seconds_csv = cmd->add_option("--seconds-csv", args->seconds_csv,
                  "time mode, fixed waits: write the wall-time distribution here as CSV "
                  "(seconds,outcome,probability), atomically; -: to stdout instead of the table");
  auto* require = add_require_option(*cmd, args->require, kExactMetrics);
  for (CLI::Option* other : {solve, triage})
    refuse_with(require, other, "--require checks the metrics of one run: leave it out with --solve and --triage");
  declare_exact_rules(*args, {method, distribution_work, solve, triage, csv, seconds_csv, json});
  return [args] { return run_exact(*args); };
}

}  // namespace relsim::cli
