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
#include "relsim/exact/report.hpp"
#include "relsim/exact/solve.hpp"
#include "relsim/exact/triage.hpp"
#include "cli/triage_report.hpp"
#include "relsim/parallel/parallel.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

struct ExactArgs {
  ModelArgs model;
  TimeArgs time;
  ToolArgs tools;
  std::string method = "matrix";
  int max_length = kDefaultMaxEnumerateLength;
  int threads = 0;
  double distribution_work = ExactOptions{}.max_distribution_work;
  bool json = false;
  std::string csv, seconds_csv;  // "-": stdout, instead of the table
  double target = 0.0;
  std::string solve;             // r, s, b or B; empty: no search
  std::string triage;            // naive or careful; empty: the agent's task
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

// The values --solve searches for the policy (and model): [low, limit],
// within the ranges validate() accepts.
std::pair<std::int64_t, std::int64_t> solve_range(SolveParam param, const Policy& policy, bool timed) {
  const bool simple = policy.kind == PolicyKind::simple;
  switch (param) {
    case SolveParam::r:
      return {0, simple ? kMaxRetries : std::min(kMaxRetries, kMaxRequestsPerCall / (policy.s + 1) - 1)};
    case SolveParam::s:
      if (simple)
        throw InputError("solve = s: the simple policy has no HTTP-layer retries; give --policy naive, layered or budgeted");
      return {0, std::min(kMaxHttpRetries, kMaxRequestsPerCall / (policy.r + 1) - 1)};
    case SolveParam::B:
      if (policy.kind != PolicyKind::budgeted)
        throw InputError(fmt::format("solve = B: B is the budgeted policy's cap, not policy = {}'s; give --policy budgeted",
                                     to_string(policy.kind)));
      // Past (s+1)(r+1) requests the cap never binds.
      return {1, std::int64_t{policy.s + 1} * (policy.r + 1)};
    case SolveParam::b:
      if (timed) throw InputError("solve = b: time mode has no silent steps; waits come from --backoff");
      return {0, kMaxSilentSteps};
  }
  return {0, 0};
}

Policy with_value(Policy policy, SolveParam param, std::int64_t v) {
  if (param == SolveParam::r) policy.r = static_cast<int>(v);
  if (param == SolveParam::s) policy.s = static_cast<int>(v);
  if (param == SolveParam::B) policy.B = static_cast<int>(v);
  return policy;
}

int run_solve(const ExactArgs& a, const std::optional<TimeModel>& time) {
  if (!a.target_option->count()) throw InputError("--solve needs --target, the P(success) to reach, in (0, 1]");
  if (a.method != "matrix") throw InputError(fmt::format("method = '{}': --solve uses --method matrix", a.method));
  if (!a.csv.empty() || !a.seconds_csv.empty()) throw InputError("--solve prints the answer only: leave out --csv and --seconds-csv");
  const SolveParam param = parse_solve_param(a.solve);
  if (param != SolveParam::r && !a.r_option->count())
    throw InputError("--r is required (only --solve r and --triage go without it)");
  if (param == SolveParam::r && a.r_option->count())
    throw InputError("--solve r searches r: leave out --r");
  ModelArgs args = a.model;
  // Any valid value: it is searched.
  if (param == SolveParam::r) args.r = 0;
  if (param == SolveParam::B) args.B = 1;
  const Policy base = args.policy();
  ExactOptions options = matrix_options(a);
  options.distribution = false;
  const auto [low, limit] = solve_range(param, base, time.has_value());
  std::function<SolvePoint(std::int64_t)> evaluate;
  std::string note;
  bool only_low = false;
  Json head;
  std::string words;
  if (time) {
    head = time_head_json(a.time.chain_json(*time), *time, base);
    words = a.time.chain_words(*time);
    evaluate = [&, time = *time](std::int64_t v) {
      const ExactResult r = exact_time(time, with_value(base, param, v), options);
      return SolvePoint{v, r.success, r.mean_requests};
    };
  } else {
    const Model model = args.model();
    head = model_json(model, base);
    words = model.independent() ? fmt::format("independent, p = {}", model.p)
                                : fmt::format("bursty, p = {}, q = {}", model.p, model.q);
    if (param != SolveParam::b) words += fmt::format(", b = {}", model.b);
    words += fmt::format(", g = {}, {} chain", model.g, to_string(model.chain));
    if (param == SolveParam::b && model.q < model.p) {
      only_low = true;
      note = "q < p: a retry right after a bad request is the likeliest to be good (b = 0); no larger b does better";
    }
    evaluate = [&, model](std::int64_t v) {
      Model m = model;
      if (param == SolveParam::b) m.b = v;
      const ExactResult r = exact_matrix(m, with_value(base, param, v), options);
      return SolvePoint{v, r.success, r.mean_requests};
    };
  }
  const SolveResult result = solve_for_target(param, a.target, low, limit, evaluate, only_low, note);
  if (!ranks().root()) return result.found ? 0 : kExitMiss;
  // The model and policy at the answer, or at the limit when there is none.
  const std::int64_t shown = result.found ? result.found->value : result.best_below->value;
  if (a.json) {
    head[std::string(to_string(param))] = result.found ? Json(result.found->value) : Json(nullptr);
    const Json solved = solve_json(result);
    for (auto it = solved.begin(); it != solved.end(); ++it) head[it.key()] = it.value();
    out() << dump_json(head) << "\n";
  } else {
    if (param == SolveParam::b) words += fmt::format(" (at b = {})", shown);
    out() << fmt::format("relsim exact --solve {}\n  model: {}\n  policy: {}{}\n{}", a.solve, words,
                         describe(with_value(base, param, shown)),
                         result.found ? "" : " (at the limit)", solve_words(result));
  }
  return result.found ? 0 : kExitMiss;
}

// A testing agent's verdicts (--triage): one run of page loads, no task.
int run_triage(const ExactArgs& a) {
  if (!a.solve.empty() || a.target_option->count()) throw InputError("--triage has no --solve or --target");
  if (a.r_option->count() || a.n_option->count())
    throw InputError("--triage: a run is page loads, not calls with retries: leave out --n and --r (--reloads is how "
                     "often a careful tester reloads)");
  if (!a.csv.empty() || !a.seconds_csv.empty()) throw InputError("--triage prints rates only: leave out --csv");
  if (a.time.time_model(a.model)) throw InputError("--triage counts loads as chain steps: leave out the time options");
  const Tester tester = parse_tester(a.triage);
  if (tester == Tester::naive && a.reloads_option->count())
    throw InputError("--reloads: the naive tester never reloads; give --triage careful");
  const Model model = a.model.model();
  const TriageRates rates = triage_exact(model, tester, a.reloads);
  out() << (a.json ? dump_json(triage_json(model, tester, a.reloads, rates)) + "\n"
                   : triage_table(model, tester, a.reloads, rates));
  return 0;
}

// What a run with tool calls does not support yet: each refused in one line.
void check_tool_run(const ExactArgs& a) {
  const std::string given = fmt::format("tool-faults = '{}'", a.tools.faults);
  if (!a.triage.empty())
    throw InputError(given + ": --triage runs page loads, not an agent's task; leave out --tool-faults");
  if (!a.solve.empty() || a.target_option->count())
    throw InputError(given + ": --solve and --target do not support tool calls yet; leave out --tool-faults");
  if (a.method != "matrix")
    throw InputError(fmt::format("method = '{}': tool calls (--tool-faults) run on the matrix engine only; use "
                                 "--method matrix", a.method));
  if (!a.csv.empty())
    throw InputError(given + ": the requests distribution is not computed with tool calls; leave out --csv");
}

int run_exact(const ExactArgs& a) {
  const std::optional<ToolModel> tools = a.tools.tool_model(a.time.timed());
  if (tools) check_tool_run(a);
  if (!a.triage.empty()) return run_triage(a);
  if (a.reloads_option->count()) throw InputError("--reloads needs --triage careful");
  if (!a.n_option->count()) throw InputError("--n is required");
  if (!a.solve.empty()) return run_solve(a, a.time.time_model(a.model));
  if (a.target_option->count()) throw InputError("--target needs --solve r, s, b or B: the parameter to search");
  if (!a.r_option->count()) throw InputError("--r is required (only --solve r goes without it)");
  if (const std::optional<TimeModel> time = a.time.time_model(a.model)) return run_exact_time(a, *time);
  const Model model = a.model.model();
  const Policy policy = a.model.policy();
  if (a.method != "matrix" && a.method != "enumerate" && a.method != "both")
    throw InputError(fmt::format("method = '{}' is not a method: use matrix, enumerate or both", a.method));
  ExactOptions mopt = matrix_options(a);
  mopt.tools = tools;
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
  add_tool_options(*cmd, args->tools);
  args->target_option = cmd->add_option("--target", args->target,
                                        "with --solve: the P(success) to reach, in (0, 1]");
  cmd->add_option("--solve", args->solve,
                  "print the smallest r, s (layered, naive, budgeted), b or B (budgeted) whose exact P(success) "
                  "meets --target, its success and mean requests; exit 1 when no value up to the limit does");
  cmd->add_option("--triage", args->triage,
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
  cmd->add_option("--csv", args->csv,
                  "write the requests distribution here as CSV (requests,outcome,probability), atomically; "
                  "-: to stdout instead of the table");
  cmd->add_option("--seconds-csv", args->seconds_csv,
                  "time mode, fixed waits: write the wall-time distribution here as CSV "
                  "(seconds,outcome,probability), atomically; -: to stdout instead of the table");
  return [args] { return run_exact(*args); };
}

}  // namespace relsim::cli
