// relsim simulate: seeded Monte Carlo of any policy (simple, naive, layered or
// budgeted), its confidence interval, and whether that covers the exact value;
// in time mode (--t-good, --t-bad) also the wall time per task, its mean and
// quantiles with intervals.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "relsim/core/bursts.hpp"
#include "relsim/core/count_quantiles.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/exact/report.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/simulate_time.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "relsim/parallel/parallel.hpp"
#include "cli/commands.hpp"
#include "cli/tool_report.hpp"

namespace relsim::cli {
namespace {

// A progress line is shown only on a terminal and only for runs long enough to wait for.
constexpr std::int64_t kProgressMinTasks = 20'000'000;

struct SimulateArgs {
  ModelArgs model;
  TimeArgs time;
  ToolArgs tools;
  long long tasks = 400;
  std::uint64_t seed = rng::kReferenceSeed;
  int lanes = SimConfig{}.lanes;
  int threads = 0;
  std::string interval = "wilson";
  double confidence = 0.95;
  bool json = false;
};

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
  for (int x = 0; x < kToolClasses; ++x)
    if (is_wrong(static_cast<ToolClass>(x))) wrong += sim.tool_outcomes[static_cast<std::size_t>(x)];
  return wrong;
}

std::string percent(double x) { return fmt::format("{:.3g}%", 100.0 * x); }

constexpr const char* kNoHistograms =
    "a task can send more requests than the simulation keeps counts for (1,000,000): no quantiles";

// The per-task request counts are kept unless a task could send more than
// kMaxHistogramRequests.
bool histograms_kept(const SimResult& sim) { return !sim.done_by_requests.empty(); }

// The parsed command: the model, the policy and the run's configuration.
struct SimulateSetup {
  Model model;                    // discrete mode
  std::optional<TimeModel> time;  // time mode
  Json chain_json;                // time mode: the chain as given
  std::string chain_words;
  Policy policy;
  SimConfig config;
  IntervalKind interval = IntervalKind::wilson;
  double confidence = 0.95;
};

// Reads and checks the arguments; the order of the checks decides which
// error a command line with several bad values reports.
SimulateSetup simulate_setup(const SimulateArgs& a) {
  SimulateSetup setup;
  setup.config.tools = a.tools.tool_model(a.time.timed());
  setup.time = a.time.time_model(a.model);
  if (setup.time) {
    setup.chain_json = a.time.chain_json(*setup.time);
    setup.chain_words = a.time.chain_words(*setup.time);
  } else {
    setup.model = a.model.model();
  }
  setup.policy = a.model.policy();
  SimConfig& config = setup.config;
  config.tasks = a.tasks;
  config.seed = a.seed;
  config.lanes = a.lanes;
  config.threads = a.threads;
  config.kinds = a.model.fault_weights();
  setup.interval = parse_interval_kind(a.interval);
  if (!(a.confidence > 0.0 && a.confidence < 1.0))
    throw InputError(fmt::format("confidence = {} is out of range: it must be in (0, 1)", a.confidence));
  setup.confidence = a.confidence;
  validate(config);
  // Under mpirun each rank runs its share of the chunks or lanes; rank 0
  // alone prints.
  config.share = ranks();
  return setup;
}

// How the run reports its progress: to the workbench's hook (hooks(), every
// run, done counted over the whole run), or as a line on stderr for rank 0 on
// a terminal and a run long enough to wait for; or not at all.
enum class Shown { none, line, hook };

// The workbench's hook gets (done, total), strictly increasing; the engines
// call this on OpenMP's thread 0 only, which is the command's thread, so the
// hook may throw Cancelled there (carried out of the region by FirstError).
Shown attach_progress(SimConfig& config) {
  const std::int64_t total = config.tasks;
  if (const ui::CommandHooks* h = hooks(); h && h->progress) {
    auto last = std::make_shared<std::int64_t>(0);
    config.progress = [last, total, report = h->progress](std::int64_t done) {
      if (done <= *last) return;
      *last = std::min(total, done);
      report(*last, total);
    };
    return Shown::hook;
  }
  if (!(terminal_progress() && config.tasks >= kProgressMinTasks)) return Shown::none;
  using Clock = std::chrono::steady_clock;
  auto last = std::make_shared<Clock::time_point>(Clock::now());
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
  return Shown::line;
}

// After the run: the hook's last report is the whole run (thread 0 may have
// run none of the last units); the terminal's line is cleared.
void end_progress(const SimConfig& config, Shown shown) {
  if (shown == Shown::hook) config.progress(config.tasks);
  if (shown == Shown::line) std::fprintf(stderr, "\r\033[K");
}

// What the run found: the simulation, the exact value and the interval.
struct SimulateReport {
  SimResult sim;
  std::optional<TimeSimResult> timed;  // time mode
  double exact_mean_seconds = 0.0;     // time mode
  double exact = 0.0;
  double exact_fault_share = 0.0;
  double design_effect = 1.0;
  Interval ci;
  bool covered = false;
  std::vector<ToolClassEstimate> tools;  // with tool calls

  double rate() const { return static_cast<double>(sim.successes) / static_cast<double>(sim.tasks); }
  // A count's share of the requests sent.
  double share(std::int64_t count) const {
    return sim.requests > 0 ? static_cast<double>(count) / static_cast<double>(sim.requests) : 0.0;
  }
};

// The run (every rank): the simulation, then the exact value its interval
// is checked against.
SimulateReport simulate_and_check(SimulateSetup& setup) {
  const Shown shown = attach_progress(setup.config);
  SimulateReport r;
  ExactOptions exact_options;
  exact_options.distribution = false;
  exact_options.kinds = setup.config.kinds;
  exact_options.tools = setup.config.tools;
  if (setup.time) {
    TimeSimOptions time_options;
    time_options.confidence = setup.confidence;
    r.timed = simulate_time(*setup.time, setup.policy, setup.config, time_options);
    r.sim = r.timed->counts;
    end_progress(setup.config, shown);
    const ExactResult exact = exact_time(*setup.time, setup.policy, exact_options);
    r.exact = exact.success;
    r.exact_fault_share = exact.fault_share();
    r.exact_mean_seconds = exact.mean_seconds;
  } else {
    r.sim = simulate(setup.model, setup.policy, setup.config);
    end_progress(setup.config, shown);
    const ExactResult exact = exact_matrix(setup.model, setup.policy, exact_options);
    r.exact = exact.success;
    r.exact_fault_share = exact.fault_share();
    if (setup.config.tools)
      r.tools = tool_estimates(*setup.config.tools, r.sim, exact, setup.interval, setup.confidence);
  }
  // Tasks of a continuous lane are correlated; the interval then widens by
  // the design effect estimated from the run (1 for the fresh scope).
  const ChainScope scope = setup.time ? setup.time->scope : setup.model.chain;
  r.design_effect = scope == ChainScope::continuous ? r.sim.design_effect() : 1.0;
  r.ci = effective_interval(setup.interval, r.sim.successes, r.sim.tasks, setup.confidence, r.design_effect);
  r.covered = r.ci.covers(r.exact);
  return r;
}

// Time mode: the wall time's mean and quantiles, with intervals, and the
// exact mean the mean's interval is checked against.
void add_time_json(Json& j, const SimulateReport& r) {
  const TimeSimResult& t = *r.timed;
  j["mean_seconds"] = t.mean_seconds;
  j["mean_seconds_ci"] = Json::array({t.mean_interval.low, t.mean_interval.high});  // +inf: null
  j["sd_seconds"] = t.sd_seconds;
  j["exact_mean_seconds"] = r.exact_mean_seconds;
  j["mean_seconds_covered"] = t.mean_interval.covers(r.exact_mean_seconds);
  if (t.quantiles_available) {
    Json point = Json::object(), ci = Json::object();
    for (const SimQuantile& q : t.quantiles) {
      const std::string name = fmt::format("p{}", q.percent);
      point[name] = q.seconds;
      ci[name] = Json::array({q.interval.low, q.interval.high});
    }
    j["seconds_quantiles"] = std::move(point);
    j["seconds_quantiles_ci"] = std::move(ci);
  } else {
    j["seconds_quantiles"] = nullptr;
    j["seconds_quantiles_ci"] = nullptr;
  }
  if (!t.quantiles_note.empty()) j["seconds_quantiles_note"] = t.quantiles_note;
}

Json simulate_json(const SimulateSetup& setup, const SimulateReport& r) {
  const Policy& policy = setup.policy;
  const SimResult& sim = r.sim;
  Json j = setup.time ? time_head_json(setup.chain_json, *setup.time, policy) : model_json(setup.model, policy);
  j["lanes"] = setup.config.lanes;
  j["policy"] = std::string(to_string(policy.kind));
  if (policy.kind != PolicyKind::simple) j["s"] = policy.s;
  if (policy.kind == PolicyKind::budgeted) j["B"] = policy.B;
  j["seed"] = setup.config.seed;
  j["tasks"] = sim.tasks;
  j["successes"] = sim.successes;
  j["env_errors"] = sim.env_errors();
  j["rate"] = r.rate();
  j["interval"] = std::string(to_string(setup.interval));
  j["confidence"] = setup.confidence;
  j["ci_low"] = r.ci.low;
  j["ci_high"] = r.ci.high;
  j["design_effect"] = r.design_effect;
  j["exact"] = r.exact;
  j["covered"] = r.covered;
  j["requests"] = sim.requests;
  j["outcomes"] = outcomes_json(sim);
  j["wrong"] = wrong_count(sim);
  if (setup.config.tools) add_tool_json(j, *setup.config.tools, r.tools);
  j["bad_requests"] = sim.bad_requests();
  j["fault_share"] = sim.fault_share();
  j["exact_fault_share"] = r.exact_fault_share;
  if (!setup.time) {
    const BurstShape shape = burst_shape(setup.model);
    j["mean_burst_length"] = shape.mean_burst;
    j["mean_gap"] = shape.mean_gap;
  }
  if (histograms_kept(sim)) {
    j["requests_quantiles"] = outcome_quantiles_json(outcome_quantiles(sim.done_by_requests, sim.env_by_requests));
  } else {
    j["requests_quantiles"] = nullptr;
    j["requests_quantiles_note"] = kNoHistograms;
  }
  j["kinds"] = to_string(setup.config.kinds);
  Json faults = Json::object();
  Json shares = Json::object();
  for (const FaultKind kind : drawn_kinds(setup.config.kinds)) {
    const std::string name(to_string(kind));
    faults[name] = sim.faults[static_cast<std::size_t>(kind)];
    shares[name] = r.share(sim.faults[static_cast<std::size_t>(kind)]);
  }
  j["faults"] = std::move(faults);
  j["fault_shares"] = std::move(shares);
  if (r.timed) add_time_json(j, r);
  return j;
}

using RowSink = std::function<void(std::string_view, const std::string&)>;

// The model's rows: the discrete chain, or the time model.
void model_rows(const SimulateSetup& setup, const RowSink& row) {
  const ChainScope scope = setup.time ? setup.time->scope : setup.model.chain;
  const std::string scope_words =
      scope == ChainScope::fresh ? std::string("fresh") : fmt::format("continuous, {} lanes", setup.config.lanes);
  if (setup.time) {
    row("chain", setup.chain_words);
    row("chain scope", scope_words);
    for (const auto& named : time_model_rows(*setup.time)) row(named.first, named.second);
    return;
  }
  const Model& model = setup.model;
  row("model", model.independent() ? fmt::format("independent, p = {}", model.p)
                                   : fmt::format("bursty, p = {}, q = {}, p0 = {:.6g}", model.p, model.q, model.p0()));
  const BurstShape shape = burst_shape(model);
  row("mean burst", burst_words(shape));
  row("mean gap", gap_words(shape));
  row("silent steps", fmt::format("b = {}, g = {}", model.b, model.g));
  row("chain scope", scope_words);
}

std::string seconds_interval(const Interval& i) {
  return std::isfinite(i.high) ? fmt::format("[{:.6g}, {:.6g}]", i.low, i.high)
                               : fmt::format("[{:.6g}, +inf)", i.low);
}

void time_rows(const SimulateSetup& setup, const SimulateReport& r, const RowSink& row) {
  const TimeSimResult& t = *r.timed;
  const std::string level = fmt::format("{:g}%", 100.0 * setup.confidence);
  row("mean seconds", fmt::format("{:.6g} ({} interval {}, sd {:.6g})", t.mean_seconds, level,
                                  seconds_interval(t.mean_interval), t.sd_seconds));
  row("exact mean seconds", fmt::format("{:.12g}", r.exact_mean_seconds));
  row("mean covers exact", t.mean_interval.covers(r.exact_mean_seconds) ? "yes" : "no");
  if (t.quantiles_available)
    for (const SimQuantile& q : t.quantiles)
      row(fmt::format("seconds p{}", q.percent),
          fmt::format("{:.6g} ({} interval {})", q.seconds, level, seconds_interval(q.interval)));
  if (!t.quantiles_note.empty()) row("seconds quantiles", t.quantiles_note);
}

std::string simulate_table(const SimulateSetup& setup, const SimulateReport& r) {
  const SimResult& sim = r.sim;
  std::string s = setup.time ? "relsim simulate (time in seconds)\n" : "relsim simulate\n";
  const RowSink row = [&](std::string_view name, const std::string& value) {
    s += fmt::format("  {:<24} {}\n", name, value);
  };
  model_rows(setup, row);
  row("policy", describe(setup.policy));
  row("seed", fmt::format("{}", setup.config.seed));
  row("successes", fmt::format("{}/{} = {:.6g}", sim.successes, sim.tasks, r.rate()));
  row(fmt::format("{:g}% {} interval", 100.0 * setup.confidence, to_string(setup.interval)),
      fmt::format("[{:.4f}, {:.4f}]", r.ci.low, r.ci.high));
  if ((setup.time ? setup.time->scope : setup.model.chain) == ChainScope::continuous)
    row("design effect", fmt::format("{:.4g} (lane correlation {:.4g}; the interval uses tasks / {:.4g})",
                                     r.design_effect, sim.lag_correlation(), std::max(1.0, r.design_effect)));
  row("exact P(success)", fmt::format("{:.12g}", r.exact));
  const Json outcomes = outcomes_json(sim);
  for (const auto& [name, count] : outcomes.items())
    if (name != "done") row(fmt::format("  {}", name), fmt::format("{}", count.get<std::int64_t>()));
  if (setup.config.tools) tool_table_rows(row, *setup.config.tools, r.tools);
  if (sim.outcomes_by_class)
    row("wrong outcomes", fmt::format("{} (crash, hang, partial_done{})", wrong_count(sim),
                                      setup.config.tools ? ", side_effect_left, silent_wrong" : ""));
  row("interval covers exact", r.covered ? "yes" : "no");
  row("requests sent", fmt::format("{} ({:.6g} per task)", sim.requests,
                                   static_cast<double>(sim.requests) / static_cast<double>(sim.tasks)));
  row("requests quantiles", histograms_kept(sim)
                                ? count_quantiles_words(*outcome_quantiles(sim.done_by_requests, sim.env_by_requests).all)
                                : std::string(kNoHistograms));
  row("faults injected",
      fmt::format("{} ({} of requests; exact fault share {})", sim.bad_requests(), percent(sim.fault_share()),
                  percent(r.exact_fault_share)));
  for (const FaultKind kind : drawn_kinds(setup.config.kinds)) {
    const std::int64_t count = sim.faults[static_cast<std::size_t>(kind)];
    row(fmt::format("  {}", to_string(kind)), fmt::format("{} ({} of requests)", count, percent(r.share(count))));
  }
  if (r.timed) time_rows(setup, r, row);
  return s;
}

int run_simulate(const SimulateArgs& a) {
  SimulateSetup setup = simulate_setup(a);
  const SimulateReport report = simulate_and_check(setup);
  if (!setup.config.share.root()) return 0;
  if (a.json) out() << dump_json(simulate_json(setup, report)) << "\n";
  else out() << simulate_table(setup, report);
  return 0;
}

}  // namespace

Runner add_simulate(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand("simulate", "seeded Monte Carlo of any policy, with a confidence interval");
  add_model_options(*cmd, args->model);
  add_policy_options(*cmd, args->model);
  add_time_options(*cmd, args->time);
  add_tool_options(*cmd, args->tools);
  cmd->add_option("--tasks", args->tasks, fmt::format("tasks to simulate, in [1, {}]", kMaxTasks))
      ->capture_default_str();
  add_seed_option(*cmd, args->seed, "Philox key");
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
