// relsim sweep: exact (and simulated) success over a grid of parameters, as CSV.
#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/parallel/parallel.hpp"
#include "relsim/sweep/grid.hpp"
#include "relsim/sweep/sweep.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

struct SweepArgs {
  std::string p, q, r, n, b = "0", g = "0", chain = "fresh";
  long long tasks = 0;
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = 16, threads = 0;
  std::string interval = "wilson";
  double confidence = 0.95;
  bool strict = false;
  std::string out;
};

int run_sweep_command(const SweepArgs& a) {
  SweepGrid grid;
  grid.p = parse_real_axis(a.p, "p");
  if (!a.q.empty()) grid.q = parse_real_axis(a.q, "q");
  grid.r = parse_integer_axis(a.r, "r");
  grid.n = parse_integer_axis(a.n, "n");
  grid.b = parse_integer_axis(a.b, "b");
  grid.g = parse_integer_axis(a.g, "g");
  grid.chain = parse_chain_axis(a.chain);

  SweepConfig config;
  config.tasks = a.tasks;
  config.seed = a.seed;
  config.lanes = a.lanes;
  config.threads = a.threads;
  config.interval = parse_interval_kind(a.interval);
  config.confidence = a.confidence;
  config.strict = a.strict;
  // Under mpirun the points go round-robin to the ranks; rank 0 alone
  // prints and writes.
  config.share = parallel::world();

  const bool show_progress = config.share.root() && ::isatty(STDERR_FILENO) != 0;
  const auto progress = [&](std::int64_t done, std::int64_t total) {
    if (show_progress) std::cerr << fmt::format("\rsweep: {}/{} points", done, total) << (done == total ? "\n" : "");
  };
  const SweepOutcome result = run_sweep(grid, config, progress);
  if (!config.share.root()) return 0;
  if (result.skipped > 0)
    std::cerr << fmt::format("sweep: skipped {} invalid grid point(s), the first because {}\n", result.skipped,
                             result.first_skip);
  if (a.out.empty()) std::cout << result.csv;
  else write_file_atomically(a.out, result.csv);
  return 0;
}

}  // namespace

Runner add_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep",
                                 "exact (and with --tasks, simulated) success over a grid, as CSV with columns\n"
                                 "  p,q,r,n,b,g,chain,p0,independent,exact,mean_requests,tasks,successes,rate,"
                                 "ci_low,ci_high,covered,seed");
  const std::string axis = "a value, a list a,b,c or an inclusive range start:stop:step";
  cmd->add_option("--p", args->p, "bad fraction: " + axis)->required();
  cmd->add_option("--q", args->q, "P(bad | previous bad): " + axis + "; default q = p at each point");
  cmd->add_option("--r", args->r, "retries per call: " + axis)->required();
  cmd->add_option("--n", args->n, "calls per task: " + axis)->required();
  cmd->add_option("--b", args->b, "silent steps before a retry: " + axis)->capture_default_str();
  cmd->add_option("--g", args->g, "silent steps before the next call: " + axis)->capture_default_str();
  cmd->add_option("--chain", args->chain, "fresh, continuous or fresh,continuous")->capture_default_str();
  cmd->add_option("--tasks", args->tasks, "simulated tasks per point (0: exact columns only)")->capture_default_str();
  cmd->add_option("--seed", args->seed, "run seed; each point's seed derives from it and the point's parameters")
      ->capture_default_str();
  cmd->add_option("--lanes", args->lanes, "independent chains for the continuous scope")->capture_default_str();
  cmd->add_option("--threads", args->threads, "OpenMP threads (0: OpenMP's default)")->capture_default_str();
  cmd->add_option("--interval", args->interval, "wilson, clopper-pearson or jeffreys")->capture_default_str();
  cmd->add_option("--confidence", args->confidence, "interval confidence, in (0, 1)")->capture_default_str();
  cmd->add_flag("--strict", args->strict, "reject the grid when any point is invalid instead of skipping it");
  cmd->add_option("--out", args->out, "write the CSV here (atomically) instead of stdout");
  return [args] { return run_sweep_command(*args); };
}

}  // namespace relsim::cli
