// relsim demo: the reference experiment (docs/model.md, Reference experiment), exactly and by
// simulation, for independent and bursty faults.
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/live/live.hpp"
#include "relsim/live/plan.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

struct DemoArgs {
  long long tasks = 400;
  std::uint64_t seed = rng::kReferenceSeed;
  int threads = 0;
  long long tight_tasks = 1'000'000;
  bool json = false;
  bool no_live = false;
  int concurrency = LiveOptions{}.concurrency;
};

struct DemoRow {
  std::string name;
  Model model;
  ExactResult exact;
  SimResult sim;
  Interval ci;
  std::optional<SimResult> tight;  // the same model over --tight-tasks tasks
  Interval tight_ci;
  std::optional<LiveCheck> live;
  Interval live_ci;
};

// One model of the experiment: exact, simulated, and (unless --no-live) the
// same tasks live.
DemoRow run_model(const char* name, double q, const Policy& policy, const DemoArgs& a) {
  DemoRow row;
  row.name = name;
  row.model.p = 0.3;
  row.model.q = q;
  validate(row.model);
  ExactOptions eopt;
  eopt.distribution = false;
  row.exact = exact_matrix(row.model, policy, eopt);  // success, mean requests and fault share
  SimConfig sc;
  sc.tasks = a.tasks;
  sc.seed = a.seed;
  sc.threads = a.threads;
  row.sim = simulate(row.model, policy, sc);
  row.ci = binomial_interval(IntervalKind::wilson, row.sim.successes, row.sim.tasks, 0.95);
  if (a.tight_tasks > 0) {
    SimConfig big = sc;
    big.tasks = a.tight_tasks;
    row.tight = simulate(row.model, policy, big);
    row.tight_ci = binomial_interval(IntervalKind::wilson, row.tight->successes, row.tight->tasks, 0.95);
  }
  if (!a.no_live) {
    // The same tasks for real: the plan holds the simulator's draws, the
    // mock server serves them, the retrying client runs them.
    LiveOptions options;
    options.concurrency = a.concurrency;
    options.jitter_seed = a.seed;
    row.live = run_live_check(generate_plan(row.model, policy, sc), policy, live_timing(), options);
    row.live_ci = binomial_interval(IntervalKind::wilson, row.live->successes, sc.tasks, 0.95);
  }
  return row;
}

Json demo_json(const std::vector<DemoRow>& rows, const Policy& policy, const DemoArgs& a, const FaultWeights& kinds) {
  Json j;
  j["p"] = 0.3;
  j["r"] = policy.r;
  j["n"] = policy.n;
  j["tasks"] = a.tasks;
  j["seed"] = a.seed;
  j["kinds"] = to_string(kinds);
  for (const auto& row : rows) {
    Json faults = Json::object();
    for (const FaultKind kind : drawn_kinds(kinds))
      faults[std::string(to_string(kind))] = row.sim.faults[static_cast<std::size_t>(kind)];
    j[row.name] = Json{{"q", row.model.q},
                       {"exact", row.exact.success},
                       {"successes", row.sim.successes},
                       {"tasks", row.sim.tasks},
                       {"rate", static_cast<double>(row.sim.successes) / static_cast<double>(row.sim.tasks)},
                       {"ci_low", row.ci.low},
                       {"ci_high", row.ci.high},
                       {"covered", row.ci.covers(row.exact.success)},
                       {"requests", row.sim.requests},
                       {"exact_mean_requests", row.exact.mean_requests},
                       {"fault_share", row.sim.fault_share()},
                       {"exact_fault_share", row.exact.fault_share()},
                       {"faults", faults}};
    if (row.tight)
      j[row.name]["tight"] = Json{{"tasks", row.tight->tasks},
                                  {"successes", row.tight->successes},
                                  {"rate", static_cast<double>(row.tight->successes) /
                                               static_cast<double>(row.tight->tasks)},
                                  {"ci_low", row.tight_ci.low},
                                  {"ci_high", row.tight_ci.high},
                                  {"covered", row.tight_ci.covers(row.exact.success)}};
    if (row.live)
      j[row.name]["live"] = Json{{"successes", row.live->successes},
                                 {"ci_low", row.live_ci.low},
                                 {"ci_high", row.live_ci.high},
                                 {"requests", row.live->requests},
                                 {"wrong", row.live->wrong},
                                 {"mismatches", static_cast<std::int64_t>(row.live->mismatches.size())},
                                 {"wall_seconds", row.live->wall_seconds}};
  }
  return j;
}

// The exact and simulated results, then the faults injected by kind.
void print_simulated(const std::vector<DemoRow>& rows, const Policy& policy, const DemoArgs& a,
                     const FaultWeights& kinds) {
  out() << fmt::format(
      "relsim demo: the reference experiment (docs/model.md)\n"
      "p = 0.3, r = {} retries, n = {} calls, {} tasks per model, seed {}, fault kinds {}\n\n",
      policy.r, policy.n, a.tasks, a.seed, to_string(kinds));
  out() << fmt::format("{:<15} {:>4}  {:>10}  {:>15}  {:>18}  {:>7}  {:>8}  {:>9}\n", "model", "q", "exact",
                           "simulated", "95% Wilson", "covered", "requests", "E[req]x N");
  for (const auto& row : rows) {
    out() << fmt::format("{:<15} {:>4}  {:>10.6f}  {:>15}  [{:.4f}, {:.4f}]  {:>7}  {:>8}  {:>9.1f}\n", row.name,
                             row.model.q, row.exact.success, fmt::format("{}/{}", row.sim.successes, row.sim.tasks),
                             row.ci.low, row.ci.high, row.ci.covers(row.exact.success) ? "yes" : "NO",
                             row.sim.requests, row.exact.mean_requests * static_cast<double>(row.sim.tasks));
    if (row.tight)
      out() << fmt::format("{:<15} {:>4}  {:>10}  {:>15}  [{:.4f}, {:.4f}]  {:>7}  {:>8}  {:>9.1f}\n",
                           fmt::format("  {} tasks", row.tight->tasks), "", "",
                           fmt::format("{}/{}", row.tight->successes, row.tight->tasks),
                           row.tight_ci.low, row.tight_ci.high, row.tight_ci.covers(row.exact.success) ? "yes" : "NO",
                           row.tight->requests, row.exact.mean_requests * static_cast<double>(row.tight->tasks));
  }
  out() << "exact: P(success) from the transfer matrix. simulated: tasks done out of tasks run, with the 95% Wilson\n"
           "interval of that rate; covered: whether the interval holds the exact value. requests: requests the\n"
           "simulated tasks sent; E[req]x N: the exact mean requests per task times the tasks run.\n";
  out() << "\nfaults injected by kind (share of all requests sent)\n";
  for (const auto& row : rows) {
    const auto percent = [&](std::int64_t count) {
      return 100.0 * static_cast<double>(count) / static_cast<double>(row.sim.requests);
    };
    std::string line = fmt::format("{:<12}", row.name);
    std::int64_t total = 0;
    for (const std::int64_t count : row.sim.faults) total += count;
    for (const FaultKind kind : drawn_kinds(kinds)) {
      const auto count = row.sim.faults[static_cast<std::size_t>(kind)];
      line += fmt::format("  {} {} ({:.1f}%)", to_string(kind), count, percent(count));
    }
    out() << line << fmt::format("  | all {} ({:.1f}%; exact {:.1f}%)\n", total, percent(total),
                                 100.0 * row.exact.fault_share());
  }
  out() << "More than p = 30% of the requests fail when faults come in bursts: a failed call retries inside its\n"
           "burst, and exact is E[bad requests] / E[requests] (docs/model.md, Fault share).\n";
}

void print_live(const std::vector<DemoRow>& rows, const DemoArgs& a) {
  out() << fmt::format("\nlive: the same tasks over HTTP against the embedded mock server ({} concurrent, "
                           "simple policy, 200 ms header and idle timeouts)\n",
                           a.concurrency);
  out() << "The server replays the simulated tasks' own draws (the plan) and relsim's retrying client runs them.\n"
           "This checks the client: on every task it sends what its policy says on those draws (oracle mismatches\n"
           "0), so its counts equal the simulated ones by construction. The agreement with the exact value comes\n"
           "from the simulation above, not from this run.\n";
  out() << fmt::format("{:<12} {:>13}  {:>18}  {:>8}  {:>5}  {:>17}  {:>8}\n", "model", "live done",
                           "95% Wilson", "requests", "wrong", "oracle mismatches", "seconds");
  for (const auto& row : rows)
    out() << fmt::format("{:<12} {:>13}  [{:.4f}, {:.4f}]  {:>8}  {:>5}  {:>17}  {:>8.2f}\n", row.name,
                             fmt::format("{}/{}", row.live->successes, a.tasks), row.live_ci.low, row.live_ci.high,
                             row.live->requests, row.live->wrong, row.live->mismatches.size(), row.live->wall_seconds);
}

int run_demo(const DemoArgs& a) {
  if (a.tight_tasks < 0 || a.tight_tasks > kMaxTasks)
    throw InputError(fmt::format("tight-tasks = {} is out of range: it must be in [0, {}] (0: none)", a.tight_tasks,
                                 kMaxTasks));
  const Policy policy{2, 2};
  std::vector<DemoRow> rows;
  for (const auto& [name, q] : {std::pair{"independent", 0.3}, std::pair{"bursty", 0.8}})
    rows.push_back(run_model(name, q, policy, a));
  const FaultWeights kinds = FaultWeights::in_stream_uniform();
  if (a.json) {
    out() << dump_json(demo_json(rows, policy, a, kinds)) << "\n";
    return 0;
  }
  print_simulated(rows, policy, a, kinds);
  if (!a.no_live) print_live(rows, a);
  for (const auto& row : rows)
    if (row.live && !row.live->mismatches.empty()) return kExitMiss;
  return 0;
}

}  // namespace

Runner add_demo(CLI::App& app) {
  auto args = std::make_shared<DemoArgs>();
  auto* cmd = app.add_subcommand("demo", "the reference experiment: exact, simulated and live, independent and bursty; exit 1 on any oracle mismatch");
  cmd->add_option("--tasks", args->tasks, "simulated tasks per model")->capture_default_str();
  add_seed_option(*cmd, args->seed, "simulation seed");
  cmd->add_option("--threads", args->threads, "OpenMP threads (0: OpenMP's default)")->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object instead of tables");
  cmd->add_option("--tight-tasks", args->tight_tasks,
                  fmt::format("also simulate this many tasks per model, for a tight interval (0: none), in [0, {}]",
                              kMaxTasks))
      ->capture_default_str();
  cmd->add_flag("--no-live", args->no_live, "leave out the live run over HTTP");
  cmd->add_option("--concurrency", args->concurrency, "live tasks in flight at once")->capture_default_str();
  return [args] { return run_demo(*args); };
}

}  // namespace relsim::cli
