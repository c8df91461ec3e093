// relsim simulate: seeded Monte Carlo of the simple policy, its confidence
// interval, and whether that covers the exact value.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <limits>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "relsim/core/error.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/parallel/parallel.hpp"
#include "relsim/core/report.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim::cli {
namespace {

// Progress is shown only on a terminal and only for runs long enough to wait for.
constexpr std::int64_t kProgressMinTasks = 20'000'000;

struct SimulateArgs {
  ModelArgs model;
  long long tasks = 400;
  std::string seed = "20261001";
  int lanes = SimConfig{}.lanes;
  int threads = 0;
  std::string interval = "wilson";
  double confidence = 0.95;
  bool json = false;
};

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
    throw InputError(fmt::format("seed = '{}' is not an integer in [0, {}]", text,
                                 std::numeric_limits<std::uint64_t>::max()));
  return value;
}

// Outcome class -> count. The simple policy's kernel counts successes and
// env_errors only, so its classes carry no kind.
Json outcomes_json(const SimResult& sim) {
  Json out = Json::object();
  if (!sim.outcomes_by_class) {
    out["done"] = sim.successes;
    out["env_error"] = sim.env_errors();
    return out;
  }
  for (int o = 0; o < kOutcomeClasses; ++o)
    if (sim.outcomes[static_cast<std::size_t>(o)] > 0 || o == 0)
      out[outcome_class(o).name()] = sim.outcomes[static_cast<std::size_t>(o)];
  return out;
}

std::int64_t wrong_count(const SimResult& sim) {
  std::int64_t wrong = 0;
  for (int o = 0; o < kOutcomeClasses; ++o)
    if (is_wrong(outcome_class(o).outcome)) wrong += sim.outcomes[static_cast<std::size_t>(o)];
  return wrong;
}

std::string percent(double x) { return fmt::format("{:.3g}%", 100.0 * x); }

int run_simulate(const SimulateArgs& a) {
  const Model model = a.model.model();
  const Policy policy = a.model.policy();
  SimConfig config;
  config.tasks = a.tasks;
  config.seed = parse_seed(a.seed);
  config.lanes = a.lanes;
  config.threads = a.threads;
  config.kinds = a.model.fault_weights();
  const IntervalKind interval = parse_interval_kind(a.interval);
  if (!(a.confidence > 0.0 && a.confidence < 1.0))
    throw InputError(fmt::format("confidence = {} is out of range: it must be in (0, 1)", a.confidence));
  validate(config);
  // Under mpirun each rank runs its share of the chunks or lanes; rank 0
  // alone prints.
  config.share = parallel::world();

  const bool show_progress = config.share.root() && ::isatty(STDERR_FILENO) && config.tasks >= kProgressMinTasks;
  if (show_progress) {
    using Clock = std::chrono::steady_clock;
    auto last = std::make_shared<Clock::time_point>(Clock::now());
    const std::int64_t total = config.tasks;
    const std::int64_t ranks = config.share.ranks;
    config.progress = [last, total, ranks](std::int64_t mine) {
      // Ranks run shares of equal size: rank 0's count times the ranks.
      const std::int64_t done = std::min(total, mine * ranks);
      const auto now = Clock::now();
      if (now - *last < std::chrono::milliseconds(500)) return;
      *last = now;
      std::fprintf(stderr, "\rrelsim: simulated %lld of %lld tasks (%.0f%%)", static_cast<long long>(done),
                   static_cast<long long>(total), 100.0 * static_cast<double>(done) / static_cast<double>(total));
      std::fflush(stderr);
    };
  }
  const SimResult sim = simulate(model, policy, config);
  if (show_progress) std::fprintf(stderr, "\r\033[K");

  ExactOptions exact_options;
  exact_options.distribution = false;
  exact_options.kinds = config.kinds;
  const double exact = exact_matrix(model, policy, exact_options).success;
  // Tasks of a continuous lane are correlated; the interval then widens by
  // the design effect estimated from the run (1 for the fresh scope).
  const double design_effect = model.chain == ChainScope::continuous ? sim.design_effect() : 1.0;
  const Interval ci = effective_interval(interval, sim.successes, sim.tasks, a.confidence, design_effect);
  const bool covered = ci.covers(exact);
  if (!config.share.root()) return 0;
  const double rate = static_cast<double>(sim.successes) / static_cast<double>(sim.tasks);
  const double requests = static_cast<double>(sim.requests);
  const auto share = [&](std::int64_t count) { return sim.requests > 0 ? static_cast<double>(count) / requests : 0.0; };

  if (a.json) {
    Json j = model_json(model, policy);
    j["lanes"] = config.lanes;
    j["policy"] = std::string(to_string(policy.kind));
    if (policy.kind != PolicyKind::simple) j["s"] = policy.s;
    if (policy.kind == PolicyKind::budgeted) j["B"] = policy.B;
    j["seed"] = config.seed;
    j["tasks"] = sim.tasks;
    j["successes"] = sim.successes;
    j["env_errors"] = sim.env_errors();
    j["rate"] = rate;
    j["interval"] = std::string(to_string(interval));
    j["confidence"] = a.confidence;
    j["ci_low"] = ci.low;
    j["ci_high"] = ci.high;
    j["design_effect"] = design_effect;
    j["exact"] = exact;
    j["covered"] = covered;
    j["requests"] = sim.requests;
    j["outcomes"] = outcomes_json(sim);
    j["wrong"] = wrong_count(sim);
    j["bad_requests"] = sim.bad_requests();
    j["kinds"] = to_string(config.kinds);
    Json faults = Json::object();
    Json shares = Json::object();
    for (int k = 0; k < kFaultKinds; ++k) {
      if (!(config.kinds.weight[static_cast<std::size_t>(k)] > 0.0)) continue;
      const std::string name(to_string(static_cast<FaultKind>(k)));
      faults[name] = sim.faults[static_cast<std::size_t>(k)];
      shares[name] = share(sim.faults[static_cast<std::size_t>(k)]);
    }
    j["faults"] = std::move(faults);
    j["fault_shares"] = std::move(shares);
    std::cout << dump_json(j) << "\n";
    return 0;
  }

  std::string s = "relsim simulate\n";
  const auto row = [&](std::string_view name, const std::string& value) {
    s += fmt::format("  {:<24} {}\n", name, value);
  };
  row("model", model.independent() ? fmt::format("independent, p = {}", model.p)
                                   : fmt::format("bursty, p = {}, q = {}, p0 = {:.6g}", model.p, model.q, model.p0()));
  row("silent steps", fmt::format("b = {}, g = {}", model.b, model.g));
  row("chain scope", model.chain == ChainScope::fresh ? std::string("fresh")
                                                      : fmt::format("continuous, {} lanes", config.lanes));
  row("policy", describe(policy));
  row("seed", fmt::format("{}", config.seed));
  row("successes", fmt::format("{}/{} = {:.6g}", sim.successes, sim.tasks, rate));
  row(fmt::format("{:g}% {} interval", 100.0 * a.confidence, to_string(interval)),
      fmt::format("[{:.4f}, {:.4f}]", ci.low, ci.high));
  if (model.chain == ChainScope::continuous)
    row("design effect", fmt::format("{:.4g} (lane correlation {:.4g}; the interval uses tasks / {:.4g})",
                                     design_effect, sim.lag_correlation(), std::max(1.0, design_effect)));
  row("exact P(success)", fmt::format("{:.12g}", exact));
  const Json outcomes = outcomes_json(sim);
  for (const auto& [name, count] : outcomes.items())
    if (name != "done") row(fmt::format("  {}", name), fmt::format("{}", count.get<std::int64_t>()));
  if (sim.outcomes_by_class) row("wrong outcomes", fmt::format("{} (crash, hang, partial_done)", wrong_count(sim)));
  row("interval covers exact", covered ? "yes" : "no");
  row("requests sent", fmt::format("{} ({:.6g} per task)", sim.requests, requests / static_cast<double>(sim.tasks)));
  row("faults injected", fmt::format("{} ({} of requests)", sim.bad_requests(), percent(share(sim.bad_requests()))));
  for (int k = 0; k < kFaultKinds; ++k) {
    if (!(config.kinds.weight[static_cast<std::size_t>(k)] > 0.0)) continue;
    const std::int64_t count = sim.faults[static_cast<std::size_t>(k)];
    row(fmt::format("  {}", to_string(static_cast<FaultKind>(k))),
        fmt::format("{} ({} of requests)", count, percent(share(count))));
  }
  std::cout << s;
  return 0;
}

}  // namespace

Runner add_simulate(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand("simulate", "seeded Monte Carlo of any policy, with a confidence interval");
  add_model_options(*cmd, args->model);
  add_policy_options(*cmd, args->model);
  cmd->add_option("--tasks", args->tasks, fmt::format("tasks to simulate, in [1, {}]", kMaxTasks))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Philox key, an integer in [0, 2^64 - 1]")->capture_default_str();
  cmd->add_option("--lanes", args->lanes,
                  fmt::format("continuous scope: independent chains, task i in lane i mod lanes, in [1, {}]",
                              kMaxLanes))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "OpenMP threads (0: OpenMP's default); never changes the output")
      ->capture_default_str();
  cmd->add_option("--interval", args->interval, "wilson, clopper-pearson or jeffreys")->capture_default_str();
  cmd->add_option("--confidence", args->confidence, "confidence level of the interval, in (0, 1)")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object instead of a table");
  return [args] { return run_simulate(*args); };
}

}  // namespace relsim::cli
