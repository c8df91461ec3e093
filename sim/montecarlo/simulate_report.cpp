// relsim simulate's run and its JSON and table (simulate_report.hpp).
#include "relsim/montecarlo/simulate_report.hpp"

#include <algorithm>
#include <map>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "relsim/core/bursts.hpp"
#include "relsim/core/count_quantiles.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/exact/fallback_report.hpp"
#include "relsim/exact/report.hpp"
#include "montecarlo/time_intervals.hpp"

namespace relsim {
namespace {

// Outcome class -> count. The simple policy's kernel counts successes and
// env_errors only, so its classes carry no kind.
Json simulate_outcomes_json(const SimResult& sim) {
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

std::int64_t simulate_wrong_count(const SimResult& sim) {
  std::int64_t wrong = 0;
  for (int o = 0; o < kOutcomeClasses; ++o)
    if (is_wrong(outcome_class(o).outcome)) wrong += sim.outcomes[static_cast<std::size_t>(o)];
  for (int x = 0; x < kToolClasses; ++x)
    if (is_wrong(static_cast<ToolClass>(x))) wrong += sim.tool_outcomes[static_cast<std::size_t>(x)];
  return wrong;
}

std::string simulate_percent(double x) { return fmt::format("{:.3g}%", 100.0 * x); }

// The first provider's long-run share of bad requests, for the fallback's report.
double first_p(const SimulateSetup& setup) {
  return setup.time ? setup.time->chain.bad_share() : setup.model.p;
}

// A run with a cooldown, whose exact figures are the fallback's without it.
bool cooled(const SimulateSetup& setup) { return setup.config.fallback && setup.config.fallback->cooldown; }
constexpr const char* kCooldownExact = "a cooldown has no exact value: the exact figures are the fallback's without "
                                       "its cooldown, for comparison";

constexpr const char* kSimulateNoHistograms =
    "a task can send more requests than the simulation keeps counts for (1,000,000): no quantiles";

// The per-task request counts are kept unless a task could send more than
// kMaxHistogramRequests.
bool simulate_histograms_kept(const SimResult& sim) { return !sim.done_by_requests.empty(); }

// Time mode: the wall time's mean and quantiles, with intervals, and the
// exact mean the mean's interval is checked against.
void add_simulate_time_json(Json& j, const SimulateCheck& r) {
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

using SimulateRowSink = std::function<void(std::string_view, const std::string&)>;

// The model's rows: the discrete chain, or the time model.
void simulate_model_rows(const SimulateSetup& setup, const SimulateRowSink& row) {
  const ChainScope scope = setup.time ? setup.time->scope : setup.model.chain;
  const std::string scope_words =
      scope == ChainScope::fresh ? std::string("fresh") : fmt::format("continuous, {} lanes", setup.config.lanes);
  if (setup.time) {
    row("chain", setup.chain_words);
    row("chain scope", scope_words);
    for (const auto& named : time_model_rows(*setup.time)) row(named.first, named.second);
    return;
  }
  for (const auto& named : model_rows(setup.model, scope_words)) row(named.first, named.second);
}

std::string simulate_seconds_interval(const Interval& i) {
  return std::isfinite(i.high) ? fmt::format("[{:.6g}, {:.6g}]", i.low, i.high)
                               : fmt::format("[{:.6g}, +inf)", i.low);
}

void simulate_time_rows(const SimulateSetup& setup, const SimulateCheck& r, const SimulateRowSink& row) {
  const TimeSimResult& t = *r.timed;
  const std::string level = fmt::format("{:g}%", 100.0 * setup.confidence);
  row("mean seconds", fmt::format("{:.6g} ({} interval {}, sd {:.6g})", t.mean_seconds, level,
                                  simulate_seconds_interval(t.mean_interval), t.sd_seconds));
  row("exact mean seconds", fmt::format("{:.12g}", r.exact_mean_seconds));
  if (!cooled(setup)) row("mean covers exact", t.mean_interval.covers(r.exact_mean_seconds) ? "yes" : "no");
  if (t.quantiles_available)
    for (const SimQuantile& q : t.quantiles)
      row(fmt::format("seconds p{}", q.percent),
          fmt::format("{:.6g} ({} interval {})", q.seconds, level, simulate_seconds_interval(q.interval)));
  if (!t.quantiles_note.empty()) row("seconds quantiles", t.quantiles_note);
}

}  // namespace

namespace {

// The cost estimate from the run's tasks by cost (nano-dollars), in key
// order, so the same bits for any thread count; `exact` has the exact means.
CostEstimate cost_estimate(const SimResult& sim, const CostResult& exact, double confidence) {
  std::map<std::int64_t, std::int64_t> all = sim.cost_done;
  for (const auto& [nano, tasks] : sim.cost_failed) all[nano] += tasks;
  long double n = 0.0L, sum = 0.0L, squares = 0.0L, done_n = 0.0L, done_sum = 0.0L;
  for (const auto& [nano, tasks] : all) {
    const long double x = static_cast<long double>(nano) * 1e-9L, k = static_cast<long double>(tasks);
    n += k;
    sum += k * x;
    squares += k * x * x;
  }
  for (const auto& [nano, tasks] : sim.cost_done) {
    done_n += static_cast<long double>(tasks);
    done_sum += static_cast<long double>(tasks) * static_cast<long double>(nano) * 1e-9L;
  }
  CostEstimate c;
  c.mean = static_cast<double>(sum / n);
  c.sd = n > 1.0L ? static_cast<double>(std::sqrt(std::max(0.0L, (squares - sum * sum / n) / (n - 1.0L)))) : 0.0;
  c.interval = detail::normal_mean_interval(c.mean, c.sd, sim.tasks, confidence);
  if (done_n > 0.0L) c.mean_done = static_cast<double>(done_sum / done_n);
  // The smallest cost whose share of the tasks reaches each level.
  const double levels[] = {0.5, 0.9, 0.99};
  double* slots[] = {&c.p50, &c.p90, &c.p99};
  std::int64_t cum = 0;
  int next = 0;
  for (const auto& [nano, tasks] : all) {
    cum += tasks;
    while (next < 3 && static_cast<double>(cum) >= levels[next] * static_cast<double>(sim.tasks))
      *slots[next++] = static_cast<double>(nano) / 1e9;
  }
  c.exact_mean = exact.mean;
  c.exact_mean_done = exact.mean_done;
  return c;
}

// The kinds a run draws: the first provider's and, with a fallback, the second's.
FaultWeights drawn_kinds(const SimConfig& config) {
  FaultWeights both = config.kinds;
  if (config.fallback)
    for (std::size_t k = 0; k < both.weight.size(); ++k) both.weight[k] += config.fallback->kinds.weight[k];
  return both;
}

}  // namespace

SimulateCheck simulate_and_check(const SimulateSetup& setup, const std::function<void()>& simulated) {
  SimulateCheck r;
  ExactOptions exact_options;
  exact_options.distribution = false;
  exact_options.kinds = setup.config.kinds;
  exact_options.tools = setup.config.tools;
  if (setup.time) {
    TimeSimOptions time_options;
    time_options.confidence = setup.confidence;
    r.timed = simulate_time(*setup.time, setup.policy, setup.config, time_options);
    r.sim = r.timed->counts;
    if (simulated) simulated();
    exact_options.billing = setup.config.billing;
    exact_options.fallback = setup.config.fallback;
    // A cooldown has no exact value: the reference is the fallback without it.
    if (exact_options.fallback) exact_options.fallback->cooldown.reset();
    const ExactResult exact = exact_time(*setup.time, setup.policy, exact_options);
    if (exact.cost) r.cost = cost_estimate(r.sim, *exact.cost, setup.confidence);
    r.exact = exact.success;
    r.exact_fault_share = exact.fault_share();
    r.exact_mean_seconds = exact.mean_seconds;
  } else {
    r.sim = simulate(setup.model, setup.policy, setup.config);
    if (simulated) simulated();
    exact_options.billing = setup.config.billing;
    exact_options.fallback = setup.config.fallback;
    const ExactResult exact = exact_matrix(setup.model, setup.policy, exact_options);
    if (exact.cost) r.cost = cost_estimate(r.sim, *exact.cost, setup.confidence);
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

Json simulate_json(const SimulateSetup& setup, const SimulateCheck& r) {
  const Policy& policy = setup.policy;
  const SimResult& sim = r.sim;
  Json j = setup.time ? time_head_json(setup.chain_json, *setup.time, policy) : model_json(setup.model, policy);
  j["lanes"] = setup.config.lanes;
  j["policy"] = std::string(to_string(policy.kind));
  if (setup.config.fallback) j["fallback"] = fallback_json(first_p(setup), *setup.config.fallback);
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
  j["outcomes"] = simulate_outcomes_json(sim);
  j["wrong"] = simulate_wrong_count(sim);
  if (setup.config.tools) add_tool_json(j, *setup.config.tools, r.tools);
  j["bad_requests"] = sim.bad_requests();
  j["fault_share"] = sim.fault_share();
  j["exact_fault_share"] = r.exact_fault_share;
  if (!setup.time) {
    const BurstShape shape = burst_shape(setup.model);
    j["mean_burst_length"] = shape.mean_burst;
    j["mean_gap"] = shape.mean_gap;
  }
  if (simulate_histograms_kept(sim)) {
    j["requests_quantiles"] = outcome_quantiles_json(outcome_quantiles(sim.done_by_requests, sim.env_by_requests));
  } else {
    j["requests_quantiles"] = nullptr;
    j["requests_quantiles_note"] = kSimulateNoHistograms;
  }
  j["kinds"] = to_string(setup.config.kinds);
  Json faults = Json::object();
  Json shares = Json::object();
  for (const FaultKind kind : drawn_fault_kinds(drawn_kinds(setup.config))) {
    const std::string name(to_string(kind));
    faults[name] = sim.faults[static_cast<std::size_t>(kind)];
    shares[name] = r.share(sim.faults[static_cast<std::size_t>(kind)]);
  }
  j["faults"] = std::move(faults);
  j["fault_shares"] = std::move(shares);
  if (r.timed) add_simulate_time_json(j, r);
  if (r.cost) {
    const CostEstimate& c = *r.cost;
    j["billing"] = billing_json(*setup.config.billing, drawn_kinds(setup.config), setup.config.fallback);
    j["cost_mean"] = c.mean;
    j["cost_mean_low"] = c.interval.low;
    j["cost_mean_high"] = c.interval.high;
    j["cost_sd"] = c.sd;
    j["cost_mean_done"] = c.mean_done;  // NaN (no task done) is written as null by dump_json
    j["cost_quantiles"] = Json{{"p50", c.p50}, {"p90", c.p90}, {"p99", c.p99}};
    j["exact_cost_mean"] = c.exact_mean;
    j["exact_cost_mean_done"] = c.exact_mean_done;
    j["cost_covered"] = c.interval.covers(c.exact_mean);
  }
  if (setup.config.fallback) j["second_requests"] = sim.second_requests;
  if (cooled(setup)) {
    // A cooldown has no exact value: the exact fields are the fallback's without it, compared, not checked.
    j["exact_note"] = kCooldownExact;
    for (const char* key : {"covered", "mean_seconds_covered", "cost_covered"})
      if (j.contains(key)) j[key] = nullptr;
  }
  if (!sim.kernel.empty()) j["kernel"] = sim.kernel;  // which code ran; the numbers are the same on every kernel
  return j;
}

std::string simulate_table(const SimulateSetup& setup, const SimulateCheck& r) {
  const SimResult& sim = r.sim;
  std::string s = setup.time ? "relsim simulate (time in seconds)\n" : "relsim simulate\n";
  const SimulateRowSink row = [&](std::string_view name, const std::string& value) {
    s += fmt::format("  {:<24} {}\n", name, value);
  };
  simulate_model_rows(setup, row);
  row("policy", describe(setup.policy));
  if (setup.config.fallback) row("fallback", fallback_words(first_p(setup), *setup.config.fallback));
  row("seed", fmt::format("{}", setup.config.seed));
  row("successes", fmt::format("{}/{} = {:.6g}", sim.successes, sim.tasks, r.rate()));
  row(fmt::format("{:g}% {} interval", 100.0 * setup.confidence, to_string(setup.interval)),
      fmt::format("[{:.4f}, {:.4f}]", r.ci.low, r.ci.high));
  if ((setup.time ? setup.time->scope : setup.model.chain) == ChainScope::continuous)
    row("design effect", fmt::format("{:.4g} (lane correlation {:.4g}; the interval uses tasks / {:.4g})",
                                     r.design_effect, sim.lag_correlation(), std::max(1.0, r.design_effect)));
  row("exact P(success)", fmt::format("{:.12g}", r.exact));
  const Json outcomes = simulate_outcomes_json(sim);
  for (const auto& [name, count] : outcomes.items())
    if (name != "done") row(fmt::format("  {}", name), fmt::format("{}", count.get<std::int64_t>()));
  if (setup.config.tools) tool_table_rows(row, *setup.config.tools, r.tools);
  if (sim.outcomes_by_class)
    row("wrong outcomes", fmt::format("{} (crash, hang, partial_done{})", simulate_wrong_count(sim),
                                      setup.config.tools ? ", side_effect_left, silent_wrong" : ""));
  if (cooled(setup)) row("exact figures", kCooldownExact);
  else row("interval covers exact", r.covered ? "yes" : "no");
  row("requests sent", fmt::format("{} ({:.6g} per task)", sim.requests,
                                   static_cast<double>(sim.requests) / static_cast<double>(sim.tasks)));
  if (setup.config.fallback)
    row("  to the second", fmt::format("{} ({})", sim.second_requests,
                                       simulate_percent(r.share(sim.second_requests))));
  row("requests quantiles",
      simulate_histograms_kept(sim)
          ? count_quantiles_words(*outcome_quantiles(sim.done_by_requests, sim.env_by_requests).all)
          : std::string(kSimulateNoHistograms));
  row("faults injected",
      fmt::format("{} ({} of requests; exact fault share {})", sim.bad_requests(), simulate_percent(sim.fault_share()),
                  simulate_percent(r.exact_fault_share)));
  for (const FaultKind kind : drawn_fault_kinds(drawn_kinds(setup.config))) {
    const std::int64_t count = sim.faults[static_cast<std::size_t>(kind)];
    row(fmt::format("  {}", to_string(kind)),
        fmt::format("{} ({} of requests)", count, simulate_percent(r.share(count))));
  }
  if (r.timed) simulate_time_rows(setup, r, row);
  if (r.cost) {
    const CostEstimate& c = *r.cost;
    row("mean cost", fmt::format("${:.6g} a task ({:g}% interval [${:.6g}, ${:.6g}], sd ${:.6g}), ${:.6g} a done task",
                                 c.mean, 100.0 * setup.confidence, c.interval.low, c.interval.high, c.sd, c.mean_done));
    row("exact mean cost", fmt::format("${:.6g} a task, ${:.6g} a done task{}", c.exact_mean, c.exact_mean_done,
                                       cooled(setup) ? ""
                                       : c.interval.covers(c.exact_mean) ? " (covered)"
                                                                         : " (not covered)"));
    row("cost p50, p90, p99", fmt::format("${:.6g}, ${:.6g}, ${:.6g}", c.p50, c.p90, c.p99));
  }
  return s;
}

const std::vector<std::string> kSimulateMetrics = {"success",      "success_low", "env_error", "requests_per_task",
                                                   "mean_seconds", "p99_seconds"};

Measured simulate_measured(const SimulateCheck& check) {
  Measured m;
  const double tasks = static_cast<double>(check.sim.tasks);
  m.values["success"] = check.rate();
  m.values["success_low"] = check.ci.low;
  // env_error as exact has it: the env_error classes, when the run kept
  // classes; else every task that did not succeed was one (the simple policy
  // without http_400), but for those a tool call ended.
  std::int64_t env = 0;
  if (check.sim.outcomes_by_class) {
    for (int i = 0; i < kOutcomeClasses; ++i)
      if (outcome_class(i).outcome == Outcome::env_error) env += check.sim.outcomes[static_cast<std::size_t>(i)];
  } else {
    env = check.sim.env_errors();
    for (const std::int64_t n : check.sim.tool_outcomes) env -= n;
  }
  m.values["env_error"] = static_cast<double>(env) / tasks;
  m.values["requests_per_task"] = static_cast<double>(check.sim.requests) / tasks;
  if (!check.timed) {
    for (const char* name : {"mean_seconds", "p99_seconds"})
      m.missing[name] = kSecondsNeedTimeMode;
    return m;
  }
  m.values["mean_seconds"] = check.timed->mean_seconds;
  if (check.timed->quantiles_available) m.values["p99_seconds"] = check.timed->quantiles[2].seconds;
  else m.missing["p99_seconds"] = check.timed->quantiles_note;
  return m;
}

}  // namespace relsim
