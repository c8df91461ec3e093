// relsim tune: the retry schedules that reach a target success, their
// Pareto front and where the well-known schedules fall (sweep/tune.hpp).
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/fit/advise.hpp"
#include "relsim/sweep/grid.hpp"
#include "relsim/sweep/tune.hpp"
#include "relsim/sweep/tune_report.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {
namespace {

struct TuneArgs {
  ModelArgs model;  // --n, --chain and --kinds
  TimeArgs time;
  BillingArgs billing;
  FallbackArgs fallback;
  double target = 0.0;
  std::string objective = "requests";
  std::string policies = "layered,budgeted";
  int s_max = TuneSpace{}.s_max, r_max = TuneSpace{}.r_max;
  std::string budgets = "2,3,4,6,8,12";
  std::string bases = "0.1,0.25,0.5,1,2,4", caps = "4,8,16,20,32,60", jitters = "0,0.25,1";
  std::vector<std::string> lists;
  bool no_grid = false;
  bool sdk = false;  // only what the official SDKs expose
  bool no_widen = false;
  bool csv = false, json = false, force = false;
  int threads = 0;
  long long p99_tasks = TuneConfig{}.p99_tasks;
  double p99_work = TuneConfig{}.p99_work;
  std::uint64_t seed = rng::kReferenceSeed;
};

std::vector<PolicyKind> parse_policies(const std::string& text) {
  std::vector<PolicyKind> out;
  std::size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    out.push_back(parse_policy_kind(text.substr(start, comma == std::string::npos ? comma : comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// A --lists entry: none, W1,W2,... (a list), or any --backoff schedule.
Backoff parse_list_entry(const std::string& text) {
  if (text == "none" || text == "sdk" || text.rfind("exp:", 0) == 0 || text.rfind("list:", 0) == 0)
    return parse_backoff(text);
  return parse_backoff("list:" + text);
}

TuneSpace space_of(const TuneArgs& a) {
  TuneSpace space;
  if (a.sdk) {
    space.policies = {PolicyKind::layered};
    space.s_max = a.s_max;
    space.r_max = 0;
    space.bases.clear();
    space.fixed = {Backoff::sdk()};
    return space;
  }
  space.policies = parse_policies(a.policies);
  space.s_max = a.s_max;
  space.r_max = a.r_max;
  space.budgets.clear();
  for (const long long b : parse_integer_axis(a.budgets, "budgets")) {
    if (b < 1 || b > kMaxRequestsPerCall)
      throw InputError(fmt::format("B = {} is out of range: it must be in [1, {}]", b, kMaxRequestsPerCall));
    space.budgets.push_back(static_cast<int>(b));
  }
  if (a.no_grid) {
    space.bases.clear();
  } else {
    space.bases = parse_real_axis(a.bases, "bases");
    space.caps = parse_real_axis(a.caps, "caps");
    space.jitters = parse_real_axis(a.jitters, "jitters");
  }
  if (!a.lists.empty()) {
    space.fixed.clear();
    for (const auto& entry : a.lists) space.fixed.push_back(parse_list_entry(entry));
  }
  return space;
}

// A schedule the official SDKs can express (layered, with their own
// backoff): its maxRetries (s) and the stream retries around it (r) as code,
// as relsim advise writes them; null for any other.
void add_snippets(Json& point) {
  if (point["policy"] != "layered" || point["backoff"] != "sdk") {
    point["snippets"] = nullptr;
    return;
  }
  const int s = point["s"].get<int>(), r = point["r"].get<int>();
  point["snippets"] = {{"typescript", fit::sdk_snippet("typescript", s, r)}, {"python", fit::sdk_snippet("python", s, r)}};
}

int run_tune_command(const TuneArgs& a) {
  const std::optional<TimeModel> time = a.time.time_model(a.model);
  if (!time) throw InputError("tune needs the fault chain in seconds: give --t-good and --t-bad (or --hidden-chain)");
  TuneConfig config;
  config.target = a.target;
  config.time = *time;
  config.n = a.model.n;
  config.kinds = a.model.fault_weights();
  config.objective = parse_tune_objective(a.objective);
  config.billing = a.billing.parsed();
  config.fallback = a.fallback.parsed(config.kinds, widest_tune_policy(config.n));
  config.threads = a.threads;
  config.force = a.force;
  config.p99_tasks = a.p99_tasks;
  config.p99_work = a.p99_work;
  config.seed = a.seed;
  TuneSpace space = space_of(a);

  // Each block of schedules, on this thread (a widened search starts its count again).
  const auto progress = command_progress("tune", "schedules");
  const TuneResult result = a.no_widen ? run_tune(space, config, progress) : run_tune_widening(space, config, progress);
  if (a.json) {
    Json j = tune_json(result, space, config, a.time.chain_json(config.time));
    for (Json& point : j["front"]) add_snippets(point);
    for (Json& point : j["anchors"]) add_snippets(point);
    if (!j["best"].is_null()) add_snippets(j["best"]);
    out() << dump_json(j) << "\n";
  }
  else if (a.csv) {
    out() << tune_csv(result);
    for (const std::string& note : result.notes) std::cerr << "relsim tune: note: " << note << "\n";
  }
  else out() << tune_table(result, config, a.time.chain_words(config.time));
  return 0;
}

void add_space_options(CLI::App& cmd, TuneArgs& a) {
  const std::string axis = "a value, a list a,b,c or a range start:stop:step";
  cmd.add_option("--policies", a.policies, "policies to search: layered, budgeted or layered,budgeted")
      ->capture_default_str();
  cmd.add_option("--s-max", a.s_max,
                 fmt::format("HTTP-layer retries s in 0..s-max, s-max in [0, {}]; doubled while the best s lies on "
                             "it (up to {}, said in a note) unless --no-widen",
                             kMaxHttpRetries, kMaxHttpRetries))
      ->capture_default_str();
  cmd.add_option("--r-max", a.r_max,
                 fmt::format("stream-layer retries r in 0..r-max, r-max in [0, {}]; doubled while the best r lies on "
                             "it (up to {}) unless --no-widen",
                             kMaxRetries, kMaxWidenedR))
      ->capture_default_str();
  cmd.add_flag("--no-widen", a.no_widen, "search only up to --s-max and --r-max, even when the best lies on them");
  cmd.add_option("--budgets", a.budgets, "budgeted: requests per call B, " + axis)->capture_default_str();
  cmd.add_option("--bases", a.bases, "exp backoff grid: base seconds, " + axis)->capture_default_str();
  cmd.add_option("--caps", a.caps, "exp backoff grid: cap seconds, " + axis)->capture_default_str();
  cmd.add_option("--jitters", a.jitters, "exp backoff grid: jitter in [0, 1], " + axis)->capture_default_str();
  auto* no_grid = cmd.add_flag("--no-grid", a.no_grid, "leave out the exp grid: search --lists only");
  auto* lists = cmd.add_option("--lists", a.lists,
                 "fixed schedules besides the grid, each W1,W2,... (waits before retry 1, 2, ...; the last repeats), "
                 "none, or a --backoff schedule; given, they replace the defaults "
                 "none 1,2,4,8,16,32 0.5,1,2,4,8,16 1,5,15,30,60 5 10 30");
  auto* sdk = cmd.add_flag("--sdk", a.sdk,
                           "search only what the official SDKs expose: maxRetries (s, from 0 to --s-max, widened as "
                           "above) with their own backoff; layered, no stream retries");
  for (const char* name : {"--policies", "--r-max", "--budgets", "--bases", "--caps", "--jitters"})
    refuse_with(sdk, cmd.get_option(name), fmt::format("--sdk searches the SDK's own space: leave out {}", name));
  refuse_with(sdk, no_grid, "--sdk searches the SDK's own space: leave out --no-grid");
  refuse_with(sdk, lists, "--sdk searches the SDK's own space: leave out --lists");
}

}  // namespace

Runner add_tune(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand(
      "tune",
      "retry schedules that reach a target success in time mode (policy layered or budgeted, s, r, B, backoff), "
      "exact: the Pareto front of success, mean requests and mean seconds (and p99 seconds with "
      "--objective p99-seconds), best first, and where the SDK default, 10 attempts and AWS standard mode fall");
  cmd->add_option("--target", args->target, "P(success) to reach, in (0, 1), e.g. 0.99")->required();
  args->model.n_option =
      cmd->add_option("--n", args->model.n, fmt::format("model calls per task, in [1, {}]", kMaxCalls))->required();
  cmd->add_option("--chain", args->model.chain, "chain scope across tasks: fresh or continuous")->capture_default_str();
  args->model.kinds_option = cmd->add_option("--kinds", args->model.kinds,
                                             "fault-kind weights of bad requests, e.g. cut=1,stall=1,http_529=2; "
                                             "default uniform over cut,no_stop,malformed,overloaded,stall");
  add_time_options(*cmd, args->time,
                   {{"--backoff", "--backoff does not apply to tune, which searches the backoff: use --bases, --caps, "
                                  "--jitters and --lists"}});
  cmd->get_option("--backoff")->description("refused: tune searches the backoff (--bases, --caps, --jitters, --lists)");
  cmd->add_option("--objective", args->objective,
                  "the recommendation: least mean requests (requests), least mean-seconds, least p99-seconds "
                  "(then p99 is computed for every schedule meeting the target and is a dimension of the front), or "
                  "least mean cost per task (cost: needs the prices, and the mean cost is then a dimension)")
      ->capture_default_str();
  add_space_options(*cmd, *args);
  add_billing_options(*cmd, args->billing);
  add_fallback_options(*cmd, args->fallback, args->billing.price_in_option, args->time.timed_rule());
  auto* csv = cmd->add_flag("--csv", args->csv, fmt::format("print the front as CSV: {}", kTuneCsvHeader));
  auto* json =
      cmd->add_flag("--json", args->json,
                    "print one JSON object: front, best, anchors, evaluated, meeting_target, the model and the space");
  refuse_with(json, csv, "--csv and --json both given: choose one output");
  cmd->add_option("--p99-tasks", args->p99_tasks,
                  "jittered waits: tasks simulated for p99 (exact engine has no wall-time distribution then); "
                  "0: none")
      ->capture_default_str();
  cmd->add_option("--p99-work", args->p99_work,
                  "fixed waits: work the exact wall-time distribution may cost for p99 (1e7: about 0.3 s) before "
                  "p99 is simulated instead")
      ->capture_default_str();
  add_seed_option(*cmd, args->seed, "seed of those simulations (the same for every schedule)");
  cmd->add_flag("--force", args->force, fmt::format("search a space of more than {} schedules", kMaxTuneSchedules));
  cmd->add_option("--threads", args->threads, "OpenMP threads (0: OpenMP's default); the output does not depend on it")
      ->capture_default_str();
  return [args] { return run_tune_command(*args); };
}

}  // namespace relsim::cli
