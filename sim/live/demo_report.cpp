// What relsim demo prints (demo_report.hpp).
#include "relsim/live/demo_report.hpp"

#include <fmt/format.h>

#include "relsim/montecarlo/simulate_report.hpp"

namespace relsim {
namespace {

// The exact and simulated results, then the faults injected by kind.
std::string demo_simulated_table(const DemoRun& run) {
  const Policy& policy = run.policy;
  std::string s = fmt::format(
      "relsim demo: the reference experiment (docs/model.md)\n"
      "p = 0.3, r = {} retries, n = {} calls, {} tasks per model, seed {}, fault kinds {}\n\n",
      policy.r, policy.n, run.config.tasks, run.config.seed, to_string(run.kinds));
  s += fmt::format("{:<15} {:>4}  {:>10}  {:>15}  {:>18}  {:>7}  {:>8}  {:>9}\n", "model", "q", "exact", "simulated",
                   "95% Wilson", "covered", "requests", "E[req]x N");
  for (const auto& row : run.rows) {
    s += fmt::format("{:<15} {:>4}  {:>10.6f}  {:>15}  [{:.4f}, {:.4f}]  {:>7}  {:>8}  {:>9.1f}\n", row.name,
                     row.model.q, row.exact.success, fmt::format("{}/{}", row.sim.successes, row.sim.tasks),
                     row.ci.low, row.ci.high, row.ci.covers(row.exact.success) ? "yes" : "NO", row.sim.requests,
                     row.exact.mean_requests * static_cast<double>(row.sim.tasks));
    if (row.tight)
      s += fmt::format("{:<15} {:>4}  {:>10}  {:>15}  [{:.4f}, {:.4f}]  {:>7}  {:>8}  {:>9.1f}\n",
                       fmt::format("  {} tasks", row.tight->tasks), "", "",
                       fmt::format("{}/{}", row.tight->successes, row.tight->tasks), row.tight_ci.low,
                       row.tight_ci.high, row.tight_ci.covers(row.exact.success) ? "yes" : "NO", row.tight->requests,
                       row.exact.mean_requests * static_cast<double>(row.tight->tasks));
  }
  s += "exact: P(success) from the transfer matrix. simulated: tasks done out of tasks run, with the 95% Wilson\n"
       "interval of that rate; covered: whether the interval holds the exact value. requests: requests the\n"
       "simulated tasks sent; E[req]x N: the exact mean requests per task times the tasks run.\n";
  s += "\nfaults injected by kind (share of all requests sent)\n";
  for (const auto& row : run.rows) {
    const auto percent = [&](std::int64_t count) {
      return 100.0 * static_cast<double>(count) / static_cast<double>(row.sim.requests);
    };
    std::string line = fmt::format("{:<12}", row.name);
    std::int64_t total = 0;
    for (const std::int64_t count : row.sim.faults) total += count;
    for (const FaultKind kind : drawn_fault_kinds(run.kinds)) {
      const auto count = row.sim.faults[static_cast<std::size_t>(kind)];
      line += fmt::format("  {} {} ({:.1f}%)", to_string(kind), count, percent(count));
    }
    s += line + fmt::format("  | all {} ({:.1f}%; exact {:.1f}%)\n", total, percent(total),
                            100.0 * row.exact.fault_share());
  }
  s += "More than p = 30% of the requests fail when faults come in bursts: a failed call retries inside its\n"
       "burst, and exact is E[bad requests] / E[requests] (docs/model.md, Fault share).\n";
  return s;
}

std::string demo_live_table(const DemoRun& run) {
  std::string s = fmt::format("\nlive: the same tasks over HTTP against the embedded mock server ({} concurrent, "
                              "simple policy, 200 ms header and idle timeouts{})\n",
                              run.config.concurrency,
                              run.config.dialect == Dialect::openai ? ", OpenAI's chat completions" : "");
  s += "The server replays the simulated tasks' own draws (the plan) and relsim's retrying client runs them.\n"
       "This checks the client: on every task it sends what its policy says on those draws (oracle mismatches\n"
       "0), so its counts equal the simulated ones by construction. The agreement with the exact value comes\n"
       "from the simulation above, not from this run.\n";
  s += fmt::format("{:<12} {:>13}  {:>18}  {:>8}  {:>5}  {:>17}  {:>8}\n", "model", "live done", "95% Wilson",
                   "requests", "wrong", "oracle mismatches", "seconds");
  for (const auto& row : run.rows)
    s += fmt::format("{:<12} {:>13}  [{:.4f}, {:.4f}]  {:>8}  {:>5}  {:>17}  {:>8.2f}\n", row.name,
                     fmt::format("{}/{}", row.live->successes, run.config.tasks), row.live_ci.low, row.live_ci.high,
                     row.live->requests, row.live->wrong, row.live->mismatches.size(), row.live->wall_seconds);
  return s;
}

Json demo_row_json(const DemoRow& row, const FaultWeights& kinds) {
  Json faults = Json::object();
  for (const FaultKind kind : drawn_fault_kinds(kinds))
    faults[std::string(to_string(kind))] = row.sim.faults[static_cast<std::size_t>(kind)];
  Json j{{"q", row.model.q},
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
    j["tight"] = Json{{"tasks", row.tight->tasks},
                      {"successes", row.tight->successes},
                      {"rate", static_cast<double>(row.tight->successes) / static_cast<double>(row.tight->tasks)},
                      {"ci_low", row.tight_ci.low},
                      {"ci_high", row.tight_ci.high},
                      {"covered", row.tight_ci.covers(row.exact.success)}};
  if (row.live)
    j["live"] = Json{{"successes", row.live->successes},
                     {"ci_low", row.live_ci.low},
                     {"ci_high", row.live_ci.high},
                     {"requests", row.live->requests},
                     {"wrong", row.live->wrong},
                     {"mismatches", static_cast<std::int64_t>(row.live->mismatches.size())},
                     {"wall_seconds", row.live->wall_seconds}};
  return j;
}

}  // namespace

Json demo_json(const DemoRun& run) {
  Json j;
  j["p"] = 0.3;
  j["r"] = run.policy.r;
  j["n"] = run.policy.n;
  j["tasks"] = run.config.tasks;
  j["seed"] = run.config.seed;
  j["kinds"] = to_string(run.kinds);
  if (run.config.live) j["dialect"] = std::string(dialect_name(run.config.dialect));  // of the live runs
  for (const DemoRow& row : run.rows) j[row.name] = demo_row_json(row, run.kinds);
  return j;
}

std::string demo_table(const DemoRun& run) {
  std::string s = demo_simulated_table(run);
  if (run.config.live) s += demo_live_table(run);
  return s;
}

}  // namespace relsim
