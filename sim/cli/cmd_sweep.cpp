// relsim sweep: exact (and simulated) success over a grid of parameters, as
// CSV; over the policies and, in time mode (--t-good, --t-bad), the time
// options too.
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/bursts.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/client/timing.hpp"
#include "relsim/parallel/parallel.hpp"
#include "relsim/sweep/grid.hpp"
#include "relsim/sweep/sweep.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {
namespace {

struct SweepArgs {
  std::string p, q, burst_mean, r, n, b = "0", g = "0", chain = "fresh";
  std::string policy = "simple", s = "2", B = "0", kinds;
  std::string t_good, t_bad, request_seconds = "0", think_seconds = "0", backoff = "sdk", retry_after = "0";
  std::string fault_seconds;
  long long tasks = 0;
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = 16, threads = 0;
  std::string interval = "wilson";
  double confidence = 0.95;
  bool strict = false;
  bool quantiles = false;
  std::string out;
  std::vector<CLI::Option*> policy_options;
  CLI::Option* t_good_option = nullptr;
  CLI::Option* t_bad_option = nullptr;
};

bool given(const std::vector<CLI::Option*>& options) {
  for (const CLI::Option* o : options)
    if (o->count()) return true;
  return false;
}

// The time axes (the options that do not fit the mode were refused while
// parsing: add_sweep_policy_and_time).
void time_axes(const SweepArgs& a, SweepGrid& grid) {
  if (!a.t_good_option->count() && !a.t_bad_option->count()) return;
  grid.t_good = parse_real_axis(a.t_good, "t-good");
  grid.t_bad = parse_real_axis(a.t_bad, "t-bad");
  grid.request_seconds = parse_real_axis(a.request_seconds, "request-seconds");
  grid.think_seconds = parse_real_axis(a.think_seconds, "think-seconds");
  grid.retry_after = parse_real_axis(a.retry_after, "retry-after");
  grid.backoff = parse_backoff_axis(a.backoff);
  if (!a.fault_seconds.empty()) {
    const ClientTiming timing;  // the live client's timeouts
    grid.fault_seconds = parse_fault_seconds(a.fault_seconds, timing.header_timeout, timing.idle_timeout);
  }
}

SweepGrid sweep_grid(const SweepArgs& a) {
  SweepGrid grid;
  time_axes(a, grid);
  if (!grid.timed()) {
    if (a.p.empty()) throw InputError(kNeedP);
    grid.p = parse_real_axis(a.p, "p");
    if (!a.q.empty()) grid.q = parse_real_axis(a.q, "q");
    if (!a.burst_mean.empty()) {
      grid.q = parse_real_axis(a.burst_mean, "burst-mean");
      for (double& v : grid.q) v = q_from_burst_mean(v);  // the CSV's q column
    }
  }
  grid.r = parse_integer_axis(a.r, "r");
  grid.n = parse_integer_axis(a.n, "n");
  if (!grid.timed()) {
    grid.b = parse_integer_axis(a.b, "b");
    grid.g = parse_integer_axis(a.g, "g");
  }
  grid.chain = parse_chain_axis(a.chain);
  grid.policy = parse_policy_axis(a.policy);
  grid.s = parse_integer_axis(a.s, "s");
  grid.B = parse_integer_axis(a.B, "B");
  if (!a.kinds.empty()) grid.kinds = parse_fault_weights(a.kinds);
  grid.policy_columns = given(a.policy_options);
  return grid;
}

int run_sweep_command(const SweepArgs& a) {
  const SweepGrid grid = sweep_grid(a);
  SweepConfig config;
  config.tasks = a.tasks;
  config.seed = a.seed;
  config.lanes = a.lanes;
  config.threads = a.threads;
  config.interval = parse_interval_kind(a.interval);
  config.confidence = a.confidence;
  config.strict = a.strict;
  config.quantiles = a.quantiles;
  // Under mpirun the points go round-robin to the ranks; rank 0 alone
  // prints and writes.
  config.share = ranks();

  // Points done, on this thread.
  const SweepOutcome result = run_sweep(grid, config, command_progress("sweep", "points"));
  if (!config.share.root()) return 0;
  if (result.skipped > 0)
    std::cerr << fmt::format("sweep: skipped {} invalid grid point(s), the first because {}\n", result.skipped,
                             result.first_skip);
  if (a.out.empty()) out() << result.csv;
  else write_file_atomically(a.out, result.csv);
  return 0;
}

// --policy --s --B --kinds and the time axes.
void add_sweep_policy_and_time(CLI::App& cmd, SweepArgs& a, const std::string& axis) {
  a.policy_options = {
      cmd.add_option("--policy", a.policy, "simple, naive, layered, budgeted or a list of them")->capture_default_str(),
      cmd.add_option("--s", a.s, "HTTP-layer retries (all policies but simple): " + axis)->capture_default_str(),
      cmd.add_option("--B", a.B, "budgeted: requests per call: " + axis)->capture_default_str()};
  cmd.add_option("--kinds", a.kinds, "fault-kind weights of bad requests, e.g. cut=1,stall=1 (one value)");
  a.t_good_option = cmd.add_option("--t-good", a.t_good, "time mode: mean good sojourn, seconds: " + axis);
  a.t_bad_option = cmd.add_option("--t-bad", a.t_bad, "time mode: mean bad sojourn, seconds: " + axis);
  needs_option(a.t_bad_option, a.t_good_option, "--t-bad needs --t-good: give both mean sojourns, in seconds");
  needs_option(a.t_good_option, a.t_bad_option, "--t-good needs --t-bad: give both mean sojourns, in seconds");
  const auto timed = [good = a.t_good_option, bad = a.t_bad_option] { return good->count() || bad->count(); };
  for (CLI::Option* o : {
      cmd.add_option("--request-seconds", a.request_seconds, "time mode: seconds a request takes: " + axis)
          ->capture_default_str(),
      cmd.add_option("--think-seconds", a.think_seconds, "time mode: seconds between calls: " + axis)
          ->capture_default_str(),
      cmd.add_option("--backoff", a.backoff,
                     "time mode: sdk, exp:BASE,CAP,JITTER, list:1,2,4 or none, or a list of them "
                     "(sdk,none,exp:1,30,0: a letter starts the next)")
          ->capture_default_str(),
      cmd.add_option("--retry-after", a.retry_after, "time mode: http_429's retry-after, seconds (0: none): " + axis)
          ->capture_default_str(),
      cmd.add_option("--fault-seconds", a.fault_seconds, "time mode: KIND=SECONDS,... or timeouts (one value)")})
    needs_time_mode(o, timed);
  for (const char* name : {"--p", "--q", "--burst-mean", "--b", "--g"}) refuse_in_time_mode(cmd.get_option(name), timed);
}

}  // namespace

Runner add_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep",
                                 "exact (and with --tasks, simulated) success over a grid, as CSV with columns\n"
                                 "  p,q,r,n,b,g,chain,p0,independent,exact,mean_requests,tasks,successes,rate,"
                                 "ci_low,ci_high,covered,seed\n"
                                 "  then policy,s,B when --policy, --s or --B is given, and in time mode (--t-good,\n"
                                 "  --t-bad) policy,s,B,t_good,t_bad,request_seconds,think_seconds,backoff,retry_after,\n"
                                 "  mean_seconds,p50_seconds,p90_seconds,p99_seconds,sim_mean_seconds,sim_mean_low,\n"
                                 "  sim_mean_high,sim_p50_seconds,sim_p90_seconds,sim_p99_seconds;\n"
                                 "  then always fault_share,p50_requests,p90_requests,p99_requests,p999_requests\n"
                                 "  (quantiles with --quantiles),sim_fault_share,sim_p50_requests,sim_p90_requests,\n"
                                 "  sim_p99_requests,sim_p999_requests (with --tasks)");
  const std::string axis = "a value, a list a,b,c or an inclusive range start:stop:step";
  // Required outside time mode: sweep_grid checks (CLI11 cannot say "required unless").
  cmd->add_option("--p", args->p, "bad fraction: " + axis + "; required outside time mode");
  auto* q = cmd->add_option("--q", args->q, "P(bad | previous bad): " + axis + "; default q = p at each point");
  auto* burst_mean =
      cmd->add_option("--burst-mean", args->burst_mean,
                      "mean burst length L in requests, >= 1, instead of --q (q = 1 - 1/L, the q column): " + axis);
  refuse_with(burst_mean, q, "give --q or --burst-mean, not both: --burst-mean L means q = 1 - 1/L");
  cmd->add_option("--r", args->r, "retries per call: " + axis)->required();
  cmd->add_option("--n", args->n, "calls per task: " + axis)->required();
  cmd->add_option("--b", args->b, "silent steps before a retry: " + axis)->capture_default_str();
  cmd->add_option("--g", args->g, "silent steps before the next call: " + axis)->capture_default_str();
  cmd->add_option("--chain", args->chain, "fresh, continuous or fresh,continuous")->capture_default_str();
  cmd->add_option("--tasks", args->tasks, "simulated tasks per point (0: exact columns only)")->capture_default_str();
  add_seed_option(*cmd, args->seed, "run seed; each point's seed derives from it and the point's parameters")
      ->capture_default_str();
  cmd->add_option("--lanes", args->lanes, "independent chains for the continuous scope")->capture_default_str();
  cmd->add_option("--threads", args->threads, "OpenMP threads (0: OpenMP's default)")->capture_default_str();
  cmd->add_option("--interval", args->interval, "wilson, clopper-pearson or jeffreys")->capture_default_str();
  cmd->add_option("--confidence", args->confidence, "interval confidence, in (0, 1)")->capture_default_str();
  cmd->add_flag("--strict", args->strict, "reject the grid when any point is invalid instead of skipping it");
  cmd->add_flag("--quantiles", args->quantiles,
                "fill the exact p50_requests .. p999_requests columns (the requests distribution at every point: "
                "several times slower)");
  cmd->add_option("--out", args->out, "write the CSV here (atomically) instead of stdout");
  add_sweep_policy_and_time(*cmd, *args, axis);
  return [args] { return run_sweep_command(*args); };
}

}  // namespace relsim::cli
